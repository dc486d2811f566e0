package launch_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/launch"
)

// row is a synthetic successful run.
func row(graph, algo string, cn, mn int, variant string, rep int, metrics map[string]float64) launch.SuiteRow {
	return launch.SuiteRow{Graph: graph, Algo: algo, Layout: layout(cn, mn), CN: cn, MN: mn, Variant: variant, Rep: rep,
		Status: launch.SuiteOK, Metrics: metrics}
}

func layout(cn, mn int) string { return "cn:" + itoa(cn) + ",mn:" + itoa(mn) }

func failed(graph, algo string, cn, mn int, variant string, rep int, status, msg string) launch.SuiteRow {
	return launch.SuiteRow{Graph: graph, Algo: algo, Layout: layout(cn, mn), CN: cn, MN: mn, Variant: variant, Rep: rep,
		Status: status, Error: msg}
}

func m(compute, ops, fabric float64) map[string]float64 {
	return map[string]float64{launch.MetricCompute: compute, launch.MetricOpsPerEdge: ops, launch.MetricFabric: fabric,
		launch.MetricCNCache: 4096 * compute, launch.MetricEdgesPerS: 1e6 / compute}
}

// syntheticRows: two layouts; naive (baseline), dmg with a tail ratio,
// "broken" that always fails, and "odd" that fails once of three.
func syntheticRows() []launch.SuiteRow {
	var rows []launch.SuiteRow
	for _, l := range [][2]int{{1, 1}, {2, 2}} {
		s := float64(l[0])
		for rep := range 3 {
			rows = append(rows,
				row("kron:8", "pagerank", l[0], l[1], "naive", rep, m(s*float64(4+rep), 2, s*float64(8-rep))),
				row("kron:8", "pagerank", l[0], l[1], "dmg", rep, withTail(m(s*float64(1+rep), 0.5, s*float64(2+2*rep)), 1.1+0.1*float64(rep))),
				failed("kron:8", "pagerank", l[0], l[1], "broken", rep, launch.SuiteFailed, "exit 2: dmg: unknown flag: --mode"),
			)
			if rep == 1 {
				rows = append(rows, failed("kron:8", "pagerank", l[0], l[1], "odd", rep, launch.SuiteFailed, "timed out"))
			} else {
				rows = append(rows, row("kron:8", "pagerank", l[0], l[1], "odd", rep, m(s*float64(10*(rep+1)), 1, s)))
			}
		}
	}
	return rows
}

