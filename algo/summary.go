package algo

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Summary is a short account of a result for humans: what a run found,
// beside where it wrote it.
type Summary struct {
	// Text is one line, e.g. "65,536 vertices reached, depth at most 6".
	Text string `json:"text"`
	// Reached counts the vertices with a value (BFS, SSSP: reached;
	// WCC: every vertex), Components the distinct labels (WCC, CDLP).
	Reached    uint64 `json:"reached,omitempty"`
	Components uint64 `json:"components,omitempty"`
	// Largest is the size of the largest component (WCC, CDLP); Max the
	// largest finite value (BFS depth, SSSP distance).
	Largest uint64  `json:"largest,omitempty"`
	Max     float64 `json:"max,omitempty"`
	// Top are the highest-ranked vertices (PageRank), best first.
	Top []Ranked `json:"top,omitempty"`
	// Triangles is the number of triangles (TC): the per-vertex counts'
	// sum over three.
	Triangles uint64 `json:"triangles,omitempty"`
}

// Ranked is one vertex's value, by external id.
type Ranked struct {
	ID    uint64  `json:"id"`
	Value float64 `json:"value"`
}

// topN is how many vertices a PageRank summary names.
const topN = 5

// Summarize describes an output of its kind.
func Summarize(o *Output) Summary {
	id := func(i int) uint64 {
		if o.IDs == nil {
			return uint64(i)
		}
		return o.IDs[i]
	}
	n := max(len(o.Ints), len(o.Floats))
	var s Summary
	switch o.Kind {
	case KindPR, KindLCC, KindBC:
		// One pass keeping the best topN, first seen first among equals.
		idx := make([]int, 0, topN+1)
		for i, x := range o.Floats {
			if len(idx) == topN && x <= o.Floats[idx[topN-1]] {
				continue
			}
			j := sort.Search(len(idx), func(k int) bool { return o.Floats[idx[k]] < x })
			idx = append(idx[:j], append([]int{i}, idx[j:]...)...)
			idx = idx[:min(len(idx), topN)]
		}
		var b []string
		for _, i := range idx {
			s.Top = append(s.Top, Ranked{ID: id(i), Value: o.Floats[i]})
			b = append(b, fmt.Sprintf("%d (%.3g)", id(i), o.Floats[i]))
		}
		s.Text = "top vertices: " + strings.Join(b, ", ")
	case KindBFS:
		for _, d := range o.Ints {
			if d != Unreachable {
				s.Reached++
				s.Max = max(s.Max, float64(d))
			}
		}
		s.Text = fmt.Sprintf("%d of %d vertices reached, depth at most %g", s.Reached, n, s.Max)
	case KindSSSP:
		for _, d := range o.Floats {
			if !math.IsInf(d, 1) {
				s.Reached++
				s.Max = max(s.Max, d)
			}
		}
		s.Text = fmt.Sprintf("%d of %d vertices reached, distance at most %.6g", s.Reached, n, s.Max)
	case KindWCC, KindCDLP:
		size := map[int64]uint64{}
		for _, l := range o.Ints {
			size[l]++
		}
		for _, c := range size {
			s.Largest = max(s.Largest, c)
		}
		s.Reached, s.Components = uint64(n), uint64(len(size))
		what := "components"
		if o.Kind == KindCDLP {
			what = "communities"
		}
		s.Text = fmt.Sprintf("%d %s, the largest of %d of %d vertices", s.Components, what, s.Largest, n)
	case KindTC:
		var sum uint64
		for _, c := range o.Ints {
			sum += uint64(c)
			s.Max = max(s.Max, float64(c))
		}
		s.Triangles = sum / 3
		s.Text = fmt.Sprintf("%d triangles, at most %g through one vertex", s.Triangles, s.Max)
	}
	return s
}
