package suite

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/pkg/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/dmg-hpc/dmg/outfile"
)

// Plot file names.
const (
	PlotSpeedup       = "speedup.png"
	PlotFabricSpeedup = "speedup_fabric.png"
	PlotOpsPerEdge    = "remote_ops_per_edge.png"
	PlotCNCache       = "cn_cache_vs_cn.png"
	PlotFabricVsCN    = "fabric_vs_cn.png"
	PlotFabricVsMN    = "fabric_vs_mn.png"
	PlotTail          = "tail_ratio.png"
	// Against the graph's size, when the suite has graphs of several
	// sizes (make bench-scale): one line per variant, kernel and layout.
	PlotScaleLoad    = "scale_load.png"
	PlotScaleCompute = "scale_compute.png"
	PlotScaleCNRSS   = "scale_cn_peak_rss.png"
	PlotScaleMNRSS   = "scale_mn_peak_rss.png"
	PlotScaleDMBytes = "scale_dm_bytes_per_edge.png"
)

// drawPlots draws every plot it has data for and returns the files
// written and notes about the others. It never panics.
func drawPlots(dir string, sums []Summary) (files, notes []string) {
	get := func(m string) func(Summary) (float64, bool) {
		return func(s Summary) (float64, bool) { x, ok := s.Median[m]; return x, ok }
	}
	ratio := func(m string) func(Summary) (float64, bool) {
		return func(s Summary) (float64, bool) { x, ok := s.Ratio[m]; return x, ok }
	}
	cnOf := func(s Summary) int { return s.CN }
	mnOf := func(s Summary) int { return s.MN }
	// series names lines by variant, graph and algorithm, and by the other
	// node count too when that varies independently of x.
	series := func(other string, x, of func(Summary) int) func(Summary) string {
		seen := map[int]int{}
		many := false
		for _, s := range sums {
			if o, ok := seen[x(s)]; ok && o != of(s) {
				many = true
			}
			seen[x(s)] = of(s)
		}
		return func(s Summary) string {
			name := s.Variant + " " + s.Graph + " " + s.Algo
			if many {
				name += fmt.Sprintf(" %s=%d", other, of(s))
			}
			return name
		}
	}
	cacheUnit, cacheDiv := cacheScale(sums)
	cache := func(s Summary) (float64, bool) { x, ok := s.Median[MetricCNCache]; return x / cacheDiv, ok }
	jobs := []struct {
		file string
		draw func(path string) (bool, error)
	}{
		{PlotSpeedup, func(p string) (bool, error) {
			return barPlot(p, "Speedup over the baseline (compute time)", "speedup ×", sums, ratio(RatioSpeedup), true)
		}},
		{PlotFabricSpeedup, func(p string) (bool, error) {
			return barPlot(p, "Speedup over the baseline (modelled fabric time)", "speedup ×", sums, ratio(RatioFabricSpeedup), true)
		}},
		{PlotOpsPerEdge, func(p string) (bool, error) {
			return barPlot(p, "Remote operations per edge", "remote ops / edge", sums, get(MetricOpsPerEdge), false)
		}},
		{PlotCNCache, func(p string) (bool, error) {
			return linePlot(p, "CN cache per CN", "#CN", "CN cache per CN ("+cacheUnit+")", sums, cnOf, series("mn", cnOf, mnOf), cache)
		}},
		{PlotFabricVsCN, func(p string) (bool, error) {
			return linePlot(p, "Modelled fabric time against #CN", "#CN", "modelled fabric s", sums, cnOf, series("mn", cnOf, mnOf), get(MetricFabric))
		}},
		{PlotFabricVsMN, func(p string) (bool, error) {
			return linePlot(p, "Modelled fabric time against #MN", "#MN", "modelled fabric s", sums, mnOf, series("cn", mnOf, cnOf), get(MetricFabric))
		}},
		{PlotTail, func(p string) (bool, error) {
			return barPlot(p, "Tail ratio (max/median worker busy time)", "tail ratio", sums, get(MetricTail), true)
		}},
	}
	if sizes(sums) > 1 {
		mib := func(m string) func(Summary) (float64, bool) {
			return func(s Summary) (float64, bool) { x, ok := s.Median[m]; return x / (1 << 20), ok }
		}
		perEdge := func(s Summary) (float64, bool) {
			b, ok := s.Median[MetricMNUsed]
			e := s.Median[MetricEdges]
			return b / e, ok && e > 0
		}
		scale := func(file, title, ylabel string, value func(Summary) (float64, bool)) {
			jobs = append(jobs, struct {
				file string
				draw func(path string) (bool, error)
			}{file, func(p string) (bool, error) {
				return linePlot(p, title+" against |E|", "|E| (millions of edges)", ylabel, sums, edgesOf, cellOf, value)
			}})
		}
		scale(PlotScaleLoad, "Load time", "load s", get(MetricLoad))
		scale(PlotScaleCompute, "Compute time", "compute s", get(MetricCompute))
		scale(PlotScaleCNRSS, "Peak RSS per CN", "CN peak RSS (MiB)", mib(MetricCNRSS))
		scale(PlotScaleMNRSS, "Peak RSS per MN", "MN peak RSS (MiB)", mib(MetricMNRSS))
		scale(PlotScaleDMBytes, "DM bytes per edge", "bytes in the MNs' pools / |E|", perEdge)
	}
	for _, j := range jobs {
		ok, err := safeDraw(filepath.Join(dir, j.file), j.draw)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s not drawn: %v", j.file, err))
		case !ok:
			notes = append(notes, j.file+" skipped: no run reported its data")
		default:
			files = append(files, j.file)
		}
	}
	return files, notes
}

