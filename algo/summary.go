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
func Summarize(o *Output) Summary { return summarize(o.Kind, outputEntries{o}) }

// entries is a result as summarize reads it, entry by entry: an Output's
// slices (outputEntries), or the value words of a run decoded in place
// (resultWords).
type entries interface {
	size() int
	// idAt is entry i's external id, floatAt its value for a float kind,
	// intAt for an integer one.
	idAt(i int) uint64
	floatAt(i int) float64
	intAt(i int) int64
	// labelSizes counts the distinct labels and the entries of the
	// commonest (WCC, CDLP).
	labelSizes() (distinct, largest uint64)
}

// outputEntries reads an Output's slices: Floats for a float kind, Ints
// otherwise; without IDs, entry i is vertex i.
type outputEntries struct{ o *Output }

var _ entries = outputEntries{}

func (e outputEntries) floatAt(i int) float64 { return e.o.Floats[i] }
func (e outputEntries) intAt(i int) int64     { return e.o.Ints[i] }

func (e outputEntries) size() int {
	if e.o.Kind.isFloat() {
		return len(e.o.Floats)
	}
	return len(e.o.Ints)
}

func (e outputEntries) idAt(i int) uint64 {
	if e.o.IDs == nil {
		return uint64(i)
	}
	return e.o.IDs[i]
}

func (e outputEntries) labelSizes() (distinct, largest uint64) {
	size := map[int64]uint64{}
	for _, l := range e.o.Ints {
		size[l]++
	}
	for _, c := range size {
		largest = max(largest, c)
	}
	return uint64(len(size)), largest
}

// summarize describes a result of kind read through e.
func summarize(kind Kind, e entries) Summary {
	n := e.size()
	var s Summary
	switch kind {
	case KindPR, KindLCC, KindBC:
		// One pass keeping the best topN, first seen first among equals.
		idx := make([]int, 0, topN+1)
		for i := range n {
			x := e.floatAt(i)
			if len(idx) == topN && x <= e.floatAt(idx[topN-1]) {
				continue
			}
			j := sort.Search(len(idx), func(k int) bool { return e.floatAt(idx[k]) < x })
			idx = append(idx[:j], append([]int{i}, idx[j:]...)...)
			idx = idx[:min(len(idx), topN)]
		}
		var b []string
		for _, i := range idx {
			id, x := e.idAt(i), e.floatAt(i)
			s.Top = append(s.Top, Ranked{ID: id, Value: x})
			b = append(b, fmt.Sprintf("%d (%.3g)", id, x))
		}
		s.Text = "top vertices: " + strings.Join(b, ", ")
	case KindBFS:
		for i := range n {
			if d := e.intAt(i); d != Unreachable {
				s.Reached++
				s.Max = max(s.Max, float64(d))
			}
		}
		s.Text = fmt.Sprintf("%d of %d vertices reached, depth at most %g", s.Reached, n, s.Max)
	case KindSSSP:
		for i := range n {
			if d := e.floatAt(i); !math.IsInf(d, 1) {
				s.Reached++
				s.Max = max(s.Max, d)
			}
		}
		s.Text = fmt.Sprintf("%d of %d vertices reached, distance at most %.6g", s.Reached, n, s.Max)
	case KindWCC, KindCDLP:
		s.Components, s.Largest = e.labelSizes()
		s.Reached = uint64(n)
		what := "components"
		if kind == KindCDLP {
			what = "communities"
		}
		s.Text = fmt.Sprintf("%d %s, the largest of %d of %d vertices", s.Components, what, s.Largest, n)
	case KindTC:
		var sum uint64
		for i := range n {
			c := e.intAt(i)
			sum += uint64(c)
			s.Max = max(s.Max, float64(c))
		}
		s.Triangles = sum / 3
		s.Text = fmt.Sprintf("%d triangles, at most %g through one vertex", s.Triangles, s.Max)
	}
	return s
}
