package launch_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr/csrtest"
	"github.com/dmg-hpc/dmg/launch"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

var kernels = []struct {
	flag string
	kind algo.Kind
}{{"bfs", algo.KindBFS}, {"pagerank", algo.KindPR}, {"wcc", algo.KindWCC}, {"sssp", algo.KindSSSP}, {"cdlp", algo.KindCDLP}, {"lcc", algo.KindLCC}}

// refusals are the variants a kernel does not run in, by the flags that
// make them, and the words of the refusal: CDLP's multiset of labels needs,
// in the design's mode, the collaborative update's mailboxes applied by
// the owner (the baselines pull the labels).
var refusals = map[string]struct {
	flags []string
	why   string
}{
	"cdlp": {[]string{"--no-collab", "--no-valrd", "--valrd-apply mn"}, "multiset"},
}

// refused tells the variants a kernel does not run in.
func refused(algoName string, flags []string) bool {
	f := strings.Join(flags, " ")
	for _, x := range refusals[algoName].flags {
		if strings.Contains(f, x) {
			return true
		}
	}
	return false
}

// checkRefused requires the one-line bad-input refusal of a variant.
func checkRefused(t *testing.T, algoName string, flags []string, code int, stderr string) {
	t.Helper()
	why := refusals[algoName].why
	if code != launch.ExitBadInput || !strings.Contains(stderr, why) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("%v: exit %d, stderr %q; want exit %d and one line naming the %s", flags, code, stderr, launch.ExitBadInput, why)
	}
}

type gaCase struct {
	dataset, props, expected string
	algo                     string
	kind                     algo.Kind
}

// gaCases lists every (dataset, kernel) with a Graphalytics reference output.
func gaCases(t *testing.T) []gaCase {
	var cs []gaCase
	for _, ds := range csrtest.GraphalyticsDatasets(t) {
		dir := csrtest.GraphalyticsDir(t, ds)
		for _, k := range kernels {
			exp := filepath.Join(dir, ds+"-"+k.kind.String())
			if _, err := os.Stat(exp); err == nil {
				cs = append(cs, gaCase{ds, filepath.Join(dir, ds+".properties"), exp, k.flag, k.kind})
			}
		}
	}
	if len(cs) < 8 {
		t.Fatalf("found only %d Graphalytics reference outputs", len(cs))
	}
	return cs
}

// validate checks an --out file against the reference with the
// Graphalytics rules.
func validate(t *testing.T, c gaCase, out string) {
	t.Helper()
	exp, err := algo.ReadOutput(c.expected, c.kind)
	if err != nil {
		t.Fatal(err)
	}
	got, err := algo.ReadOutput(out, c.kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := algo.Validate(c.kind, exp, got); err != nil {
		t.Fatalf("%s %s: %v", c.dataset, c.algo, err)
	}
}

// sameResults: bit-identical for BFS/WCC/SSSP, PageRank within 1e-12.
func sameResults(t *testing.T, c gaCase, a, b string) {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if c.kind != algo.KindPR {
		if string(x) != string(y) {
			t.Fatalf("%s %s: results differ between layouts", c.dataset, c.algo)
		}
		return
	}
	lx, ly := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
	if len(lx) != len(ly) {
		t.Fatalf("%d vs %d lines", len(lx), len(ly))
	}
	for i := range lx {
		fx, fy := strings.Fields(lx[i]), strings.Fields(ly[i])
		if len(fx) != 2 || len(fy) != 2 || fx[0] != fy[0] {
			if len(fx) == 0 && len(fy) == 0 {
				continue
			}
			t.Fatalf("line %d: %q vs %q", i+1, lx[i], ly[i])
		}
		vx, _ := strconv.ParseFloat(fx[1], 64)
		vy, _ := strconv.ParseFloat(fy[1], 64)
		if math.Abs(vx-vy) > 1e-12*math.Abs(vx) {
			t.Fatalf("vertex %s: PageRank %g vs %g across layouts", fx[0], vx, vy)
		}
	}
}

var layouts = []struct {
	roles string
	np    int
}{{"cn:1,mn:1", 2}, {"cn:2,mn:1", 3}, {"cn:3,mn:2", 5}}

// Every kernel on every Graphalytics dataset with a reference output, for
// three role layouts, in-process.
func TestGraphalyticsLocal(t *testing.T) {
	for _, c := range gaCases(t) {
		t.Run(c.dataset+"/"+c.algo, func(t *testing.T) {
			// In-process runs of their own: the cases share nothing and
			// mostly wait on their processes' start-up, so they overlap.
			t.Parallel()
			var outs []string
			for _, l := range layouts {
				out := filepath.Join(t.TempDir(), "out")
				_, errOut, code := runLocal(t, "--local", "--roles", l.roles, "run", "--algo", c.algo, "--graph", c.props, "--out", out, "--verify")
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", l.roles, code, errOut)
				}
				validate(t, c, out)
				outs = append(outs, out)
			}
			// Every mode and ablation, on one layout with several CNs.
			for _, v := range variantFlags {
				out := filepath.Join(t.TempDir(), "out")
				args := append([]string{"--local", "--roles", "cn:3,mn:2", "run", "--algo", c.algo, "--graph", c.props, "--out", out, "--verify"}, v...)
				_, errOut, code := runLocal(t, args...)
				if refused(c.algo, v) {
					checkRefused(t, c.algo, v, code, errOut)
					continue
				}
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", v, code, errOut)
				}
				validate(t, c, out)
				outs = append(outs, out)
			}
			for _, o := range outs[1:] {
				sameResults(t, c, outs[0], o)
			}
		})
	}
}

