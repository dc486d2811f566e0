package rank

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// runLocal executes one job in-process and returns rank 0's outcome.
func runLocal(t *testing.T, roles spmd.Roles, cfg JobConfig) *Outcome {
	t.Helper()
	if cfg.Engine.Workers == 0 {
		cfg.Engine.Workers = 2
	}
	if cfg.Engine.Batch == 0 {
		cfg.Engine.Batch = 64
	}
	out, err := runJob(roles, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runJob executes one job over the in-process fabric and returns rank 0's
// outcome and the job's first error.
func runJob(roles spmd.Roles, cfg JobConfig) (*Outcome, error) {
	cluster := memfab.NewCluster()
	outs := make([]*Outcome, roles.Size())
	err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		c := cfg
		c.KeepGraph = true // the tests verify against the whole graph
		c.Open = func(vc verbs.Config) (verbs.Network, error) { return memfab.Open(cluster, w, vc) }
		out, err := Execute(w, c)
		outs[w.Rank()] = out
		return err
	})
	return outs[0], err
}

// Each kernel, run through the engine over the in-process fabric, agrees
// with its serial verifier and with the reference implementation, for
// several role layouts.
func TestKernelsAgreeWithReference(t *testing.T) {
	layouts := []spmd.Roles{{CN: 1, MN: 1}, {CN: 2, MN: 1}, {CN: 3, MN: 2}}
	graphs := []string{"kron:10", "uniform:500:3000"}
	for _, gs := range graphs {
		for _, roles := range layouts {
			for _, a := range Algorithms {
				for name, ec := range engineVariants {
					checkKernel(t, roles, gs, a, name, ec)
				}
			}
		}
	}
}

// engineVariants are the modes and ablations every kernel must agree in;
// tiny mailboxes force spills and every collaborative path.
var engineVariants = map[string]Config{
	"dmg":          {},
	"naive":        {Mode: ModeNaive},
	"famgraph":     {Mode: ModeFAMGraph},
	"no-collab":    {NoCollab: true},
	"no-refrd":     {NoRefRD: true},
	"no-valrd":     {NoValRD: true},
	"no-merge":     {NoMerge: true},
	"no-doorbell":  {NoDoorbell: true},
	"refrd-all":    {RefRDMin: 1},
	"valrd-at-mn":  {ValRDApply: "mn"},
	"tiny-mailbox": {ValMailbox: 24, RefMailbox: 48, RefRDMin: 2},
	"one-worker":   {Workers: 1, Batch: 7},
	"puller":       {RefRDPuller: true, RefRDMin: 1},
	"puller-tiny":  {RefRDPuller: true, ValMailbox: 24, RefMailbox: 48, RefRDMin: 2},
}

func checkKernel(t *testing.T, roles spmd.Roles, gs, a, name string, ec Config) {
	{
		t.Run(fmt.Sprintf("%s/%s/%s/%s", gs, roles, a, name), func(t *testing.T) {
			{
				{
					out := runLocal(t, roles, JobConfig{Algo: a, Graph: gs, Csr: csr.Options{Seed: 7}, Engine: ec})
					g, v := out.Graph, out.Result.Values
					if uint32(len(v)) != g.N {
						t.Fatalf("%d values for %d vertices", len(v), g.N)
					}
					var err error
					switch a {
					case "pagerank":
						err = algo.VerifyPageRank(g, 20, 0.85, algo.Floats(v))
					case "bfs":
						err = algo.VerifyBFS(g, out.Source, algo.Ints(v))
						ref := algo.ReferenceBFS(g, out.Source)
						for i := range ref {
							if ref[i] != int64(v[i]) {
								t.Fatalf("bfs vertex %d: %d, reference %d", i, v[i], ref[i])
							}
						}
					case "wcc":
						err = algo.VerifyWCC(g, v)
					case "sssp":
						err = algo.VerifySSSP(g, out.Source, algo.Floats(v))
						ref := algo.ReferenceSSSP(g, out.Source)
						for i := range ref {
							if got := math.Float64frombits(v[i]); got != ref[i] && math.Abs(got-ref[i]) > 1e-9*ref[i] {
								t.Fatalf("sssp vertex %d: %g, reference %g", i, got, ref[i])
							}
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					if len(out.Result.Iterations) == 0 || out.Result.Verbs.Reads == 0 {
						t.Fatalf("no iterations or no reads: %+v", out.Result)
					}
					checkPaths(t, roles, a, ec, out)
				}
			}
		})
	}
}

// checkPaths asserts that the update paths the variant promises were used.
func checkPaths(t *testing.T, roles spmd.Roles, a string, ec Config, out *Outcome) {
	t.Helper()
	r := out.Result
	u := r.Updates
	if (a == "bfs" || a == "sssp") && out.Graph.Degree(out.Source) == 0 {
		return // nothing to propagate
	}
	if u.Candidates == 0 {
		t.Fatalf("no update candidates: %+v", u)
	}
	if roles.CN == 1 {
		if u.Local != u.Candidates {
			t.Errorf("one CN: %d of %d candidates local", u.Local, u.Candidates)
		}
		return
	}
	switch {
	case ec.Mode == ModeFAMGraph:
		if u.Direct != 0 || u.ValRD != 0 || r.Verbs.Atomics() != 0 {
			t.Errorf("famgraph used remote updates: %+v, %d atomics", u, r.Verbs.Atomics())
		}
	case ec.Mode == ModeNaive || ec.NoCollab:
		if u.ValRD != 0 || u.RefRD != 0 || u.Direct == 0 {
			t.Errorf("%+v: want direct updates only: %+v", ec, u)
		}
		if ec.Mode == ModeNaive && r.Verbs.Doorbells < r.Verbs.Atomics() {
			t.Errorf("naive batched its atomics: %d doorbells for %d atomics", r.Verbs.Doorbells, r.Verbs.Atomics())
		}
	case a == "pagerank": // every iteration dense
		if !ec.NoValRD && u.ValRD == 0 {
			t.Errorf("no ValRD pairs: %+v", u)
		}
		if ec.ValMailbox != 0 && u.Spills == 0 {
			t.Errorf("tiny mailboxes but no spills: %+v", u)
		}
		if ec.ValRDApply == "mn" && !ec.NoValRD && u.MNApplied == 0 {
			t.Errorf("ValRD at MN but no pairs applied there: %+v", u)
		}
		if ec.ValRDApply == "" && !ec.NoValRD && (u.MNApplied == 0 || !strings.Contains(r.ValRDApply, "auto")) {
			t.Errorf("auto ValRD placement never tried the MNs: %+v, %q", u, r.ValRDApply)
		}
		if ec.ValRDApply == "cn" && u.MNApplied != 0 {
			t.Errorf("ValRD at CN but MNs applied pairs: %+v", u)
		}
		if ec.RefRDMin == 1 && u.RefRD == 0 && !ec.NoRefRD {
			t.Errorf("RefRD from 1 edge but nothing sent by reference: %+v", u)
		}
	}
}

func TestBadParameters(t *testing.T) {
	for _, tc := range []struct {
		cfg  JobConfig
		want string
	}{
		{JobConfig{Algo: "louvain", Graph: "kron:4"}, "unknown algorithm"},
		{JobConfig{Algo: "bfs", Graph: "kron:4", Source: 1 << 40, HasSource: true}, "not a vertex"},
		{JobConfig{Algo: "pagerank", Graph: "kron:4", Damping: 1.5}, "damping"},
		{JobConfig{Algo: "bfs", Graph: "kron:8", MNMem: 64}, "--mn-mem"},
	} {
		_, err := runJob(spmd.Roles{CN: 1, MN: 1}, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
