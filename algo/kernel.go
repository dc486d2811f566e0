package algo

import (
	"unsafe"
)

// The kernel model (DESIGN.md §7). A kernel is a vertex program: an
// initial value per vertex, the contribution an active vertex offers its
// out-neighbours, an edge map that turns the contribution into a candidate
// along each edge, a reduction that combines the candidates sent to one
// vertex, and an update that turns the reduced candidates into the next
// value. The engine owns every loop over edges: the edge map and the
// reduction are named here (Spec) and the engine runs them in loops
// specialised for each, so the common case has no call, no map operation
// and no allocation per edge. A kernel whose candidate needs the source and
// destination ids implements Edger, called once per run of edges.

// Word is the type of a vertex value: 64 bits, so one remote atomic
// updates one value on a memory node.
type Word interface{ ~float64 | ~uint64 }

// Reduction is how the candidates sent to one vertex combine (DESIGN.md
// §5: sums as float CAS loops or integer FAA on DM, minima as CAS).
type Reduction uint8

const (
	// Sum adds candidates: float64 with Spec.Float, else uint64 (wrapping).
	Sum Reduction = iota + 1
	// Min keeps the smallest candidate: float64 order with Spec.Float (the
	// engine requires values ≥ 0 or +Inf there, whose bits order alike),
	// else uint64 order.
	Min
	// Multiset keeps every candidate: the kernel's UpdateBag sees the
	// whole multiset sent to a vertex (label propagation takes its most
	// frequent label), which no word can pre-combine. The engine requires
	// AllActive and Symmetric with it: each edge then carries one candidate
	// to each end, so a vertex receives exactly its degree in candidates.
	Multiset
)

func (r Reduction) String() string {
	switch r {
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Multiset:
		return "multiset"
	}
	return "reduction?"
}

// EdgeMap is how a source's contribution c becomes the candidate sent
// along an edge of weight w.
type EdgeMap uint8

const (
	// Carry sends c itself.
	Carry EdgeMap = iota
	// AddWeight sends c + w (float64 values).
	AddWeight
	// Custom sends what the kernel's Edger computes from the source, the
	// destinations, the weights and c.
	Custom
)

func (m EdgeMap) String() string {
	switch m {
	case Carry:
		return "carry"
	case AddWeight:
		return "add-weight"
	case Custom:
		return "custom"
	}
	return "edge-map?"
}

// Spec is what the engine needs to know of a kernel besides its methods.
type Spec struct {
	Reduce Reduction
	Edge   EdgeMap
	// Float says the value words hold float64 bits.
	Float bool
	// Identity is the neutral element of Reduce, as a word.
	Identity uint64
	// Iterations is a fixed number of iterations; 0 runs until no vertex
	// is active.
	Iterations int
	// AllActive keeps every vertex active in every iteration.
	AllActive bool
	// Traversal says a vertex takes its value once, in the first iteration
	// that sends it a candidate, and that all candidates of one iteration
	// are equal (breadth-first search). The engine's pull then skips
	// vertices that have a value and stops at the first active in-neighbour
	// (the bottom-up step of direction-optimising BFS).
	Traversal bool
	// Monotone says Update is min(acc, old) under Reduce = Min: a vertex's
	// value only falls, to the smallest candidate it receives, so a
	// candidate that is not below the destination's current value changes
	// nothing and the engine may drop it before sending it.
	Monotone bool
	// Relax says a Monotone kernel's contribution is its value (WCC's
	// labels, SSSP's distances), so any order of its candidates reaches
	// the same fixed point: the engine may let a vertex see, within an
	// iteration, a value a neighbour took earlier in that iteration
	// (Gauss–Seidel, as asynchronous label propagation and Bellman–Ford
	// do), which takes fewer iterations.
	Relax bool
	// VertexIDs says a Relax kernel's values are vertex ids (WCC's labels,
	// the least id of a vertex's component) or the identity: the engine
	// may hold them in 4 bytes where it gathers them.
	VertexIDs bool
	// Dangling says Update reads Iteration.Dangling.
	Dangling bool
	// Symmetric runs the kernel on the graph with every edge in both
	// directions (weak connectivity).
	Symmetric bool
	// Weighted needs edge weights.
	Weighted bool
	// Triangles replaces the edge map with the engine's triangle operator,
	// which reads neighbours' adjacency lists: in iteration
	// TriangleDegree a vertex's accumulator receives its degree D(v) (out-
	// plus in-degree), in TriangleNeighbours |N(v)|, the number of its
	// neighbours (in or out, v itself excluded), and in TriangleArcs the
	// number of arcs (u, w) of the graph with u ≠ w both in N(v). The
	// engine orders the vertices by (value after iteration TriangleDegree,
	// id), so Update must keep the degree as the value there: any order
	// gives the same counts, but the degree order bounds the work and the
	// engine's room for its oriented lists. The engine requires Reduce =
	// Sum on integers, AllActive and Iterations = TriangleIterations.
	Triangles bool
	// EveryVertex says Update must see every vertex in every iteration
	// (Identity for one that received no candidate): the engine runs every
	// iteration dense, however few vertices are active. Brandes' backward
	// sweep needs it, where a vertex whose turn has come may receive
	// nothing.
	EveryVertex bool
	// Continue says the program is a later phase of a Phased kernel: Init
	// finds in vals each vertex's value at the end of the previous phase.
	Continue bool
}