func withTail(mm map[string]float64, tail float64) map[string]float64 {
	mm[launch.MetricTail] = tail
	return mm
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarizeSuite(t *testing.T) {
	sums := launch.SummarizeSuite(syntheticRows(), "naive")
	if len(sums) != 8 {
		t.Fatalf("%d cells, want 8 (2 layouts × 4 variants)", len(sums))
	}
	byKey := map[string]launch.SuiteSummary{}
	for _, s := range sums {
		byKey[s.Layout+" "+s.Variant] = s
	}
	tests := []struct {
		cell     string
		runs, ok int
		median   map[string]float64 // expected medians; a NaN means absent
		baseline string
		ratio    map[string]float64
		err      string
	}{
		{"cn:1,mn:1 naive", 3, 3, map[string]float64{launch.MetricCompute: 5, launch.MetricFabric: 7, launch.MetricTail: math.NaN()},
			"naive", map[string]float64{launch.RatioSpeedup: 1, launch.RatioFabricSpeedup: 1, launch.RatioOps: 1}, ""},
		{"cn:1,mn:1 dmg", 3, 3, map[string]float64{launch.MetricCompute: 2, launch.MetricFabric: 4, launch.MetricTail: 1.2},
			"naive", map[string]float64{launch.RatioSpeedup: 2.5, launch.RatioFabricSpeedup: 7.0 / 4, launch.RatioOps: 0.25}, ""},
		{"cn:2,mn:2 dmg", 3, 3, map[string]float64{launch.MetricCompute: 4, launch.MetricFabric: 8},
			"naive", map[string]float64{launch.RatioSpeedup: 2.5, launch.RatioFabricSpeedup: 14.0 / 8}, ""},
		{"cn:1,mn:1 odd", 3, 2, map[string]float64{launch.MetricCompute: 20}, // median of 10 and 30
			"naive", map[string]float64{launch.RatioSpeedup: 0.25}, "timed out"},
		{"cn:2,mn:2 broken", 3, 0, map[string]float64{launch.MetricCompute: math.NaN()}, "", nil, "exit 2: dmg: unknown flag: --mode"},
	}
	for _, tt := range tests {
		t.Run(tt.cell, func(t *testing.T) {
			s, ok := byKey[tt.cell]
			if !ok {
				t.Fatalf("no cell %q", tt.cell)
			}
			if s.Runs != tt.runs || s.OK != tt.ok || s.Baseline != tt.baseline || s.Error != tt.err {
				t.Fatalf("got runs %d ok %d baseline %q error %q; want %d %d %q %q", s.Runs, s.OK, s.Baseline, s.Error, tt.runs, tt.ok, tt.baseline, tt.err)
			}
			for k, want := range tt.median {
				got, present := s.Median[k]
				if math.IsNaN(want) {
					if present {
						t.Errorf("median %s = %g, want absent", k, got)
					}
				} else if !present || !near(got, want) {
					t.Errorf("median %s = %g (present %v), want %g", k, got, present, want)
				}
			}
			for k, want := range tt.ratio {
				if got, present := s.Ratio[k]; !present || !near(got, want) {
					t.Errorf("ratio %s = %g (present %v), want %g", k, got, present, want)
				}
			}
		})
	}
}

func TestSummarizeSuiteBaselineFallback(t *testing.T) {
	rows := []launch.SuiteRow{
		failed("g", "bfs", 1, 1, "naive", 0, launch.SuiteFailed, "exit 2"),
		row("g", "bfs", 1, 1, "dmg", 0, m(2, 1, 1)),
		row("g", "bfs", 1, 1, "other", 0, m(4, 1, 1)),
	}
	for _, baseline := range []string{"naive", "absent"} {
		for _, s := range launch.SummarizeSuite(rows, baseline) {
			if s.Variant == "naive" {
				continue
			}
			if s.Baseline != "dmg" {
				t.Errorf("baseline %q: cell %s compares against %q, want the first variant with data, dmg", baseline, s.Variant, s.Baseline)
			}
			if s.Variant == "other" && !near(s.Ratio[launch.RatioSpeedup], 0.5) {
				t.Errorf("speedup of other = %g, want 0.5", s.Ratio[launch.RatioSpeedup])
			}
		}
	}
}

// checkPNG fails unless path is a non-empty PNG file.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s is not a PNG (%d bytes)", path, len(b))
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

func TestSuiteReport(t *testing.T) {
	all := []string{launch.PlotSpeedup, launch.PlotFabricSpeedup, launch.PlotOpsPerEdge, launch.PlotCNCache,
		launch.PlotFabricVsCN, launch.PlotFabricVsMN, launch.PlotTail}
	oneLayout := func() []launch.SuiteRow {
		var rows []launch.SuiteRow
		for _, r := range syntheticRows() {
			if r.CN == 1 && r.Variant != "dmg" { // no tail ratio anywhere
				rows = append(rows, r)
			}
		}
		return rows
	}
	allFailed := func() []launch.SuiteRow {
		return []launch.SuiteRow{failed("g", "wcc", 1, 1, "naive", 0, launch.SuiteFailed, "exit 1")}
	}
	tests := []struct {
		name    string
		rows    []launch.SuiteRow
		plots   []string // must exist
		noPlots []string // must not exist, with a note
	}{
		{"two layouts", syntheticRows(), all, nil},
		{"one layout, no tail ratio", oneLayout(), all[:6], all[6:]},
		{"nothing succeeded", allFailed(), nil, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			var out, notes bytes.Buffer
			s := &launch.Suite{OutDir: dir, Out: &out, Progress: &notes}
			if err := s.Report(tt.rows); err != nil {
				t.Fatal(err)
			}
			if recs := readCSV(t, filepath.Join(dir, "results.csv")); len(recs) != len(tt.rows)+1 {
				t.Fatalf("results.csv has %d records, want header + %d", len(recs), len(tt.rows))
			}
			for _, f := range []string{"results.json", "summary.txt", "summary.json"} {
				if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
					t.Errorf("%s missing or empty: %v", f, err)
				}
			}
			for _, p := range tt.plots {
				checkPNG(t, filepath.Join(dir, p))
			}
			for _, p := range tt.noPlots {
				if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
					t.Errorf("%s drawn without data", p)
				}
				if !strings.Contains(notes.String(), p) {
					t.Errorf("no note about %s in %q", p, notes.String())
				}
			}
			if !strings.Contains(out.String(), "compute s") {
				t.Errorf("no summary table in %q", out.String())
			}
		})
	}
}

