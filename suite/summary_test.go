package suite_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/suite"
)

// row is a synthetic successful run.
func row(graph, algo string, cn, mn int, variant string, rep int, metrics map[string]float64) suite.Row {
	return suite.Row{Graph: graph, Algo: algo, Layout: layout(cn, mn), CN: cn, MN: mn, Variant: variant, Rep: rep,
		Status: suite.OK, Metrics: metrics}
}

func layout(cn, mn int) string { return "cn:" + strconv.Itoa(cn) + ",mn:" + strconv.Itoa(mn) }

func failed(graph, algo string, cn, mn int, variant string, rep int, status, msg string) suite.Row {
	return suite.Row{Graph: graph, Algo: algo, Layout: layout(cn, mn), CN: cn, MN: mn, Variant: variant, Rep: rep,
		Status: status, Error: msg}
}

func m(compute, ops, fabric float64) map[string]float64 {
	return map[string]float64{suite.MetricCompute: compute, suite.MetricOpsPerEdge: ops, suite.MetricFabric: fabric,
		suite.MetricCNCache: 4096 * compute, suite.MetricEdgesPerS: 1e6 / compute}
}

// syntheticRows: two layouts; naive (baseline), dmg with a tail ratio,
// "broken" that always fails, and "odd" that fails once of three.
func syntheticRows() []suite.Row {
	var rows []suite.Row
	for _, l := range [][2]int{{1, 1}, {2, 2}} {
		s := float64(l[0])
		for rep := range 3 {
			rows = append(rows,
				row("kron:8", "pagerank", l[0], l[1], "naive", rep, m(s*float64(4+rep), 2, s*float64(8-rep))),
				row("kron:8", "pagerank", l[0], l[1], "dmg", rep, withTail(m(s*float64(1+rep), 0.5, s*float64(2+2*rep)), 1.1+0.1*float64(rep))),
				failed("kron:8", "pagerank", l[0], l[1], "broken", rep, suite.Failed, "exit 2: dmg: unknown flag: --mode"),
			)
			if rep == 1 {
				rows = append(rows, failed("kron:8", "pagerank", l[0], l[1], "odd", rep, suite.Failed, "timed out"))
			} else {
				rows = append(rows, row("kron:8", "pagerank", l[0], l[1], "odd", rep, m(s*float64(10*(rep+1)), 1, s)))
			}
		}
	}
	return rows
}

