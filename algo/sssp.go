// Single-source shortest paths, as defined by the LDBC Graphalytics
// benchmark specification (v1.0, arXiv:2011.15028), §2.3.6 "Single-Source
// Shortest Paths (SSSP)", and DESIGN.md §7: the output of each vertex is the
// length of a shortest path from the source following edge direction, where
// the length of a path is the sum of its edges' non-negative float64
// weights; the source has distance 0 and a vertex the source cannot reach
// has distance +Inf (written "infinity").

package algo

import (
	"container/heap"
	"math"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// SSSP is the vertex program: Bellman-Ford relaxation. The source has
// distance 0, every other vertex +Inf; each active vertex offers its
// distance, the edge adds its weight, and a vertex keeps the smallest.
type SSSP struct{ Source uint32 }

func (SSSP) Spec() Spec {
	return Spec{Reduce: Min, Edge: AddWeight, Float: true, Identity: math.Float64bits(math.Inf(1)), Weighted: true, Monotone: true, Relax: true}
}

func (s SSSP) Init(v, _ uint32) (float64, bool) {
	if v == s.Source {
		return 0, true
	}
	return math.Inf(1), false
}

func (SSSP) Contribution(dist float64, _ uint32) float64 { return dist }

func (SSSP) Update(acc, old float64, _ *Iteration) float64 { return min(acc, old) }

func ssspAlgorithm() Algorithm {
	return Algorithm{
		Name: "sssp", Kind: KindSSSP, Source: true, Weighted: true, NonNegativeWeights: true,
		SourceProperty: func(m *csr.Meta) (uint64, bool) { return m.SSSPSource, m.HasSSSPSource },
		Configure:      noParams,
		New:            func(p Params) Program { return Words[float64](SSSP{Source: p.Source}) },
		Verify: func(g *csr.Graph, p Params, vals []uint64) error {
			return VerifySSSP(g, p.Source, Floats(vals))
		},
	}
}

// SSSPTolerance is the relative slack VerifySSSP allows when comparing a
// distance with dist(u)+w(u,v). A correct engine computes every distance as
// a float64 sum along one path and takes exact minima, so it meets the
// checks exactly; the slack only forgives a different rounding of the same
// sum (for example a fused or reassociated addition), which is orders of
// magnitude below both the smallest relative difference between distinct
// path lengths in practice and the 1e-4 tolerance of Graphalytics
// validation.
const SSSPTolerance = 1e-9

// edgeWeight is the weight of the i-th stored edge: 1 for an unweighted graph.
func edgeWeight(g *csr.Graph, i uint64) float64 {
	if g.Weights == nil {
		return 1
	}
	return g.Weights[i]
}

// ReferenceSSSP returns the distance of every vertex from src with Dijkstra's
// algorithm (a binary heap, each vertex settled once). An unweighted graph
// counts every edge as weight 1. It returns nil if g is nil or malformed or
// src is not a vertex of g; with negative or NaN weights the result is
// meaningless (VerifySSSP rejects such graphs) but the call still returns.
func ReferenceSSSP(g *csr.Graph, src uint32) []float64 {
	if checkGraph(g) != nil || src >= g.N {
		return nil
	}
	dist := make([]float64, g.N)
	for v := range dist {
		dist[v] = math.Inf(1)
	}
	settled := make([]bool, g.N)
	dist[src] = 0
	pq := &distHeap{{v: src, d: 0}}
	for pq.Len() > 0 {
		it := heap.Pop(pq).(distItem)
		u := it.v
		if settled[u] {
			continue
		}
		settled[u] = true
		for i := g.Offsets[u]; i < g.Offsets[u+1]; i++ {
			v := g.Dst[i]
			if d := dist[u] + edgeWeight(g, i); !settled[v] && d < dist[v] {
				dist[v] = d
				heap.Push(pq, distItem{v: v, d: d})
			}
		}
	}
	return dist
}

type distItem struct {
	v uint32
	d float64
}

// distHeap is a min-heap of tentative distances for ReferenceSSSP.
type distHeap []distItem

func (h distHeap) Len() int           { return len(h) }
func (h distHeap) Less(i, j int) bool { return h[i].d < h[j].d }
func (h distHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *distHeap) Push(x any)        { *h = append(*h, x.(distItem)) }
func (h *distHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// VerifySSSP checks dist, one entry per vertex of g, as the SSSP result from
// src, without recomputing distances. It checks that
//
//   - every weight is a non-negative number (an unweighted graph counts
//     every edge as weight 1);
//   - the source has distance 0 and every entry is a non-negative number or
//     +Inf;
//   - the triangle inequality dist[v] <= dist[u] + w holds, within
//     SSSPTolerance, on every edge u→v from a reached u (so every reachable
//     vertex is reached, no further than its true distance);
//   - every reached vertex other than the source is realised by an in-edge,
//     dist[v] = dist[u] + w within SSSPTolerance, and those tight edges
//     connect it to the source (so every reached vertex is really reachable,
//     at no less than its true distance; zero-weight cycles cannot vouch for
//     each other).
//
// The error names the first offending vertex by external id.
func VerifySSSP(g *csr.Graph, src uint32, dist []float64) error {
	if err := checkGraph(g); err != nil {
		return err
	}
	if uint64(len(dist)) != uint64(g.N) {
		return errors.Errorf("algo: SSSP result has %d entries, want one per vertex (%d)", len(dist), g.N)
	}
	if src >= g.N {
		return errors.Errorf("algo: SSSP source %d is not a vertex (graph has %d)", src, g.N)
	}
	for u := uint32(0); u < g.N; u++ {
		for i := g.Offsets[u]; i < g.Offsets[u+1]; i++ {
			if w := edgeWeight(g, i); !(w >= 0) || math.IsInf(w, 1) {
				return errors.Errorf("algo: SSSP edge %d→%d has weight %v, want a finite non-negative weight",
					g.ExternalID(u), g.ExternalID(g.Dst[i]), w)
			}
		}
	}
	if dist[src] != 0 {
		return errors.Errorf("algo: SSSP source vertex %d has distance %v, want 0", g.ExternalID(src), dist[src])
	}
	for v, d := range dist {
		if !(d >= 0) {
			return errors.Errorf("algo: SSSP vertex %d has distance %v, want a non-negative distance or +Inf (unreachable)",
				g.ExternalID(uint32(v)), d)
		}
	}
	// tight reports whether dist[v] is realised by dist[u]+w.
	tight := func(du, w, dv float64) bool {
		c := du + w
		return math.Abs(dv-c) <= SSSPTolerance*c
	}
	hasTight := make([]bool, g.N)
	hasTight[src] = true
	for u := uint32(0); u < g.N; u++ {
		du := dist[u]
		if math.IsInf(du, 1) {
			continue
		}
		for i := g.Offsets[u]; i < g.Offsets[u+1]; i++ {
			v, w := g.Dst[i], edgeWeight(g, i)
			c := du + w
			switch dv := dist[v]; {
			case math.IsInf(dv, 1):
				return errors.Errorf("algo: SSSP vertex %d is marked unreachable (infinity), want distance at most %v: it has an in-edge of weight %v from vertex %d at distance %v",
					g.ExternalID(v), c, w, g.ExternalID(u), du)
			case dv > c+SSSPTolerance*c:
				return errors.Errorf("algo: SSSP vertex %d has distance %v, want at most %v: it has an in-edge of weight %v from vertex %d at distance %v",
					g.ExternalID(v), dv, c, w, g.ExternalID(u), du)
			case tight(du, w, dv):
				hasTight[v] = true
			}
		}
	}
	for v, ok := range hasTight {
		if !ok && !math.IsInf(dist[v], 1) {
			return errors.Errorf("algo: SSSP vertex %d has distance %v, but no in-edge realises it (dist(u)+w): want the length of some path from the source, or infinity if unreachable",
				g.ExternalID(uint32(v)), dist[v])
		}
	}
	// Every reached vertex must hang off the source through tight edges.
	seen := make([]bool, g.N)
	seen[src] = true
	stack := []uint32{src}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for i := g.Offsets[u]; i < g.Offsets[u+1]; i++ {
			if v := g.Dst[i]; !seen[v] && tight(dist[u], edgeWeight(g, i), dist[v]) {
				seen[v] = true
				stack = append(stack, v)
			}
		}
	}
	for v, ok := range seen {
		if !ok && !math.IsInf(dist[v], 1) {
			return errors.Errorf("algo: SSSP vertex %d has distance %v, but no path of edges realising the distances leads to it from the source %d: want infinity if unreachable",
				g.ExternalID(uint32(v)), dist[v], g.ExternalID(src))
		}
	}
	return nil
}
