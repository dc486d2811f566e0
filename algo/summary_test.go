package algo

import (
	"math"
	"reflect"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		name string
		out  Output
		want Summary
	}{
		{"pagerank top 5, ties in id order", Output{Kind: KindPR, IDs: []uint64{10, 11, 12, 13, 14, 15, 16},
			Floats: []float64{0.1, 0.3, 0.05, 0.3, 0.2, 0.01, 0.04}},
			Summary{Text: "top vertices: 11 (0.3), 13 (0.3), 14 (0.2), 10 (0.1), 12 (0.05)",
				Top: []Ranked{{11, 0.3}, {13, 0.3}, {14, 0.2}, {10, 0.1}, {12, 0.05}}}},
		{"pagerank, fewer vertices than 5", Output{Kind: KindPR, Floats: []float64{0.25, 0.75}},
			Summary{Text: "top vertices: 1 (0.75), 0 (0.25)", Top: []Ranked{{1, 0.75}, {0, 0.25}}}},
		{"bfs", Output{Kind: KindBFS, Ints: []int64{0, 1, Unreachable, 3, 1}},
			Summary{Text: "4 of 5 vertices reached, depth at most 3", Reached: 4, Max: 3}},
		{"sssp", Output{Kind: KindSSSP, Floats: []float64{0, 2.5, math.Inf(1)}},
			Summary{Text: "2 of 3 vertices reached, distance at most 2.5", Reached: 2, Max: 2.5}},
		{"wcc", Output{Kind: KindWCC, Ints: []int64{7, 7, 9, 7, 9, 4}},
			Summary{Text: "3 components, the largest of 3 of 6 vertices", Reached: 6, Components: 3, Largest: 3}},
	} {
		if got := Summarize(&c.out); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
