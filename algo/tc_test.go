package algo

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Known counts on hand-made graphs, directed or not (TC takes every edge
// both ways): a triangle, a directed cycle, K4 with a self-loop and a
// parallel edge, a square with a diagonal, a star and an isolated vertex.
func TestReferenceTC(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        uint32
		directed bool
		edges    []edge
		want     []uint64
	}{
		{"undirected triangle", 3, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}}, []uint64{1, 1, 1}},
		{"directed cycle", 3, true, []edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}}, []uint64{1, 1, 1}},
		{"K4, a self-loop, a parallel edge", 4, true,
			[]edge{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {1, 2, 1}, {1, 3, 1}, {2, 3, 1}, {3, 2, 1}, {1, 1, 1}, {0, 1, 1}}, []uint64{3, 3, 3, 3}},
		{"square with a diagonal", 4, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}, {0, 2, 1}}, []uint64{2, 1, 2, 1}},
		{"star and an isolated vertex", 5, false, []edge{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}}, []uint64{0, 0, 0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := makeGraph(t, c.n, nil, c.directed, false, c.edges)
			if got := ReferenceTC(g); !slices.Equal(got, c.want) {
				t.Errorf("ReferenceTC = %v, want %v", got, c.want)
			}
		})
	}
}

// ReferenceTC against a count over every triple of vertices, on random
// graphs with self-loops and parallel edges.
func TestReferenceTCTriples(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	for trial := range 20 {
		n := uint32(3 + r.IntN(14))
		var edges []edge
		for range r.IntN(int(n * n)) {
			edges = append(edges, edge{uint32(r.IntN(int(n))), uint32(r.IntN(int(n))), 1})
		}
		g := makeGraph(t, n, nil, true, false, edges)
		adj := map[[2]uint32]bool{}
		for _, e := range edges {
			adj[[2]uint32{e.u, e.v}], adj[[2]uint32{e.v, e.u}] = true, true
		}
		want := make([]uint64, n)
		for u := range n {
			for w := u + 1; w < n; w++ {
				for x := w + 1; x < n; x++ {
					if adj[[2]uint32{u, w}] && adj[[2]uint32{w, x}] && adj[[2]uint32{u, x}] {
						want[u]++
						want[w]++
						want[x]++
					}
				}
			}
		}
		if got := ReferenceTC(g); !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d vertices, edges %v): ReferenceTC = %v, want %v", trial, n, edges, got, want)
		}
	}
}

func TestVerifyTCRejects(t *testing.T) {
	g := makeGraph(t, 4, []uint64{10, 20, 30, 40}, false, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}, {0, 2, 1}})
	correct := ReferenceTC(g)
	checkCorruptions(t, correct, func(r []uint64) error { return VerifyTC(g, r) }, []corruption[uint64]{
		{"one count off", func(r []uint64) { r[1]++ }, "vertex 20 is in 2 triangles, want 1"},
		{"zero", func(r []uint64) { r[2] = 0 }, "vertex 30"},
	})
	if err := VerifyTC(g, correct[:3]); err == nil || !strings.Contains(err.Error(), "one per vertex") {
		t.Errorf("a short result: %v", err)
	}
	if ReferenceTC(nil) != nil {
		t.Error("ReferenceTC(nil) is not nil")
	}
}

func TestSummarizeTC(t *testing.T) {
	s := Summarize(&Output{Kind: KindTC, Ints: []int64{2, 1, 2, 1}})
	if s.Triangles != 2 || s.Max != 2 || s.Text != "2 triangles, at most 2 through one vertex" {
		t.Errorf("summary %+v", s)
	}
}
