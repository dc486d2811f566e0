// Community detection by label propagation, as defined by the LDBC
// Graphalytics benchmark specification (v1.0, arXiv:2011.15028), §2.3.5
// "Community Detection using Label Propagation (CDLP)": every vertex starts
// with its own id as label, L0(v) = v; in each of a fixed number of
// synchronous iterations it takes the label that is most frequent among its
// neighbours' labels of the previous iteration, ties going to the smallest
// label. On a directed graph both in- and out-neighbours count, and a
// neighbour joined in both directions counts twice; a vertex without
// neighbours keeps its label.

package algo

import (
	"slices"
	"strconv"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// CDLP is the vertex program: every vertex sends its label along every
// edge, in both directions (Symmetric, with the parallel edges a directed
// graph gets where two vertices are joined both ways), and takes the mode
// of the multiset it receives. Labels are dense ids, which ascend with the
// external ids, so the smallest dense label is the smallest external one.
type CDLP struct{ Iterations int }

func (c CDLP) Spec() Spec {
	return Spec{Reduce: Multiset, Iterations: c.Iterations, AllActive: true, Symmetric: true}
}

func (CDLP) Init(v, _ uint32) (uint64, bool) { return uint64(v), true }

func (CDLP) Contribution(label uint64, _ uint32) uint64 { return label }

// Update is not called for a Multiset kernel (UpdateBag is).
func (CDLP) Update(_, old uint64, _ *Iteration) uint64 { return old }

// UpdateBag is the most frequent label, the smallest among equals.
func (CDLP) UpdateBag(_ uint32, labels []uint64, old uint64, _ *Iteration) uint64 {
	if len(labels) == 0 {
		return old
	}
	slices.Sort(labels)
	best, bestN := labels[0], 0
	for i := 0; i < len(labels); {
		j := i + 1
		for j < len(labels) && labels[j] == labels[i] {
			j++
		}
		if j-i > bestN {
			best, bestN = labels[i], j-i
		}
		i = j
	}
	return best
}

func cdlpAlgorithm() Algorithm {
	return Algorithm{
		Name: "cdlp", Kind: KindCDLP, Symmetric: true, Multigraph: true, Iterative: true,
		Configure: func(p Params, m *csr.Meta) (Params, error) {
			if p.Iterations == 0 {
				p.Iterations = 10
				if m != nil && m.HasCDLP {
					p.Iterations = m.CDLPIterations
				}
			}
			if p.Iterations < 1 {
				return p, errors.Errorf("algo: CDLP needs iterations ≥ 1, got %d", p.Iterations)
			}
			return p, nil
		},
		New: func(p Params) Program { return Words[uint64](CDLP{Iterations: p.Iterations}) },
		Verify: func(g *csr.Graph, p Params, vals []uint64) error {
			return VerifyCDLP(g, p.Iterations, vals)
		},
	}
}

// ReferenceCDLP runs the label propagation serially on g, read as CDLP
// reads it (every edge in both directions, parallel edges kept): each
// vertex's labels counted in a map, the mode taken with ties to the
// smallest. Labels are dense ids. It returns nil if g is malformed.
func ReferenceCDLP(g *csr.Graph, iterations int) []uint64 {
	if checkGraph(g) != nil {
		return nil
	}
	cur := make([]uint64, g.N)
	for v := range cur {
		cur[v] = uint64(v)
	}
	next := make([]uint64, g.N)
	count := make(map[uint64]int)
	for range iterations {
		for v := uint32(0); v < g.N; v++ {
			nb := g.Neighbors(v)
			if len(nb) == 0 {
				next[v] = cur[v]
				continue
			}
			clear(count)
			best, bestN := uint64(0), 0
			for _, u := range nb {
				l := cur[u]
				count[l]++
				if n := count[l]; n > bestN || (n == bestN && l < best) {
					best, bestN = l, n
				}
			}
			next[v] = best
		}
		cur, next = next, cur
	}
	return cur
}

// VerifyCDLP checks labels, one dense label per vertex of g, against
// ReferenceCDLP; the error names the first vertex that differs, by
// external id.
func VerifyCDLP(g *csr.Graph, iterations int, labels []uint64) error {
	if err := checkGraph(g); err != nil {
		return err
	}
	if uint64(len(labels)) != uint64(g.N) {
		return errors.Errorf("algo: CDLP result has %d entries, want one per vertex (%d)", len(labels), g.N)
	}
	want := ReferenceCDLP(g, iterations)
	for v, l := range labels {
		if l != want[v] {
			got := "out of range"
			if l < uint64(g.N) {
				got = "vertex " + strconv.FormatUint(g.ExternalID(uint32(l)), 10)
			}
			return errors.Errorf("algo: CDLP vertex %d has label %s after %d iterations, want vertex %d's",
				g.ExternalID(uint32(v)), got, iterations, g.ExternalID(uint32(want[v])))
		}
	}
	return nil
}
