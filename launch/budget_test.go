package launch_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

// budgetRun is what a budget test reads of a run's report.
type budgetRun struct {
	RSS      uint64 `json:"cn_peak_rss_bytes"`
	Budget   uint64 `json:"cn_mem_bytes"`
	Windows  int    `json:"load_windows"`
	Verified bool   `json:"verified"`
	// BySample is what a sampled check checked (the whole graph past
	// the budget).
	BySample string `json:"verified_by_sample"`
}

// runBudget runs PageRank on graph under mpirun with cn:2,mn:2 and the
// extra flags, and returns its report.
func runBudget(t *testing.T, dir, graph string, extra ...string) budgetRun {
	t.Helper()
	js := filepath.Join(dir, "report.json")
	args := append([]string{"--roles", "cn:2,mn:2", "--json", js, "run", "--algo", "pagerank", "--iterations", "3", "--graph", graph}, extra...)
	res := mpitest.Exec(t, 4, nil, dmgBin(t), args...)
	if res.ExitCode != 0 {
		t.Fatalf("%s %v: exit %d\n%s%s", graph, extra, res.ExitCode, res.Stdout, res.Stderr)
	}
	var r budgetRun
	if err := readJSON(js, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A compute node keeps to --cn-mem while it loads, whatever the input:
// a generator and a text edge list read staged, a binary edge list
// every CN reads whole (as every input but those two is). Under
// a budget of 8 MiB each kron:18 share (about 16 MB of rows and 16 MB
// of edges a CN) is built window by window, its result passes the
// sampled check (the whole graph is past the budget: TestVerifyBySample),
// and each CN's peak RSS is at most that of the same job on
// kron:4 (the process: Go, MPI, two fabric networks) plus the budget and
// a quarter, plus 48 MiB that no budget governs (the staged read's I/O
// buffers, 4 MiB each, the staging network's own, the text parser's
// blocks in flight). The bound is no formality: kron:19 under the
// default budget, its shares built whole, takes more.
func TestCNMemBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	dir := t.TempDir()
	el := writeSparseEdges(t, dir, "g.el", 18, 1)
	bel := writeSparseEdges(t, dir, "g.bel", 18, 1)
	const budget = 8 << 20
	const fixed = 48 << 20
	base := runBudget(t, dir, "kron:4", "--cn-mem", "8MiB")
	bound := base.RSS + budget*5/4 + fixed
	for _, c := range []struct {
		name  string
		graph string
		extra []string
	}{
		{"generator staged", "kron:18", nil},
		{"text staged", el, nil},
		{"binary", bel, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBudget(t, dir, c.graph, append([]string{"--cn-mem", "8MiB", "--verify"}, c.extra...)...)
			t.Logf("peak RSS per CN %d MiB (bound %d MiB: kron:4's %d MiB plus budget and fixed), %d windows", r.RSS>>20, bound>>20, base.RSS>>20, r.Windows)
			if !r.Verified || r.BySample == "" || r.Budget != budget || r.Windows < 2 {
				t.Fatalf("verified %v (by sample: %q), budget %d, %d windows; want verified by a sample, %d, at least 2", r.Verified, r.BySample, r.Budget, r.Windows, budget)
			}
			if r.RSS > bound {
				t.Fatalf("a CN's peak RSS is %d MiB under --cn-mem 8MiB; want at most %d MiB", r.RSS>>20, bound>>20)
			}
			if strings.Contains(c.name, "generator staged") {
				whole := runBudget(t, dir, "kron:19", c.extra...)
				t.Logf("kron:19, default budget: peak RSS per CN %d MiB, %d windows", whole.RSS>>20, whole.Windows)
				if whole.RSS <= bound {
					t.Fatalf("kron:19 under the default budget: a CN's peak RSS is %d MiB, within the bound of %d MiB: the bound tells nothing", whole.RSS>>20, bound>>20)
				}
			}
		})
	}
}

// --verify on a graph whose whole is past --cn-mem checks a sample of the
// run read from DM: PageRank's ranks sum to 1 and sampled vertices are
// recomputed from their in-lists, on a directed graph (its in-layout)
// and an undirected one (its out-lists); BFS's depths and WCC's labels
// are checked along the sample's in-edges; a graph within the budget gets
// the serial verifier; a kernel without a sampled check is bad input,
// refused once the graph's size is known, before it is loaded into DM,
// with one error naming both sizes.
func TestVerifyBySample(t *testing.T) {
	parallelMpirun(t)
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		extra []string
		says  string // what the sampled check says it checked; "": the serial verifier ran
	}{
		{"directed", []string{"--cn-mem", "8MiB"}, "recomputed from their in-lists on DM"},
		{"undirected", []string{"--cn-mem", "8MiB", "--undirected"}, "recomputed from their in-lists on DM"},
		{"within the budget", []string{"--cn-mem", "64MiB"}, ""},
		{"bfs", []string{"--cn-mem", "8MiB", "--algo", "bfs"}, "deeper than its shallowest in-neighbour"},
		{"wcc", []string{"--cn-mem", "8MiB", "--algo", "wcc"}, "carries its neighbours' label"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBudget(t, dir, "kron:16", append([]string{"--verify"}, c.extra...)...)
			t.Logf("verified %v, by sample: %q", r.Verified, r.BySample)
			if !r.Verified || !strings.Contains(r.BySample, c.says) || (r.BySample == "") != (c.says == "") {
				t.Fatalf("verified %v, by sample %q; want verified, by a sample saying %q", r.Verified, r.BySample, c.says)
			}
		})
	}
	t.Run("no sampled check", func(t *testing.T) {
		res := mpitest.Exec(t, 4, nil, dmgBin(t), "--roles", "cn:2,mn:2", "run", "--algo", "cdlp", "--graph", "kron:16", "--verify", "--cn-mem", "8MiB")
		const want = "cdlp has no sampled check"
		if res.ExitCode == 0 || strings.Count(res.Stderr, want) != 1 || !strings.Contains(res.Stderr, "--cn-mem 8.0 MiB") {
			t.Fatalf("exit %d, stderr:\n%s\nwant a non-zero exit and one error with %q and the budget", res.ExitCode, res.Stderr, want)
		}
	})
}
