package algo

import (
	"math"
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

var inf = math.Inf(1)

// ssspGraph: from 100: 100→101 (2), 100→102 (5), 101→102 (1), 102→103 (0),
// 103→104 (1.5), 104→101 (0.5); 105⇄106 with weight 0 and 105→100 (1) are
// not reachable; 107 is isolated. Dense ids 0..7.
func ssspGraph(t testing.TB) *csr.Graph {
	return makeGraph(t, 8, []uint64{100, 101, 102, 103, 104, 105, 106, 107}, true, true, []edge{
		{0, 1, 2}, {0, 2, 5}, {1, 2, 1}, {2, 3, 0}, {3, 4, 1.5}, {4, 1, 0.5},
		{5, 6, 0}, {6, 5, 0}, {5, 0, 1},
	})
}

func TestReferenceSSSP(t *testing.T) {
	tests := []struct {
		name string
		g    *csr.Graph
		src  uint32
		want []float64
	}{
		{"directed", ssspGraph(t), 0, []float64{0, 2, 3, 3, 4.5, inf, inf, inf}},
		{"directed from 105", ssspGraph(t), 5, []float64{1, 3, 4, 4, 5.5, 0, 0, inf}},
		{"undirected", makeGraph(t, 4, nil, false, true, []edge{{0, 1, 0.25}, {1, 2, 0.5}, {0, 2, 1}}), 2, []float64{0.75, 0.5, 0, inf}},
		{"unweighted counts hops", makeGraph(t, 3, nil, true, false, []edge{{0, 1, 0}, {1, 2, 0}}), 0, []float64{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ReferenceSSSP(tc.g, tc.src)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ReferenceSSSP = %v, want %v", got, tc.want)
			}
			if err := VerifySSSP(tc.g, tc.src, got); err != nil {
				t.Fatalf("VerifySSSP rejects the reference: %v", err)
			}
		})
	}
	if got := ReferenceSSSP(ssspGraph(t), 8); got != nil {
		t.Errorf("ReferenceSSSP with source out of range = %v, want nil", got)
	}
	// Negative weights give a meaningless answer but must not hang or panic.
	neg := makeGraph(t, 3, nil, true, true, []edge{{0, 1, -1}, {1, 0, -1}, {1, 2, 1}})
	if got := ReferenceSSSP(neg, 0); len(got) != 3 {
		t.Errorf("ReferenceSSSP with a negative cycle = %v, want 3 entries", got)
	}
}

func TestVerifySSSP(t *testing.T) {
	g := ssspGraph(t)
	correct := []float64{0, 2, 3, 3, 4.5, inf, inf, inf}
	verify := func(d []float64) error { return VerifySSSP(g, 0, d) }
	checkCorruptions(t, correct, verify, []corruption[float64]{
		{"source not zero", func(d []float64) { d[0] = 0.5 }, "source vertex 100 has distance 0.5, want 0"},
		{"negative", func(d []float64) { d[1] = -1 }, "vertex 101 has distance -1"},
		{"NaN", func(d []float64) { d[2] = math.NaN() }, "vertex 102 has distance NaN"},
		{"minus infinity", func(d []float64) { d[2] = math.Inf(-1) }, "vertex 102 has distance -Inf"},
		{"too long", func(d []float64) { d[2] = 5 }, "vertex 102 has distance 5, want at most 3"},
		{"too short", func(d []float64) { d[4] = 4 }, "vertex 104 has distance 4, but no in-edge realises it"},
		{"slightly too long", func(d []float64) { d[4] = 4.5 * (1 + 1e-6) }, "vertex 104"},
		{"slightly too short", func(d []float64) { d[4] = 4.5 * (1 - 1e-6) }, "vertex 104"},
		{"reachable marked infinite", func(d []float64) { d[3] = inf }, "vertex 103 is marked unreachable (infinity), want distance at most 3"},
		{"unreachable zero-weight cycle reached", func(d []float64) { d[5], d[6] = 7, 7 }, "vertex 105 has distance 7, but no path"},
		{"unreachable neighbour reached", func(d []float64) { d[6] = 1 }, "vertex 105 is marked unreachable (infinity), want distance at most 1"},
		{"isolated reached", func(d []float64) { d[7] = 1 }, "vertex 107 has distance 1, but no in-edge realises it"},
	})
	// A different rounding of the same sum is accepted.
	if err := verify([]float64{0, 2, 3, 3, 4.5 * (1 + 1e-13), inf, inf, inf}); err != nil {
		t.Errorf("rounding difference rejected: %v", err)
	}

	t.Run("bad weights", func(t *testing.T) {
		for name, w := range map[string]float64{"negative": -0.5, "NaN": math.NaN(), "infinite": inf} {
			bad := makeGraph(t, 2, []uint64{7, 8}, true, true, []edge{{0, 1, w}})
			if err := VerifySSSP(bad, 0, []float64{0, 1}); err == nil {
				t.Errorf("%s weight accepted", name)
			} else if want := "edge 7→8 has weight"; !contains(err, want) {
				t.Errorf("%s weight: error %q, want %q", name, err, want)
			}
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for name, err := range map[string]error{
			"short":     VerifySSSP(g, 0, correct[:7]),
			"source":    VerifySSSP(g, 8, correct),
			"nil graph": VerifySSSP(nil, 0, correct),
		} {
			if err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	})
}
