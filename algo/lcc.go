// Local clustering coefficient, as defined by the LDBC Graphalytics
// benchmark specification (v1.0, arXiv:2011.15028), §2.3.6 "Local
// Clustering Coefficient (LCC)": the neighbours of v are
// N(v) = {u ≠ v : (u, v) ∈ E or (v, u) ∈ E}; LCC(v) is 0 when
// |N(v)| < 2, else the number of arcs (u, w) ∈ E with u and w in N(v),
// over the |N(v)|·(|N(v)| − 1) there could be. An undirected graph has
// every edge in both directions, so each edge between two neighbours
// counts twice. A self-loop joins no two neighbours and never counts, so
// LCC(v) ∈ [0, 1].

package algo

import (
	"math"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// LCC is the vertex program: the engine's triangle operator (Spec.
// Triangles) gives each vertex its degree, then its number of neighbours
// d, then the number of arcs a between its neighbours; the value is kept
// as d until a turns it into a / (d·(d − 1)), as float64 bits.
type LCC struct{}

func (LCC) Spec() Spec {
	return Spec{Reduce: Sum, Iterations: TriangleIterations, AllActive: true, Triangles: true}
}

func (LCC) Init(_, _ uint32) (uint64, bool) { return 0, true }

func (LCC) Contribution(uint64, uint32) uint64 { return 0 }

// Update keeps the degree (the operator's order) and then |N(v)| as the
// value, and turns the arcs between neighbours into the coefficient.
func (LCC) Update(acc, old uint64, it *Iteration) uint64 {
	if it.Index < TriangleArcs {
		return acc
	}
	return math.Float64bits(clustering(acc, old))
}

// clustering is arcs / (d·(d − 1)), 0 when d < 2.
func clustering(arcs, d uint64) float64 {
	if d < 2 {
		return 0
	}
	return float64(arcs) / (float64(d) * float64(d-1))
}

func lccAlgorithm() Algorithm {
	return Algorithm{
		Name: "lcc", Kind: KindLCC,
		Configure: noParams,
		New:       func(Params) Program { return Words[uint64](LCC{}) },
		Verify: func(g *csr.Graph, _ Params, vals []uint64) error {
			return VerifyLCC(g, Floats(vals))
		},
	}
}

// ReferenceLCC computes every vertex's coefficient serially on g: N(v) as
// marks in an array, from g's out-lists and its transpose, and for each
// neighbour u every arc (u, w) of g tested against the marks. It returns
// nil if g is malformed.
func ReferenceLCC(g *csr.Graph) []float64 {
	if checkGraph(g) != nil {
		return nil
	}
	// The in-neighbours of every vertex (the out-lists hold both directions
	// of an undirected graph already).
	var in [][]uint32
	if g.Directed {
		in = make([][]uint32, g.N)
		for u := range g.N {
			for _, w := range g.Neighbors(u) {
				in[w] = append(in[w], u)
			}
		}
	}
	mark := make([]uint32, g.N) // mark[u] == v+1: u ∈ N(v)
	var nb []uint32
	out := make([]float64, g.N)
	for v := range g.N {
		nb = nb[:0]
		add := func(u uint32) {
			if u != v && mark[u] != v+1 {
				mark[u] = v + 1
				nb = append(nb, u)
			}
		}
		for _, u := range g.Neighbors(v) {
			add(u)
		}
		if in != nil {
			for _, u := range in[v] {
				add(u)
			}
		}
		var arcs uint64
		for _, u := range nb {
			prev := ^uint32(0)
			for _, w := range g.Neighbors(u) {
				if w != u && w != prev && mark[w] == v+1 {
					arcs++
				}
				prev = w // parallel arcs count once
			}
		}
		out[v] = clustering(arcs, uint64(len(nb)))
	}
	return out
}

// LCCTolerance is the relative difference VerifyLCC allows between a
// coefficient and the reference's (both divide the same integers, so a
// correct result matches exactly).
const LCCTolerance = 1e-9

// VerifyLCC checks lcc, one coefficient per vertex of g, against
// ReferenceLCC; the error names the first vertex that differs, by
// external id.
func VerifyLCC(g *csr.Graph, lcc []float64) error {
	if err := checkGraph(g); err != nil {
		return err
	}
	if uint64(len(lcc)) != uint64(g.N) {
		return errors.Errorf("algo: LCC result has %d entries, want one per vertex (%d)", len(lcc), g.N)
	}
	want := ReferenceLCC(g)
	for v, x := range lcc {
		if math.IsNaN(x) || math.Abs(x-want[v]) > LCCTolerance*math.Abs(want[v]) {
			return errors.Errorf("algo: LCC of vertex %d is %.17g, want %.17g (within %g relative)", g.ExternalID(uint32(v)), x, want[v], LCCTolerance)
		}
	}
	return nil
}
