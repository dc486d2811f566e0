// Betweenness centrality, as Brandes defines it ("A faster algorithm for
// betweenness centrality", J. Math. Sociol. 25(2), 2001) and the GAP
// benchmark suite's bc computes it from a set of sources: the graph is
// taken as undirected and unweighted; σ_st is the number of shortest paths
// from s to t and σ_st(v) the number of them through v; the dependency of
// s on v is δ_s(v) = Σ_{t≠s,v} σ_st(v)/σ_st, and BC(v) = Σ_{s∈S} δ_s(v),
// over the sources S, neither normalised nor halved. A source adds nothing
// to its own score.

package algo

import (
	"math"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// BC runs Brandes' two sweeps per source as two phases of the engine, with
// the counts and dependencies as vertex values:
//
//   - paths: a breadth-first count. In iteration i the vertices at depth i
//     offer σ(u); a vertex without a count takes depth i+1 and σ(v) = Σ
//     of what it received, σ(v) = Σ_{u: d(u)=d(v)-1} σ(u).
//   - dependencies, by depth from the deepest D down: a vertex at depth ℓ
//     offers u(w) = (1+δ(w))/σ(w), and a vertex at depth ℓ-1 takes
//     u(v) = 1/σ(v) + Σ u(w), which is Brandes' δ(v) = Σ σ(v)/σ(w)·(1+δ(w))
//     with σ(v) factored out: δ(v) = σ(v)·(u(v) - 1/σ(v)). Neighbours at
//     depths ℓ and ℓ+1 are done already and ignore what they receive.
//
// Between the phases a vertex's word holds its depth and its count
// (bcWord); rank 0 keeps the counts and adds each source's δ.
type BC struct {
	Sources []uint32
	Program     // the phase running
	next    int // the source whose paths phase runs, or ran last

	// On the rank given the values: the counts' words of the last paths
	// phase, and Σ δ so far.
	counts []uint64
	score  []float64
}

// NewBC is the kernel for the sources given (at least one).
func NewBC(sources []uint32) *BC {
	return &BC{Sources: sources, Program: bcPaths{source: sources[0]}}
}

// bcWord is a vertex's state between the phases: its depth in bits
// 43..62 and its count in bits 0..42, a float64 without its sign bit
// (σ ≥ 1) and its 20 lowest mantissa bits (a relative precision of 2^-32,
// far below the verifier's tolerance). 0 is a vertex not reached. In the
// dependencies phase, bit 63 (bcPending) marks a vertex whose turn has not
// come; once it has, the word is u(v)'s float64 bits (positive, so the
// mark is clear).
const (
	bcDepthBits = 20
	bcDropBits  = 20
	bcSigmaBits = 63 - bcDepthBits
	bcMaxDepth  = 1<<bcDepthBits - 1
	bcPending   = uint64(1) << 63
)

func bcPack(depth int, sigma float64) uint64 {
	return uint64(depth)<<bcSigmaBits | math.Float64bits(sigma)>>bcDropBits
}

func bcDepth(w uint64) int { return int(w &^ bcPending >> bcSigmaBits) }

func bcSigma(w uint64) float64 {
	return math.Float64frombits((w & (1<<bcSigmaBits - 1)) << bcDropBits)
}

// bcSpec is both phases': sums of float64 along every edge both ways.
func bcSpec() Spec { return Spec{Reduce: Sum, Float: true, Symmetric: true} }

// bcPaths is the paths phase from one source.
type bcPaths struct{ source uint32 }

func (bcPaths) Spec() Spec { return bcSpec() }

func (p bcPaths) Init(lo, _ uint32, vals []uint64, active []bool) {
	for i := range vals {
		vals[i], active[i] = 0, lo+uint32(i) == p.source
		if active[i] {
			vals[i] = bcPack(0, 1)
		}
	}
}

func (bcPaths) Contributions(vals []uint64, _ []uint32, out []uint64) {
	for i, w := range vals {
		out[i] = 0
		if w != 0 {
			out[i] = math.Float64bits(bcSigma(w))
		}
	}
}

func (bcPaths) Update(acc, old, next []uint64, it *Iteration) {
	for i, a := range acc {
		next[i] = old[i]
		if old[i] == 0 && a != 0 && it.Index < bcMaxDepth {
			next[i] = bcPack(it.Index+1, math.Float64frombits(a))
		}
	}
}

// bcDeps is the dependencies phase, from depth deepest.
type bcDeps struct{ deepest int }

func (d bcDeps) Spec() Spec {
	s := bcSpec()
	s.Iterations, s.EveryVertex, s.Continue = d.deepest, true, true
	return s
}

func (d bcDeps) Init(_, _ uint32, vals []uint64, active []bool) {
	for i, w := range vals {
		switch {
		case w == 0: // not reached: done, with u = 0
		case bcDepth(w) == d.deepest:
			vals[i], active[i] = math.Float64bits(1/bcSigma(w)), true
		default:
			vals[i] = w | bcPending
		}
	}
}

func (bcDeps) Contributions(vals []uint64, _ []uint32, out []uint64) {
	for i, w := range vals {
		out[i] = w
		if w&bcPending != 0 {
			out[i] = 0
		}
	}
}

// Update gives the vertices of depth deepest-1-i their u in iteration i.
func (d bcDeps) Update(acc, old, next []uint64, it *Iteration) {
	turn := d.deepest - 1 - it.Index
	for i, w := range old {
		next[i] = w
		if w&bcPending != 0 && bcDepth(w) == turn {
			next[i] = math.Float64bits(1/bcSigma(w) + math.Float64frombits(acc[i]))
		}
	}
}

// Next follows a paths phase with its dependencies phase, and that with
// the next source's paths phase; rank 0 adds each source's dependencies
// to the scores.
func (b *BC) Next(iters int, vals []uint64) (Program, error) {
	switch b.Program.(type) {
	case bcPaths:
		// The last iteration's frontier reached nobody: the deepest
		// vertices are at depth iters-1.
		if iters-1 >= bcMaxDepth {
			return nil, errors.Errorf("algo: bc from vertex %d goes at least %d levels deep; at most %d are supported", b.Sources[b.next], iters-1, bcMaxDepth-1)
		}
		b.counts, b.Program = vals, bcDeps{deepest: iters - 1}
		return b.Program, nil
	}
	if vals != nil {
		b.addDependencies(b.Sources[b.next], vals)
	}
	if b.next++; b.next == len(b.Sources) {
		return nil, nil
	}
	b.Program = bcPaths{source: b.Sources[b.next]}
	return b.Program, nil
}

// addDependencies adds δ_s(v) = σ(v)·(u(v) - 1/σ(v)) of every vertex
// reached from s but s itself.
func (b *BC) addDependencies(s uint32, us []uint64) {
	if b.score == nil {
		b.score = make([]float64, len(us))
	}
	for v, w := range b.counts {
		if w == 0 || uint32(v) == s {
			continue
		}
		sigma := bcSigma(w)
		b.score[v] += sigma * (math.Float64frombits(us[v]) - 1/sigma)
	}
}

// Result is every vertex's score, on rank 0.
func (b *BC) Result() []uint64 {
	if b.score == nil {
		return nil
	}
	out := make([]uint64, len(b.score))
	for v, x := range b.score {
		out[v] = math.Float64bits(x)
	}
	return out
}

func bcAlgorithm() Algorithm {
	return Algorithm{
		Name: "bc", Aliases: []string{"betweenness"}, Kind: KindBC, Source: true, Sources: true, Symmetric: true,
		SourceProperty: func(m *csr.Meta) (uint64, bool) { return m.BFSSource, m.HasBFSSource },
		Configure:      noParams,
		New:            func(p Params) Program { return NewBC(p.AllSources()) },
		Verify: func(g *csr.Graph, p Params, vals []uint64) error {
			return VerifyBC(g, p.AllSources(), Floats(vals))
		},
	}
}

// BCTolerance is the relative slack VerifyBC allows (plus BCTolerance in
// absolute terms, for scores near 0): the engine sums the same terms in
// another order, with counts rounded to 32 mantissa bits.
const BCTolerance = 1e-6

// ReferenceBC is Brandes' algorithm, serially, on g taken as undirected
// and simple (a set of neighbours per vertex): per source a queue-based
// breadth-first search that counts paths and records the order vertices
// were reached in, then that order backwards, accumulating dependencies.
// It returns nil if g is malformed or a source is not a vertex of g.
func ReferenceBC(g *csr.Graph, sources []uint32) []float64 {
	if checkGraph(g) != nil {
		return nil
	}
	adj := undirectedSimple(g)
	score := make([]float64, g.N)
	for _, s := range sources {
		if s >= g.N {
			return nil
		}
		depth := make([]int, g.N)
		for v := range depth {
			depth[v] = -1
		}
		sigma, delta := make([]float64, g.N), make([]float64, g.N)
		depth[s], sigma[s] = 0, 1
		order := []uint32{s}
		for i := 0; i < len(order); i++ {
			u := order[i]
			for w := range adj[u] {
				if depth[w] < 0 {
					depth[w] = depth[u] + 1
					order = append(order, w)
				}
				if depth[w] == depth[u]+1 {
					sigma[w] += sigma[u]
				}
			}
		}
		for i := len(order) - 1; i > 0; i-- {
			w := order[i]
			for v := range adj[w] {
				if depth[v] == depth[w]-1 {
					delta[v] += sigma[v] / sigma[w] * (1 + delta[w])
				}
			}
			score[w] += delta[w]
		}
	}
	return score
}

// undirectedSimple is g's adjacency as sets, each edge both ways, without
// self-loops.
func undirectedSimple(g *csr.Graph) []map[uint32]bool {
	adj := make([]map[uint32]bool, g.N)
	for v := range g.N {
		adj[v] = map[uint32]bool{}
	}
	for u := range g.N {
		for _, w := range g.Neighbors(u) {
			if u != w {
				adj[u][w], adj[w][u] = true, true
			}
		}
	}
	return adj
}

// VerifyBC checks scores, one per vertex of g, against ReferenceBC
// within BCTolerance.
func VerifyBC(g *csr.Graph, sources []uint32, scores []float64) error {
	if err := checkGraph(g); err != nil {
		return err
	}
	if uint32(len(scores)) != g.N {
		return errors.Errorf("algo: bc result has %d scores, want one per vertex (%d)", len(scores), g.N)
	}
	want := ReferenceBC(g, sources)
	if want == nil {
		return errors.Errorf("algo: bc sources %v are not all vertices of the %d", sources, g.N)
	}
	for v, x := range scores {
		if d := math.Abs(x - want[v]); !(d <= BCTolerance*(math.Abs(want[v])+1)) {
			return errors.Errorf("algo: bc vertex %d has score %.15g, want %.15g (the serial Brandes)", g.ExternalID(uint32(v)), x, want[v])
		}
	}
	return nil
}
