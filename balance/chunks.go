package balance

import (
	"math"

	"github.com/pkg/errors"
)

// DefaultAlpha is Gemini's vertex weight for a given number of parts.
func DefaultAlpha(parts int) float64 { return 8 * float64(parts-1) }

// Chunks returns parts+1 boundaries b (b[0]=0, b[parts]=len(degrees),
// non-decreasing): chunk i is vertices [b[i], b[i+1]). Boundary k is
// placed where the cost α·v + Σ_{u<v} deg(u) of the vertices [0, v)
// first reaches k/parts of the total, or one vertex earlier when that is
// nearer, in one pass. Chunks may be empty when parts exceeds the
// number of vertices. It is Slice over one slice: the whole degrees.
func Chunks(degrees []uint64, parts int, alpha float64) ([]uint32, error) {
	n := len(degrees)
	if uint64(n) > 1<<32-1 {
		return nil, errors.Errorf("balance: %d vertices exceed 2^32-1", n)
	}
	var edges uint64
	for _, d := range degrees {
		edges += d
	}
	cut := Cut{Parts: parts, Alpha: alpha, N: uint32(n), Edges: edges}
	bs, err := cut.Slice(degrees, 0, 0)
	if err != nil {
		return nil, err
	}
	return cut.Bounds(bs)
}

// Cut is a cut of a graph of N vertices, whose degrees sum to Edges, into
// Parts chunks by Chunks's rule, made a slice of the degrees at a time
// (Slice) when no one holds them all, as a staged read spreads them over
// the compute nodes: every slice places the boundaries that fall in it,
// and Bounds gathers them. The boundaries are those Chunks places, as
// the cost of the vertices [0, v) is computed from v and the degrees
// before v alone, not summed vertex by vertex.
type Cut struct {
	Parts int
	Alpha float64
	N     uint32
	Edges uint64
}

// Boundary is where a cut places chunk K's first vertex V; Before is the
// degrees of the vertices [0, V) summed.
type Boundary struct {
	K      int
	V      uint32
	Before uint64
}

// check validates the cut's parameters.
func (c Cut) check() error {
	if c.Parts < 1 {
		return errors.Errorf("balance: %d parts; need at least 1", c.Parts)
	}
	if c.Alpha < 0 || math.IsNaN(c.Alpha) {
		return errors.Errorf("balance: alpha %g is negative", c.Alpha)
	}
	if math.IsInf(c.Alpha*float64(c.N)+float64(c.Edges), 0) {
		return errors.Errorf("balance: alpha %g makes the cost α·%d+%d infinite; expected a smaller alpha", c.Alpha, c.N, c.Edges)
	}
	return nil
}

// Slice places the boundaries 1..Parts-1 that fall in the slice deg of
// the degrees, those of the vertices [lo, lo+len(deg)), the degrees of
// the vertices before lo summing to before: boundary k falls in the
// slice holding vertex v-1 for the first v whose cost reaches k/Parts
// of the total (the slice holding vertex 0 also takes those at v = 0, as
// when the total is 0). Slices that cover [0, N) place every boundary once.
func (c Cut) Slice(deg []uint64, lo uint32, before uint64) ([]Boundary, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if uint64(lo)+uint64(len(deg)) > uint64(c.N) {
		return nil, errors.Errorf("balance: a slice of the degrees of [%d, %d) in a graph of %d vertices", lo, uint64(lo)+uint64(len(deg)), c.N)
	}
	cost := func(v uint64, e uint64) float64 { return c.Alpha*float64(v) + float64(e) }
	total := cost(uint64(c.N), c.Edges)
	target := func(k int) float64 { return total * float64(k) / float64(c.Parts) }
	// The boundaries crossed in (lo, lo+len(deg)]: those whose target
	// exceeds the cost of [0, lo) (or any, at lo = 0).
	k := 1
	for lo > 0 && k < c.Parts && target(k) <= cost(uint64(lo), before) {
		k++
	}
	var out []Boundary
	prev := Boundary{K: -1} // the last boundary placed here
	place := func(v uint64, e, ePrev uint64) {
		for ; k < c.Parts && cost(v, e) >= target(k); k++ {
			b := Boundary{K: k, V: uint32(v), Before: e}
			// The crossing lies in vertex v-1: cut before it if that is
			// nearer, and not before the previous boundary.
			if v > 0 {
				t := target(k)
				if t-cost(v-1, ePrev) < cost(v, e)-t && (prev.K != k-1 || uint64(prev.V) <= v-1) {
					b = Boundary{K: k, V: uint32(v - 1), Before: ePrev}
				}
			}
			out = append(out, b)
			prev = b
		}
	}
	e := before
	if lo == 0 && len(deg) > 0 {
		place(0, 0, 0)
	}
	for i, d := range deg {
		ePrev := e
		e += d
		place(uint64(lo)+uint64(i)+1, e, ePrev)
	}
	return out, nil
}

// Bounds gathers the boundaries every slice placed into the cut's
// Parts+1 bounds, and checks that each was placed once, in order.
func (c Cut) Bounds(placed []Boundary) ([]uint32, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	b := make([]uint32, c.Parts+1)
	if c.N == 0 {
		return b, nil // every chunk empty, no boundary to place
	}
	b[c.Parts] = c.N
	seen := make([]bool, c.Parts)
	for _, x := range placed {
		if x.K < 1 || x.K >= c.Parts || seen[x.K] || x.V > c.N {
			return nil, errors.Errorf("balance: boundary %d at vertex %d of %d (placed twice, or out of range)", x.K, x.V, c.N)
		}
		seen[x.K], b[x.K] = true, x.V
	}
	for k := 1; k < c.Parts; k++ {
		if !seen[k] || b[k] < b[k-1] || b[k] > b[k+1] {
			return nil, errors.Errorf("balance: boundary %d is missing or out of order in %v", k, b)
		}
	}
	return b, nil
}

// Imbalance is Imbalance over the cut's chunks, given by their bounds
// and the boundaries placed (each saying the degrees before its vertex).
func (c Cut) Imbalance(bounds []uint32, placed []Boundary) float64 {
	before := make([]uint64, len(bounds)) // before chunk i's first vertex
	before[len(bounds)-1] = c.Edges
	for _, b := range placed {
		if b.K > 0 && b.K < len(bounds)-1 {
			before[b.K] = b.Before
		}
	}
	costs := make([]float64, len(bounds)-1)
	for i := range costs {
		costs[i] = c.Alpha*float64(bounds[i+1]-bounds[i]) + float64(before[i+1]-before[i])
	}
	return maxOverMean(costs)
}

// Costs returns α·|V_i| + |E_i| of each chunk.
func Costs(degrees []uint64, bounds []uint32, alpha float64) []float64 {
	c := make([]float64, len(bounds)-1)
	for i := range c {
		for v := bounds[i]; v < bounds[i+1]; v++ {
			c[i] += alpha + float64(degrees[v])
		}
	}
	return c
}

// Imbalance is max/mean of the chunk costs (1 is perfect; 0 for no work).
func Imbalance(degrees []uint64, bounds []uint32, alpha float64) float64 {
	return maxOverMean(Costs(degrees, bounds, alpha))
}

// maxOverMean is the largest of the costs c over their mean (0 when they
// sum to 0).
func maxOverMean(c []float64) float64 {
	var sum, mx float64
	for _, x := range c {
		sum += x
		mx = max(mx, x)
	}
	if sum == 0 {
		return 0
	}
	return mx / (sum / float64(len(c)))
}