// variantFlags are the modes and ablations every kernel must agree in (the
// update coordinator's without the value pull, which would take their
// dense iterations).
var variantFlags = append(sharedVariantFlags("naive", "famgraph", "dmg-direct", "dmg-valrd", "dmg-refrd"), [][]string{
	{"--no-inplace"}, {"--no-merge"}, {"--no-doorbell"},
	{"--refrd-min", "1", "--valrd-apply", "mn", "--no-value-pull"}, {"--refrd-puller", "--refrd-min", "1", "--no-value-pull"}, {"--entry-size", "16"}, {"--entry-size", "64", "--inflight", "3"},
	{"--hub-degree", "2", "--workers", "3"}, {"--hub-degree", "2", "--no-hubsplit", "--no-steal"}, {"--mode", "naive", "--hub-degree", "2"},
	{"--no-pull"}, {"--no-bottom-up"}, {"--dense-threshold", "0.000001"}, {"--dense-threshold", "1000000000"}, {"--merge-gap", "1"},
	{"--remote-pull", "--pull-threshold", "1000000000", "--dense-threshold", "1000000000"}, {"--sparse-valrd-min", "1000000", "--dense-threshold", "0.000001"},
	{"--compress"}, {"--compress", "--hub-degree", "2", "--workers", "3"},
}...)

// sharedVariantFlags are the flags of the shared variants named
// (rank.Variants: the baselines, the breakdown).
func sharedVariantFlags(names ...string) [][]string {
	vs, err := rank.VariantsNamed(names...)
	if err != nil {
		panic(err)
	}
	var out [][]string
	for _, v := range vs {
		out = append(out, v.Flags())
	}
	return out
}

// The same under mpirun over libfabric's shm provider, and one layout over
// tcp with packed lists.
func TestGraphalyticsMpirun(t *testing.T) {
	parallelMpirun(t)
	for _, c := range gaCases(t) {
		t.Run(c.dataset+"/"+c.algo, func(t *testing.T) {
			var outs []string
			run := func(roles string, np int, fabric string, more ...string) {
				out := filepath.Join(t.TempDir(), "out")
				res := mpitest.Exec(t, np, nil, dmgBin(t), append([]string{"--roles", roles, "run", "--fabric", fabric,
					"--algo", c.algo, "--graph", c.props, "--out", out, "--verify"}, more...)...)
				if res.ExitCode != 0 {
					t.Fatalf("%s over %s: exit %d\n%s%s", roles, fabric, res.ExitCode, res.Stdout, res.Stderr)
				}
				if !strings.Contains(res.Stdout, "over fabric/"+fabric) && !strings.Contains(res.Stdout, fabric) {
					t.Errorf("report does not name the %s provider:\n%s", fabric, res.Stdout)
				}
				validate(t, c, out)
				outs = append(outs, out)
			}
			for _, l := range layouts {
				run(l.roles, l.np, "shm")
			}
			run("cn:2,mn:1", 3, "tcp", "--compress") // packed lists over a network
			run("cn:2,mn:2", 4, "cxl")
			for _, o := range outs[1:] {
				sameResults(t, c, outs[0], o)
			}
		})
	}
}

// Every mode and ablation on the cxl backend, under mpirun (one layout,
// each kernel on the directed example, whose lists exercise every path).
func TestGraphalyticsCXLVariants(t *testing.T) {
	parallelMpirun(t)
	for _, c := range gaCases(t) {
		if c.dataset != "example-directed" {
			continue
		}
		t.Run(c.algo, func(t *testing.T) {
			var outs []string
			for _, v := range variantFlags {
				out := filepath.Join(t.TempDir(), "out")
				args := append([]string{"--roles", "cn:2,mn:1", "run", "--fabric", "cxl", "--cxl-dir", t.TempDir(),
					"--algo", c.algo, "--graph", c.props, "--out", out, "--verify"}, v...)
				res := mpitest.Exec(t, 3, nil, dmgBin(t), args...)
				if refused(c.algo, v) {
					checkRefused(t, c.algo, v, res.ExitCode, res.Stderr)
					continue
				}
				if res.ExitCode != 0 {
					t.Fatalf("%v: exit %d\n%s%s", v, res.ExitCode, res.Stdout, res.Stderr)
				}
				validate(t, c, out)
				outs = append(outs, out)
			}
			for _, o := range outs[1:] {
				sameResults(t, c, outs[0], o)
			}
		})
	}
}
