package suite

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/outfile"
)

// Summary is one cell (graph × algorithm × layout × variant): the median
// of each metric over its successful runs, and ratios against the cell's
// baseline variant.
type Summary struct {
	Graph    string             `json:"graph"`
	Algo     string             `json:"algo"`
	Layout   string             `json:"layout"`
	CN       int                `json:"cn"`
	MN       int                `json:"mn"`
	Variant  string             `json:"variant"`
	Runs     int                `json:"runs"`
	OK       int                `json:"ok"`
	Error    string             `json:"error,omitempty"` // the first failure
	Median   map[string]float64 `json:"median"`
	Baseline string             `json:"baseline,omitempty"`
	Ratio    map[string]float64 `json:"ratio,omitempty"`
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Summarize groups rows into cells (graph × algorithm × layout × variant,
// in the order the rows first name them) with the medians of every metric
// over the successful runs that report it, and ratios against the cell's
// baseline: the variant baseline if it has successful runs there, else the
// first variant that does.
func Summarize(rows []Row, baseline string) []Summary {
	type key struct{ g, a, l, v string }
	idx := map[key]int{}
	var sums []Summary
	vals := map[key]map[string][]float64{}
	for _, r := range rows {
		k := key{r.Graph, r.Algo, r.Layout, r.Variant}
		i, ok := idx[k]
		if !ok {
			i = len(sums)
			idx[k] = i
			sums = append(sums, Summary{Graph: r.Graph, Algo: r.Algo, Layout: r.Layout, CN: r.CN, MN: r.MN, Variant: r.Variant, Median: map[string]float64{}})
			vals[k] = map[string][]float64{}
		}
		s := &sums[i]
		s.Runs++
		if r.Status != OK {
			if s.Error == "" && r.Status == Failed {
				s.Error = r.Error
			}
			continue
		}
		s.OK++
		for m, x := range r.Metrics {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				vals[k][m] = append(vals[k][m], x)
			}
		}
	}
	for i := range sums {
		s := &sums[i]
		for m, xs := range vals[key{s.Graph, s.Algo, s.Layout, s.Variant}] {
			s.Median[m] = median(xs)
		}
	}
	// Baseline per cell.
	for i := range sums {
		s := &sums[i]
		var base *Summary
		for j := range sums {
			b := &sums[j]
			if b.Graph != s.Graph || b.Algo != s.Algo || b.Layout != s.Layout || b.OK == 0 {
				continue
			}
			if b.Variant == baseline {
				base = b
				break
			}
			if base == nil {
				base = b
			}
		}
		if base == nil || s.OK == 0 {
			continue
		}
		s.Baseline, s.Ratio = base.Variant, map[string]float64{}
		ratio := func(name, m string, inverse bool) {
			x, ok1 := s.Median[m]
			y, ok2 := base.Median[m]
			if !ok1 || !ok2 {
				return
			}
			if inverse {
				x, y = y, x
			}
			if y > 0 {
				s.Ratio[name] = x / y
			}
		}
		ratio(RatioSpeedup, MetricCompute, true)
		ratio(RatioFabricSpeedup, MetricFabric, true)
		ratio(RatioOps, MetricOpsPerEdge, false)
	}
	return sums
}

func fmtMetric(m map[string]float64, k string) string {
	x, ok := m[k]
	if !ok {
		return "-"
	}
	switch k {
	case MetricCNCache:
		return humanize.IBytes(uint64(x))
	case MetricEdgesPerS:
		return strings.TrimSpace(humanize.SIWithDigits(float64(uint64(x)), 1, ""))
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// WriteTable prints the summary table and the failures under it.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "graph\talgo\tlayout\tvariant\tok\tcompute s\tedges/s\tops/edge\tatomics/edge\tCN cache\tfabric s\ttail\tspeedup\tfabric speedup\tops vs base\tbase\t")
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t", s.Graph, s.Algo, s.Layout, s.Variant, s.OK, s.Runs)
		for _, k := range []string{MetricCompute, MetricEdgesPerS, MetricOpsPerEdge, MetricAtomicsPerE, MetricCNCache, MetricFabric, MetricTail} {
			fmt.Fprintf(tw, "%s\t", fmtMetric(s.Median, k))
		}
		for _, k := range []string{RatioSpeedup, RatioFabricSpeedup, RatioOps} {
			fmt.Fprintf(tw, "%s\t", fmtMetric(s.Ratio, k))
		}
		fmt.Fprintf(tw, "%s\t\n", s.Baseline)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range sums {
		if s.Error != "" {
			fmt.Fprintf(w, "failed: %s on %s %s %s (%d/%d ok): %s\n", s.Variant, s.Graph, s.Algo, s.Layout, s.OK, s.Runs, s.Error)
		}
	}
	return nil
}

// Report writes rows to results.csv and results.json, the summary to
// Out and to summary.txt and summary.json, and the plots into OutDir.
// Plots without data are skipped with a note on Progress.
func (s *Suite) Report(rows []Row) error {
	s.EnsureDefaults()
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return errors.Wrapf(err, "suite: creating %s", s.OutDir)
	}
	if err := writeRows(s.OutDir, rows); err != nil {
		return err
	}
	sums := Summarize(rows, s.Baseline)
	var tbl bytes.Buffer
	if err := WriteTable(&tbl, sums); err != nil {
		return err
	}
	if _, err := orDiscard(s.Out).Write(tbl.Bytes()); err != nil {
		return errors.Wrap(err, "suite: writing the summary")
	}
	if err := outfile.WriteFile(filepath.Join(s.OutDir, "summary.txt"), tbl.Bytes()); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(s.OutDir, "summary.json"), sums); err != nil {
		return err
	}
	files, notes := drawPlots(s.OutDir, sums)
	prog := orDiscard(s.Progress)
	for _, n := range notes {
		fmt.Fprintln(prog, "plot: "+n)
	}
	if len(files) > 0 {
		fmt.Fprintf(orDiscard(s.Out), "plots in %s: %s\n", s.OutDir, strings.Join(files, ", "))
	}
	return nil
}
