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
	cluster := memfab.NewCluster()
	outs := make([]*Outcome, roles.Size())
	err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		c := cfg
		c.Open = func(vc verbs.Config) (verbs.Network, error) { return memfab.Open(cluster, w, vc) }
		c.Engine.Workers = 2
		c.Engine.Batch = 64
		out, err := Execute(w, c)
		outs[w.Rank()] = out
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return outs[0]
}

func floats(v []uint64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = math.Float64frombits(x)
	}
	return f
}

func ints(v []uint64) []int64 {
	f := make([]int64, len(v))
	for i, x := range v {
		f[i] = int64(x)
	}
	return f
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
				t.Run(fmt.Sprintf("%s/%s/%s", gs, roles, a), func(t *testing.T) {
					out := runLocal(t, roles, JobConfig{Algo: a, Graph: gs, Csr: csr.Options{Seed: 7}})
					g, v := out.Graph, out.Result.Values
					if uint32(len(v)) != g.N {
						t.Fatalf("%d values for %d vertices", len(v), g.N)
					}
					var err error
					switch a {
					case "pagerank":
						err = algo.VerifyPageRank(g, 20, 0.85, floats(v))
					case "bfs":
						err = algo.VerifyBFS(g, out.Source, ints(v))
						ref := algo.ReferenceBFS(g, out.Source)
						for i := range ref {
							if ref[i] != int64(v[i]) {
								t.Fatalf("bfs vertex %d: %d, reference %d", i, v[i], ref[i])
							}
						}
					case "wcc":
						err = algo.VerifyWCC(g, v)
					case "sssp":
						err = algo.VerifySSSP(g, out.Source, floats(v))
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
				})
			}
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
		cluster := memfab.NewCluster()
		err := spmd.RunLocal(2, func(rt spmd.Runtime) error {
			w, err := spmd.NewWorld(rt, spmd.Roles{CN: 1, MN: 1})
			if err != nil {
				return err
			}
			c := tc.cfg
			c.Open = func(vc verbs.Config) (verbs.Network, error) { return memfab.Open(cluster, w, vc) }
			_, err = Execute(w, c)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
