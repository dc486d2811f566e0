// Triangle counting, as the GAP benchmark suite's tc defines it (Beamer,
// Asanović and Patterson, "The GAP Benchmark Suite", arXiv:1508.03619,
// §"Triangle Counting"): the graph is taken as undirected and simple (every
// edge both ways, no self-loops, no parallel edges), and a triangle is
// three vertices joined pairwise. TC(v) is the number of triangles v is
// in; their total, Σ TC(v) / 3, is what GAPBS reports.

package algo

import (
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// TC is the vertex program: LCC's (its spec, start and contributions:
// the engine's triangle operator, Spec.Triangles, gives each vertex the
// arcs between its neighbours), with its own last step. In an undirected
// graph each edge between two neighbours is two arcs, and closes one
// triangle through v.
type TC struct{ LCC }

// Update keeps what the operator hands over until the arcs between the
// neighbours, which it halves.
func (TC) Update(acc, _ uint64, it *Iteration) uint64 {
	if it.Index < TriangleArcs {
		return acc
	}
	return acc / 2
}

func tcAlgorithm() Algorithm {
	return Algorithm{
		Name: "tc", Aliases: []string{"triangles"}, Kind: KindTC, Symmetric: true,
		Configure: noParams,
		New:       func(Params) Program { return Words[uint64](TC{}) },
		Verify:    func(g *csr.Graph, _ Params, vals []uint64) error { return VerifyTC(g, vals) },
	}
}

// ReferenceTC counts every vertex's triangles serially on g, taken as
// undirected and simple: for each edge {u, w} (u < w, each once, whichever
// way g holds it), the vertices x > w adjacent to both close a triangle,
// which counts for u, w and x. Adjacency is a set per vertex. It returns nil
// if g is malformed.
func ReferenceTC(g *csr.Graph) []uint64 {
	if checkGraph(g) != nil {
		return nil
	}
	adj := undirectedSimple(g)
	tc := make([]uint64, g.N)
	for u := range g.N {
		for w := range adj[u] {
			if w <= u {
				continue
			}
			for x := range adj[w] {
				if x > w && adj[u][x] {
					tc[u]++
					tc[w]++
					tc[x]++
				}
			}
		}
	}
	return tc
}

// VerifyTC checks tc, one count per vertex of g, against ReferenceTC; the
// error names the first vertex that differs, by external id.
func VerifyTC(g *csr.Graph, tc []uint64) error {
	if err := checkGraph(g); err != nil {
		return err
	}
	if uint64(len(tc)) != uint64(g.N) {
		return errors.Errorf("algo: TC result has %d entries, want one per vertex (%d)", len(tc), g.N)
	}
	want := ReferenceTC(g)
	for v, c := range tc {
		if c != want[v] {
			return errors.Errorf("algo: vertex %d is in %d triangles, want %d", g.ExternalID(uint32(v)), c, want[v])
		}
	}
	return nil
}
