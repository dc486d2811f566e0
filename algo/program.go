package algo

import "math"

// Reduction combines update candidates for one destination vertex.
type Reduction int

const (
	// Sum adds candidates (float64 values).
	Sum Reduction = iota
	// Min keeps the smallest candidate. Values are compared as uint64;
	// non-negative float64 values order the same way as their bits.
	Min
)

// Program is a vertex program: what the engine runs for one algorithm.
// Values are 64-bit words (float64 bits when Float is set), so one remote
// atomic updates one value.
//
// Each iteration, every active vertex u pushes Edge(value(u), outdeg(u),
// w(u,v)) to each out-neighbour v; the candidates for v are combined with
// Reduce into acc(v) (starting from Identity), and the new value is
// Apply(acc(v), value(v), ctx). A vertex is active in the next iteration
// when its value changed (or always, with AllActive).
type Program struct {
	Name     string
	Reduce   Reduction
	Float    bool   // values are float64 bits
	Identity uint64 // neutral element of Reduce
	// Iterations is a fixed iteration count (PageRank); 0 runs until no
	// vertex is active.
	Iterations int
	// AllActive keeps every vertex active in every iteration.
	AllActive bool
	// Symmetric runs on the graph with every edge in both directions
	// (weak connectivity).
	Symmetric bool
	// Weighted needs edge weights.
	Weighted bool
	// Init is the value of v before the first iteration and whether v is
	// active in it.
	Init func(v uint32, n uint32) (value uint64, active bool)
	// Edge is the candidate that u (value val, out-degree deg) sends along
	// an edge of weight w.
	Edge func(val uint64, deg uint64, w float64) uint64
	// Apply turns the reduced candidates into the next value.
	Apply func(acc, old uint64, it *Iteration) uint64
}

// Iteration is what Apply may know about the iteration as a whole.
type Iteration struct {
	N        uint32  // vertices
	Dangling float64 // Σ value over vertices without out-edges (Float programs)
}

// Combine reduces two candidates.
func (p *Program) Combine(a, b uint64) uint64 {
	if p.Reduce == Min {
		return min(a, b)
	}
	return math.Float64bits(math.Float64frombits(a) + math.Float64frombits(b))
}

// Unreachable is the BFS depth of a vertex the source does not reach
// (Graphalytics: 9223372036854775807).
const Unreachable = math.MaxInt64

// Floats decodes value words that hold float64 bits (PageRank, SSSP).
func Floats(words []uint64) []float64 {
	f := make([]float64, len(words))
	for i, x := range words {
		f[i] = math.Float64frombits(x)
	}
	return f
}

// Ints decodes value words that hold integers (BFS depths).
func Ints(words []uint64) []int64 {
	f := make([]int64, len(words))
	for i, x := range words {
		f[i] = int64(x)
	}
	return f
}
