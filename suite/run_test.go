package suite_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/suite"
)

// dmgBin builds the dmg binary that the runs of a suite are.
func dmgBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dmg")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dmg-hpc/dmg/cmd/dmg").CombinedOutput(); err != nil {
		t.Fatalf("building dmg: %v\n%s", err, out)
	}
	return bin
}

// TestLocalEndToEnd runs a tiny suite of real child jobs with --local:
// two variants that exist today and one whose flag does not, which is
// recorded as failed without stopping the suite.
func TestLocalEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench")
	var out, prog bytes.Buffer
	s := &suite.Suite{
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
	want := map[string]string{"a": suite.OK, "b": suite.OK, "missing": suite.Failed}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if r.Status != want[r.Variant] {
			t.Errorf("variant %s: status %s (%s), want %s", r.Variant, r.Status, r.Error, want[r.Variant])
		}
		if r.Status == suite.OK {
			for _, k := range []string{suite.MetricCompute, suite.MetricOpsPerEdge, suite.MetricFabric, "graph.vertices", "iterations.count"} {
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
	for _, p := range []string{suite.PlotSpeedup, suite.PlotOpsPerEdge, suite.PlotCNCache, suite.PlotFabricVsCN, suite.PlotFabricVsMN} {
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

// Every iterative kernel gets the suite's --iterations, not only
// PageRank (CDLP ran its default of 10 before).
func TestIterationsPassed(t *testing.T) {
	for _, a := range []string{"pagerank", "cdlp"} {
		t.Run(a, func(t *testing.T) {
			var out, prog bytes.Buffer
			s := &suite.Suite{
				Binary: dmgBin(t), Local: true, Graphs: []string{"kron:8"}, Algos: []string{a}, Iterations: 3,
				Variants: []string{"a="}, Layouts: []string{"cn:1,mn:1"}, Reps: 1, OutDir: t.TempDir(),
				Timeout: time.Minute, Out: &out, Progress: &prog,
			}
			rows, err := s.Run(context.Background())
			if err != nil || len(rows) != 1 || rows[0].Status != suite.OK {
				t.Fatalf("suite of %s: %v %+v\n%s", a, err, rows, prog.String())
			}
			if n := rows[0].Metrics["iterations.count"]; n != 3 {
				t.Errorf("%s ran %v iterations; want the suite's 3", a, n)
			}
		})
	}
}
