package algo

import (
	"math"
	"strings"
	"testing"
)

// Known coefficients on hand-made graphs: directed and undirected
// triangles, a pair joined both ways (two arcs), a self-loop (never an
// arc between neighbours), a star (no arcs between leaves) and an isolated
// vertex.
func TestReferenceLCC(t *testing.T) {
	cases := []struct {
		name     string
		n        uint32
		directed bool
		edges    []edge
		want     []float64
	}{
		{"directed triangle", 3, true, []edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}}, []float64{0.5, 0.5, 0.5}},
		{"undirected triangle", 3, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}}, []float64{1, 1, 1}},
		{"both ways and a self-loop", 3, true, []edge{{0, 1, 1}, {1, 0, 1}, {0, 2, 1}, {2, 1, 1}, {1, 1, 1}}, []float64{0.5, 0.5, 1}},
		{"star and an isolated vertex", 5, false, []edge{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}}, []float64{0, 0, 0, 0, 0}},
		{"square with a diagonal", 4, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}, {0, 2, 1}}, []float64{2.0 / 3, 1, 2.0 / 3, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := makeGraph(t, c.n, nil, c.directed, false, c.edges)
			got := ReferenceLCC(g)
			for v := range c.want {
				if math.Abs(got[v]-c.want[v]) > 1e-15 {
					t.Errorf("vertex %d: %v, want %v", v, got[v], c.want[v])
				}
			}
			if err := VerifyLCC(g, got); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestVerifyLCCRejects(t *testing.T) {
	g := makeGraph(t, 4, []uint64{10, 20, 30, 40}, false, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}, {0, 2, 1}})
	correct := ReferenceLCC(g)
	checkCorruptions(t, correct, func(r []float64) error { return VerifyLCC(g, r) }, []corruption[float64]{
		{"one coefficient off", func(r []float64) { r[1] = 0.5 }, "vertex 20"},
		{"off by 1e-8 relative", func(r []float64) { r[0] *= 1 + 1e-8 }, "vertex 10"},
		{"NaN", func(r []float64) { r[3] = math.NaN() }, "vertex 40"},
	})
	if err := VerifyLCC(g, correct[:3]); err == nil || !strings.Contains(err.Error(), "one per vertex") {
		t.Errorf("a short result: %v", err)
	}
	if ReferenceLCC(nil) != nil {
		t.Error("ReferenceLCC(nil) is not nil")
	}
}