func withTail(mm map[string]float64, tail float64) map[string]float64 {
	mm[suite.MetricTail] = tail
	return mm
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	sums := suite.Summarize(syntheticRows(), "naive")
	if len(sums) != 8 {
		t.Fatalf("%d cells, want 8 (2 layouts × 4 variants)", len(sums))
	}
	byKey := map[string]suite.Summary{}
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
		{"cn:1,mn:1 naive", 3, 3, map[string]float64{suite.MetricCompute: 5, suite.MetricFabric: 7, suite.MetricTail: math.NaN()},
			"naive", map[string]float64{suite.RatioSpeedup: 1, suite.RatioFabricSpeedup: 1, suite.RatioOps: 1}, ""},
		{"cn:1,mn:1 dmg", 3, 3, map[string]float64{suite.MetricCompute: 2, suite.MetricFabric: 4, suite.MetricTail: 1.2},
			"naive", map[string]float64{suite.RatioSpeedup: 2.5, suite.RatioFabricSpeedup: 7.0 / 4, suite.RatioOps: 0.25}, ""},
		{"cn:2,mn:2 dmg", 3, 3, map[string]float64{suite.MetricCompute: 4, suite.MetricFabric: 8},
			"naive", map[string]float64{suite.RatioSpeedup: 2.5, suite.RatioFabricSpeedup: 14.0 / 8}, ""},
		{"cn:1,mn:1 odd", 3, 2, map[string]float64{suite.MetricCompute: 20}, // median of 10 and 30
			"naive", map[string]float64{suite.RatioSpeedup: 0.25}, "timed out"},
		{"cn:2,mn:2 broken", 3, 0, map[string]float64{suite.MetricCompute: math.NaN()}, "", nil, "exit 2: dmg: unknown flag: --mode"},
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

func TestSummarizeBaselineFallback(t *testing.T) {
	rows := []suite.Row{
		failed("g", "bfs", 1, 1, "naive", 0, suite.Failed, "exit 2"),
		row("g", "bfs", 1, 1, "dmg", 0, m(2, 1, 1)),
		row("g", "bfs", 1, 1, "other", 0, m(4, 1, 1)),
	}
	for _, baseline := range []string{"naive", "absent"} {
		for _, s := range suite.Summarize(rows, baseline) {
			if s.Variant == "naive" {
				continue
			}
			if s.Baseline != "dmg" {
				t.Errorf("baseline %q: cell %s compares against %q, want the first variant with data, dmg", baseline, s.Variant, s.Baseline)
			}
			if s.Variant == "other" && !near(s.Ratio[suite.RatioSpeedup], 0.5) {
				t.Errorf("speedup of other = %g, want 0.5", s.Ratio[suite.RatioSpeedup])
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

func TestReport(t *testing.T) {
	all := []string{suite.PlotSpeedup, suite.PlotFabricSpeedup, suite.PlotOpsPerEdge, suite.PlotCNCache,
		suite.PlotFabricVsCN, suite.PlotFabricVsMN, suite.PlotTail}
	oneLayout := func() []suite.Row {
		var rows []suite.Row
		for _, r := range syntheticRows() {
			if r.CN == 1 && r.Variant != "dmg" { // no tail ratio anywhere
				rows = append(rows, r)
			}
		}
		return rows
	}
	allFailed := func() []suite.Row {
		return []suite.Row{failed("g", "wcc", 1, 1, "naive", 0, suite.Failed, "exit 1")}
	}
	scale := []string{suite.PlotScaleLoad, suite.PlotScaleCompute, suite.PlotScaleCNRSS, suite.PlotScaleMNRSS, suite.PlotScaleDMBytes}
	// Two kernels on graphs of three sizes, one layout: the scale plots.
	sized := func() []suite.Row {
		var rows []suite.Row
		for i, g := range []string{"kron:20", "kron:22", "kron:24"} {
			e := float64(int(31e6) << (2 * i))
			for _, a := range []string{"pagerank", "bfs"} {
				mm := m(float64(1+i), 1, 1)
				mm[suite.MetricEdges], mm[suite.MetricLoad] = e, e/5e6
				mm[suite.MetricCNRSS], mm[suite.MetricMNRSS], mm[suite.MetricMNUsed] = e, 4*e, 20*e
				rows = append(rows, row(g, a, 2, 2, "dmg", 0, mm))
			}
		}
		return rows
	}
	tests := []struct {
		name    string
		rows    []suite.Row
		plots   []string // must exist
		noPlots []string // must not exist, with a note
	}{
		{"two layouts", syntheticRows(), all, scale},
		{"graphs of three sizes", sized(), append([]string{suite.PlotCNCache}, scale...), nil},
		{"one layout, no tail ratio", oneLayout(), all[:6], all[6:]},
		{"nothing succeeded", allFailed(), nil, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			var out, notes bytes.Buffer
			s := &suite.Suite{OutDir: dir, Out: &out, Progress: &notes}
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
				if !strings.Contains(notes.String(), p) && !strings.HasPrefix(p, "scale_") { // (drawn only for several sizes)
					t.Errorf("no note about %s in %q", p, notes.String())
				}
			}
			if !strings.Contains(out.String(), "compute s") {
				t.Errorf("no summary table in %q", out.String())
			}
		})
	}
}

func TestReportMissingFieldsAreEmpty(t *testing.T) {
	dir := t.TempDir()
	rows := []suite.Row{
		row("g", "bfs", 1, 1, "a", 0, map[string]float64{suite.MetricCompute: 1}),
		row("g", "bfs", 1, 1, "b", 0, map[string]float64{suite.MetricCompute: 2, suite.MetricTail: 1.5}),
	}
	if err := (&suite.Suite{OutDir: dir}).Report(rows); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, "results.csv"))
	col := -1
	for i, h := range recs[0] {
		if h == suite.MetricTail {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no %s column in %v", suite.MetricTail, recs[0])
	}
	if recs[1][col] != "" || recs[2][col] != "1.5" {
		t.Fatalf("tail column = %q, %q; want empty for the run without it, then 1.5", recs[1][col], recs[2][col])
	}
}