func TestSuiteReportMissingFieldsAreEmpty(t *testing.T) {
	dir := t.TempDir()
	rows := []launch.SuiteRow{
		row("g", "bfs", 1, 1, "a", 0, map[string]float64{launch.MetricCompute: 1}),
		row("g", "bfs", 1, 1, "b", 0, map[string]float64{launch.MetricCompute: 2, launch.MetricTail: 1.5}),
	}
	if err := (&launch.Suite{OutDir: dir}).Report(rows); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, "results.csv"))
	col := -1
	for i, h := range recs[0] {
		if h == launch.MetricTail {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no %s column in %v", launch.MetricTail, recs[0])
	}
	if recs[1][col] != "" || recs[2][col] != "1.5" {
		t.Fatalf("tail column = %q, %q; want empty for the run without it, then 1.5", recs[1][col], recs[2][col])
	}
}

func TestSuiteValidate(t *testing.T) {
	base := func() launch.Suite {
		s := launch.Suite{Local: true}
		s.EnsureDefaults()
		return s
	}
	tests := []struct {
		name string
		edit func(*launch.Suite)
		ok   bool
	}{
		{"defaults", func(*launch.Suite) {}, true},
		{"empty flags of a variant", func(s *launch.Suite) { s.Variants = []string{"a=", "b=--batch 64"} }, true},
		{"variant without =", func(s *launch.Suite) { s.Variants = []string{"dmg"} }, false},
		{"variant name with a slash", func(s *launch.Suite) { s.Variants = []string{"a/b=--x"} }, false},
		{"variant twice", func(s *launch.Suite) { s.Variants = []string{"a=", "a=--batch 2"} }, false},
		{"several layouts in one item", func(s *launch.Suite) { s.Layouts = []string{"cn:1,mn:1,cn:2,mn:2"} }, true},
		{"layouts separated by ;", func(s *launch.Suite) { s.Layouts = []string{"cn:1,mn:1; cn:4,mn:2", "mn:1,cn:3"} }, true},
		{"half a layout", func(s *launch.Suite) { s.Layouts = []string{"cn:1,mn:1,cn:2"} }, false},
		{"bad layout", func(s *launch.Suite) { s.Layouts = []string{"cn:0,mn:1"} }, false},
		{"zero reps", func(s *launch.Suite) { s.Reps = -1 }, false},
		{"empty graph", func(s *launch.Suite) { s.Graphs = []string{""} }, false},
		{"no launcher", func(s *launch.Suite) { s.Local, s.Mpirun = false, " " }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.edit(&s)
			if err := s.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestSuiteLocalEndToEnd runs a tiny suite of real child jobs with --local:
// two variants that exist today and one whose flag does not, which is
// recorded as failed without stopping the suite.
func TestSuiteLocalEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench")
	var out, prog bytes.Buffer
	s := &launch.Suite{
		Binary: dmgBin(t), Local: true, Graphs: []string{"kron:8"}, Algos: []string{"pagerank"},
		Variants: []string{"a=", "b=--batch 64", "missing=--no-such-flag"}, Layouts: []string{"cn:2,mn:2"},
		Reps: 1, OutDir: dir, Timeout: time.Minute, Out: &out, Progress: &prog,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, prog.String())
	}
	want := map[string]string{"a": launch.SuiteOK, "b": launch.SuiteOK, "missing": launch.SuiteFailed}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if r.Status != want[r.Variant] {
			t.Errorf("variant %s: status %s (%s), want %s", r.Variant, r.Status, r.Error, want[r.Variant])
		}
		if r.Status == launch.SuiteOK {
			for _, k := range []string{launch.MetricCompute, launch.MetricOpsPerEdge, launch.MetricFabric, "graph.vertices", "iterations.count"} {
				if _, ok := r.Metrics[k]; !ok {
					t.Errorf("variant %s: no %s in %v", r.Variant, k, r.Metrics)
				}
			}
			if r.Metrics["graph.vertices"] != 256 || r.Labels["algo"] != "pagerank" {
				t.Errorf("variant %s: report not parsed: %v %v", r.Variant, r.Metrics, r.Labels)
			}
		}
	}
	if recs := readCSV(t, filepath.Join(dir, "results.csv")); len(recs) != 4 {
		t.Fatalf("results.csv has %d records, want header + 3", len(recs))
	}
	for _, p := range []string{launch.PlotSpeedup, launch.PlotOpsPerEdge, launch.PlotCNCache, launch.PlotFabricVsCN, launch.PlotFabricVsMN} {
		checkPNG(t, filepath.Join(dir, p))
	}
	for _, p := range []string{"[1/3] ", "[2/3] ", "[3/3] "} {
		if !strings.Contains(prog.String(), p) {
			t.Errorf("no progress line %q in:\n%s", p, prog.String())
		}
	}
	if !strings.Contains(out.String(), "failed: missing") {
		t.Errorf("the summary does not report the failed variant:\n%s", out.String())
	}
}