// The iterations of a Triangles kernel.
const (
	TriangleDegree = iota
	TriangleNeighbours
	TriangleArcs
	TriangleIterations
)

// Iteration is what Update may know of the iteration as a whole.
type Iteration struct {
	// Index counts iterations from 0.
	Index int
	// N is the number of vertices.
	N uint32
	// Dangling is Σ value over the vertices without out-edges, before this
	// iteration (Spec.Dangling, float kernels).
	Dangling float64
}

// Kernel is a vertex program with typed values: what a kernel file
// defines. V is float64 or uint64 (or a type with one of those underlying
// types).
type Kernel[V Word] interface {
	Spec() Spec
	// Init is v's value before the first iteration and whether v is active
	// in it; n is the number of vertices.
	Init(v, n uint32) (V, bool)
	// Contribution is what an active vertex with value val and out-degree
	// deg offers along each of its out-edges, before the edge map.
	Contribution(val V, deg uint32) V
	// Update is the next value of a vertex from the reduction of the
	// candidates it received this iteration (Identity when none) and its
	// current value. A vertex whose value changes is active in the next
	// iteration.
	Update(acc, old V, it *Iteration) V
}

// Edger is implemented by kernels with Spec.Edge == Custom: the candidates
// along the edges from src (contribution c) to dst[i] with weight w[i] (w
// is nil on unweighted graphs), written to out[i]. The engine calls it once
// per run of edges that share a source and a destination chunk.
type Edger interface {
	Edges(src uint32, c uint64, dst []uint32, w []float32, out []uint64)
}

// Bagger is implemented by kernels with Spec.Reduce == Multiset: the next
// value of vertex v from the multiset of candidates sent to it in this
// iteration (in no particular order; UpdateBag may reorder them, and they
// are empty for a vertex without neighbours) and its current value.
type Bagger[V Word] interface {
	UpdateBag(v uint32, cands []V, old V, it *Iteration) V
}

// Bags are the candidates sent to a range of vertices in one iteration of
// a Multiset kernel: those of the range's i-th vertex are
// Slots[Start[i]:End[i]].
type Bags struct {
	Start, End []uint64
	Slots      []uint64
}

// Of is the multiset of the range's i-th vertex.
func (b Bags) Of(i int) []uint64 { return b.Slots[b.Start[i]:b.End[i]] }

// BagUpdater is a Program whose kernel is a Bagger, as the engine runs it:
// next[i] from bags.Of(i) and old[i], for vertex lo+i.
type BagUpdater interface {
	UpdateBags(lo uint32, bags Bags, old, next []uint64, it *Iteration)
}

