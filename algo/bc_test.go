package algo

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Known scores on hand-made graphs (each edge both ways, whichever way it
// is given): a path, a star, a square (two shortest paths between the
// opposite corners), a directed triangle with a self-loop and a parallel
// edge, and an isolated source.
func TestReferenceBC(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       uint32
		edges   []edge
		sources []uint32
		want    []float64
	}{
		{"path from an end", 4, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}, []uint32{0}, []float64{0, 2, 1, 0}},
		{"path from every vertex", 4, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}, []uint32{0, 1, 2, 3}, []float64{0, 4, 4, 0}},
		{"star from a leaf", 4, []edge{{0, 1, 1}, {0, 2, 1}, {0, 3, 1}}, []uint32{1}, []float64{2, 0, 0, 0}},
		{"square", 4, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}}, []uint32{0}, []float64{0, 0.5, 0, 0.5}},
		{"triangle, a self-loop, a parallel edge", 3, []edge{{0, 1, 1}, {1, 2, 1}, {2, 0, 1}, {1, 1, 1}, {0, 1, 1}}, []uint32{0}, []float64{0, 0, 0}},
		{"isolated source", 3, []edge{{1, 2, 1}}, []uint32{0}, []float64{0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := makeGraph(t, c.n, nil, true, false, c.edges)
			got := ReferenceBC(g, c.sources)
			for v := range c.want {
				if math.Abs(got[v]-c.want[v]) > 1e-12 {
					t.Fatalf("ReferenceBC = %v, want %v", got, c.want)
				}
			}
			if err := VerifyBC(g, c.sources, c.want); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ReferenceBC against the definition, Σ_s Σ_t σ_sv·σ_vt/σ_st over the
// pairs whose shortest path can pass v, from all-pairs breadth-first
// counts, on random graphs with self-loops and parallel edges.
func TestReferenceBCDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 3))
	for range 30 {
		n := uint32(2 + r.IntN(15))
		var edges []edge
		for range r.IntN(int(2 * n)) {
			edges = append(edges, edge{uint32(r.IntN(int(n))), uint32(r.IntN(int(n))), 1})
		}
		g := makeGraph(t, n, nil, true, false, edges)
		adj := undirectedSimple(g)
		dist, sigma := make([][]int, n), make([][]float64, n)
		for s := range n {
			dist[s], sigma[s] = make([]int, n), make([]float64, n)
			for v := range dist[s] {
				dist[s][v] = -1
			}
			dist[s][s], sigma[s][s] = 0, 1
			for q := []uint32{s}; len(q) > 0; q = q[1:] {
				for w := range adj[q[0]] {
					if dist[s][w] < 0 {
						dist[s][w] = dist[s][q[0]] + 1
						q = append(q, w)
					}
					if dist[s][w] == dist[s][q[0]]+1 {
						sigma[s][w] += sigma[s][q[0]]
					}
				}
			}
		}
		sources := []uint32{uint32(r.IntN(int(n))), uint32(r.IntN(int(n)))}
		want := make([]float64, n)
		for _, s := range sources {
			for v := range n {
				for t := range n {
					if v == s || v == t || t == s || dist[s][v] < 0 || dist[v][t] < 0 || dist[s][v]+dist[v][t] != dist[s][t] {
						continue
					}
					want[v] += sigma[s][v] * sigma[v][t] / sigma[s][t]
				}
			}
		}
		got := ReferenceBC(g, sources)
		for v := range n {
			if math.Abs(got[v]-want[v]) > 1e-9*(1+want[v]) {
				t.Fatalf("n=%d edges %v sources %v: vertex %d ReferenceBC %v, the definition %v", n, edges, sources, v, got[v], want[v])
			}
		}
	}
}

// VerifyBC refuses a result off by more than its tolerance, of the wrong
// length, or from a source not in the graph.
func TestVerifyBCRejects(t *testing.T) {
	g := makeGraph(t, 4, []uint64{10, 11, 12, 13}, false, false, []edge{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}})
	good := []float64{0, 2, 1, 0}
	for _, c := range []struct {
		name    string
		sources []uint32
		scores  []float64
	}{
		{"a score off", []uint32{0}, []float64{0, 2.001, 1, 0}},
		{"a leaf's score not 0", []uint32{0}, []float64{0, 2, 1, 1e-3}},
		{"NaN", []uint32{0}, []float64{0, math.NaN(), 1, 0}},
		{"too short", []uint32{0}, good[:3]},
		{"source out of range", []uint32{4}, good},
	} {
		if err := VerifyBC(g, c.sources, c.scores); err == nil {
			t.Errorf("%s: VerifyBC accepted %v", c.name, c.scores)
		}
	}
	if err := VerifyBC(g, []uint32{0}, good); err != nil {
		t.Fatal(err)
	}
}

// A vertex's word between the phases keeps its depth exactly and its
// count to 32 mantissa bits, and is never 0 (not reached) or pending.
func TestBCWord(t *testing.T) {
	for _, c := range []struct {
		depth int
		sigma float64
	}{
		{0, 1}, {1, 3}, {7, 1 << 40}, {bcMaxDepth - 1, 1e300}, {12, 123456789.0}, {3, 4294967297},
	} {
		w := bcPack(c.depth, c.sigma)
		if w == 0 || w&bcPending != 0 {
			t.Errorf("bcPack(%d, %g) = %#x", c.depth, c.sigma, w)
		}
		if d, s := bcDepth(w), bcSigma(w); d != c.depth || math.Abs(s-c.sigma) > c.sigma*0x1p-32 {
			t.Errorf("bcPack(%d, %g) decodes as (%d, %g)", c.depth, c.sigma, d, s)
		}
		if d := bcDepth(w | bcPending); d != c.depth {
			t.Errorf("pending word of depth %d decodes depth %d", c.depth, d)
		}
	}
}

// Any depth and count in range round-trip through a word.
func FuzzBCWord(f *testing.F) {
	f.Add(uint32(0), 1.0)
	f.Add(uint32(bcMaxDepth-1), 1e308)
	f.Fuzz(func(t *testing.T, depth uint32, sigma float64) {
		d := int(depth % bcMaxDepth)
		if !(sigma >= 1) || math.IsInf(sigma, 1) {
			return
		}
		w := bcPack(d, sigma)
		if bcDepth(w) != d || w == 0 || w&bcPending != 0 {
			t.Fatalf("bcPack(%d, %g) = %#x decodes depth %d", d, sigma, w, bcDepth(w))
		}
		if s := bcSigma(w); s > sigma || sigma-s > sigma*0x1p-32 {
			t.Fatalf("bcPack(%d, %g) decodes count %g", d, sigma, s)
		}
	})
}