// sizes is how many graph sizes (edge counts) the summaries span.
func sizes(sums []Summary) int {
	seen := map[int]bool{}
	for _, s := range sums {
		seen[edgesOf(s)] = true
	}
	return len(seen)
}

// edgesOf is a summary's graph size, in millions of edges.
func edgesOf(s Summary) int { return int(math.Round(s.Median[MetricEdges] / 1e6)) }

// cellOf names a line of a scale plot: the variant, kernel and layout
// (the graph is its x).
func cellOf(s Summary) string { return s.Variant + " " + s.Algo + " " + s.Layout }

// safeDraw turns a plotting panic into an error.
func safeDraw(path string, draw func(string) (bool, error)) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, errors.Errorf("suite: plotting %s: %v", path, r)
		}
	}()
	return draw(path)
}

// cacheScale picks a unit for CN cache bytes.
func cacheScale(sums []Summary) (string, float64) {
	mx := 0.0
	for _, s := range sums {
		mx = max(mx, s.Median[MetricCNCache])
	}
	switch {
	case mx >= 1<<30:
		return "GiB", 1 << 30
	case mx >= 1<<20:
		return "MiB", 1 << 20
	default:
		return "KiB", 1 << 10
	}
}

func usable(x float64, ok bool) bool { return ok && !math.IsNaN(x) && !math.IsInf(x, 0) }

// barPlot draws one bar group per variant and one bar per cell (graph ×
// algorithm × layout) within it; false when no cell has a value.
func barPlot(path, title, ylabel string, sums []Summary, value func(Summary) (float64, bool), unitLine bool) (bool, error) {
	var variants, cells []string
	val := map[[2]string]float64{}
	for _, s := range sums {
		if !slices.Contains(variants, s.Variant) {
			variants = append(variants, s.Variant)
		}
		cell := s.Graph + " " + s.Algo + " " + s.Layout
		if !slices.Contains(cells, cell) {
			cells = append(cells, cell)
		}
		if x, ok := value(s); usable(x, ok) {
			val[[2]string{cell, s.Variant}] = x
		}
	}
	if len(val) == 0 {
		return false, nil
	}
	top := 0.0
	if unitLine {
		top = 1
	}
	for _, x := range val {
		top = max(top, x)
	}
	p := plot.New()
	p.Y.Max = legendRoom(top, len(cells))
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.NominalX(variants...)
	p.Legend.Top = true
	width := vg.Points(math.Max(4, math.Min(24, 360/float64(len(variants)*len(cells)))))
	for i, cell := range cells {
		vs := make(plotter.Values, len(variants))
		for j, v := range variants {
			vs[j] = val[[2]string{cell, v}] // 0 where the cell has no value
		}
		b, err := plotter.NewBarChart(vs, width)
		if err != nil {
			return false, errors.Wrapf(err, "suite: plotting %s", path)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(cells)-1)/2) * width
		p.Add(b)
		p.Legend.Add(cell, b)
	}
	if unitLine {
		one := plotter.NewFunction(func(float64) float64 { return 1 })
		one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(one)
	}
	return true, savePlot(p, path, len(variants))
}

// linePlot draws one line per series with the median value at each x;
// false when no summary has a value.
func linePlot(path, title, xlabel, ylabel string, sums []Summary, x func(Summary) int, series func(Summary) string, value func(Summary) (float64, bool)) (bool, error) {
	var names []string
	pts := map[string]map[int][]float64{}
	for _, s := range sums {
		y, ok := value(s)
		if !usable(y, ok) {
			continue
		}
		n := series(s)
		if pts[n] == nil {
			names = append(names, n)
			pts[n] = map[int][]float64{}
		}
		pts[n][x(s)] = append(pts[n][x(s)], y)
	}
	if len(names) == 0 {
		return false, nil
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.X.Tick.Marker = intTicks{}
	top, xlo, xhi := 0.0, math.Inf(1), math.Inf(-1)
	for _, n := range names {
		for xv, ys := range pts[n] {
			top = max(top, median(ys))
			xlo, xhi = min(xlo, float64(xv)), max(xhi, float64(xv))
		}
	}
	p.Y.Max = legendRoom(top, len(names))
	p.X.Min, p.X.Max = xlo-0.5, xhi+0.5
	for i, n := range names {
		xs := sortedInts(pts[n])
		xys := make(plotter.XYs, len(xs))
		for k, xv := range xs {
			xys[k] = plotter.XY{X: float64(xv), Y: median(pts[n][xv])}
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return false, errors.Wrapf(err, "suite: plotting %s", path)
		}
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		p.Legend.Add(n, l, sc)
	}
	return true, savePlot(p, path, 4)
}

// legendRoom is a y-axis top leaving room for a legend of n entries above
// data reaching top.
func legendRoom(top float64, n int) float64 {
	if top <= 0 {
		top = 1
	}
	return top * (1.1 + 0.08*float64(n))
}

func sortedInts(m map[int][]float64) []int {
	xs := make([]int, 0, len(m))
	for x := range m {
		xs = append(xs, x)
	}
	sort.Ints(xs)
	return xs
}

// intTicks labels whole numbers only (node counts).
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	step := math.Max(1, math.Ceil((hi-lo)/10))
	for x := math.Ceil(lo); x <= hi; x += step {
		ts = append(ts, plot.Tick{Value: x, Label: strconv.Itoa(int(x))})
	}
	return ts
}

func savePlot(p *plot.Plot, path string, groups int) error {
	w := vg.Length(math.Max(16, math.Min(40, 4*float64(groups)))) * vg.Centimeter
	return errors.Wrapf(outfile.Write(path, func(out io.Writer) error {
		wt, err := p.WriterTo(w, 12*vg.Centimeter, "png")
		if err != nil {
			return err
		}
		_, err = wt.WriteTo(out)
		return err
	}), "suite: saving %s", path)
}