// Program is a kernel over value words, as the engine runs it. Each method
// covers a range of vertices, so the engine calls it once per range, never
// per edge.
type Program interface {
	Spec() Spec
	// Init sets vals[i] and active[i] for vertex lo+i (n vertices in all).
	Init(lo, n uint32, vals []uint64, active []bool)
	// Contributions sets out[i] to the contribution of a vertex with value
	// vals[i] and out-degree degs[i].
	Contributions(vals []uint64, degs []uint32, out []uint64)
	// Update sets next[i] from acc[i] and old[i].
	Update(acc, old, next []uint64, it *Iteration)
}

// Phased is a kernel that runs as a sequence of programs, each a run of
// the engine over the same graph (betweenness centrality: a count of
// shortest paths from a source, then a sweep back by depth, per source).
// The Phased value is itself the first phase's program. Every rank calls
// Next after each phase with the number of iterations it ran, which every
// rank knows alike, so they agree on the next phase; vals are the phase's
// final values on the rank that gathers them (world rank 0), nil
// elsewhere. A later phase's Spec sets Continue.
type Phased interface {
	Program
	// Next is the program of the next phase, or nil when the kernel is
	// done; an error (the same on every rank) ends the run.
	Next(iters int, vals []uint64) (Program, error)
	// Result is the kernel's value words after its last phase, on the
	// rank that was given vals.
	Result() []uint64
}

// Words adapts a typed kernel to the engine: the ranges of words are the
// kernel's values in place (V is 8 bytes like the words).
func Words[V Word](k Kernel[V]) Program { return words[V]{k} }

type words[V Word] struct{ k Kernel[V] }

// Edger passes a kernel's Edger through the adapter.
func (w words[V]) Edger() (Edger, bool) {
	e, ok := w.k.(Edger)
	return e, ok
}

// Unwrap is the typed kernel (for tests and reports).
func (w words[V]) Unwrap() any { return w.k }

func (w words[V]) Spec() Spec { return w.k.Spec() }

func (w words[V]) Init(lo, n uint32, vals []uint64, active []bool) {
	vs := asValues[V](vals)
	for i := range vs {
		vs[i], active[i] = w.k.Init(lo+uint32(i), n)
	}
}

func (w words[V]) Contributions(vals []uint64, degs []uint32, out []uint64) {
	vs, os := asValues[V](vals), asValues[V](out)
	for i, v := range vs {
		os[i] = w.k.Contribution(v, degs[i])
	}
}

func (w words[V]) Update(acc, old, next []uint64, it *Iteration) {
	as, ols, ns := asValues[V](acc), asValues[V](old), asValues[V](next)
	for i, a := range as {
		ns[i] = w.k.Update(a, ols[i], it)
	}
}

// BagUpdater passes a Bagger kernel through the adapter.
func (w words[V]) BagUpdater() (BagUpdater, bool) {
	b, ok := w.k.(Bagger[V])
	if !ok {
		return nil, false
	}
	return bagWords[V]{b}, true
}

type bagWords[V Word] struct{ k Bagger[V] }

func (b bagWords[V]) UpdateBags(lo uint32, bags Bags, old, next []uint64, it *Iteration) {
	ols, ns := asValues[V](old), asValues[V](next)
	for i := range ols {
		ns[i] = b.k.UpdateBag(lo+uint32(i), asValues[V](bags.Of(i)), ols[i], it)
	}
}

// asValues views words as values of V (both are 8 bytes).
func asValues[V Word](ws []uint64) []V {
	if len(ws) == 0 {
		return nil
	}
	return unsafe.Slice((*V)(unsafe.Pointer(&ws[0])), len(ws))
}

// BagUpdaterOf is p's BagUpdater, when its kernel is a Bagger.
func BagUpdaterOf(p Program) (BagUpdater, bool) {
	switch x := p.(type) {
	case interface{ BagUpdater() (BagUpdater, bool) }:
		return x.BagUpdater()
	case BagUpdater:
		return x, true
	}
	return nil, false
}

// EdgerOf is p's Edger, when the kernel has one.
func EdgerOf(p Program) (Edger, bool) {
	switch x := p.(type) {
	case interface{ Edger() (Edger, bool) }:
		return x.Edger()
	case Edger:
		return x, true
	}
	return nil, false
}
