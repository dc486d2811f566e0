package balance

import (
	"github.com/pkg/errors"
)

// DefaultAlpha is Gemini's vertex weight for a given number of parts.
func DefaultAlpha(parts int) float64 { return 8 * float64(parts-1) }

// Chunks returns parts+1 boundaries b (b[0]=0, b[parts]=len(degrees),
// non-decreasing): chunk i is vertices [b[i], b[i+1]). Boundaries are placed
// where the running cost α·v + Σdeg crosses i/parts of the total, choosing
// the nearer vertex, in one pass. Chunks may be empty when parts exceeds
// the number of vertices.
func Chunks(degrees []uint64, parts int, alpha float64) ([]uint32, error) {
	if parts < 1 {
		return nil, errors.Errorf("balance: %d parts; need at least 1", parts)
	}
	if alpha < 0 {
		return nil, errors.Errorf("balance: alpha %g is negative", alpha)
	}
	n := len(degrees)
	if uint64(n) > 1<<32-1 {
		return nil, errors.Errorf("balance: %d vertices exceed 2^32-1", n)
	}
	var edges uint64
	for _, d := range degrees {
		edges += d
	}
	total := alpha*float64(n) + float64(edges)
	b := make([]uint32, parts+1)
	b[parts] = uint32(n)
	k := 1
	cost := 0.0 // cost of vertices [0, v)
	for v := 0; v <= n && k < parts; v++ {
		for k < parts {
			target := total * float64(k) / float64(parts)
			if cost < target {
				break
			}
			// The crossing lies in vertex v-1: cut before or after it.
			cut := v
			if v > 0 {
				prev := cost - alpha - float64(degrees[v-1])
				if target-prev < cost-target && uint32(v-1) >= b[k-1] {
					cut = v - 1
				}
			}
			b[k] = uint32(cut)
			k++
		}
		if v < n {
			cost += alpha + float64(degrees[v])
		}
	}
	for ; k < parts; k++ {
		b[k] = uint32(n)
	}
	return b, nil
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
	c := Costs(degrees, bounds, alpha)
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

// DegreesFromOffsets turns CSR offsets into a degree array.
func DegreesFromOffsets(offsets []uint64) []uint64 {
	if len(offsets) == 0 {
		return nil
	}
	d := make([]uint64, len(offsets)-1)
	for i := range d {
		d[i] = offsets[i+1] - offsets[i]
	}
	return d
}
