package balance

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func checkBounds(t *testing.T, b []uint32, n, parts int) {
	t.Helper()
	if len(b) != parts+1 || b[0] != 0 || int(b[parts]) != n {
		t.Fatalf("bounds %v do not cover [0,%d) in %d parts", b, n, parts)
	}
	for i := 1; i < len(b); i++ {
		if b[i] < b[i-1] {
			t.Fatalf("bounds %v not non-decreasing", b)
		}
	}
}

func TestChunksEdgeCases(t *testing.T) {
	tests := []struct {
		name    string
		degrees []uint64
		parts   int
		alpha   float64
		want    []uint32
	}{
		{"one part", []uint64{5, 1, 0, 9}, 1, 0, []uint32{0, 4}},
		{"empty graph", nil, 3, 8, []uint32{0, 0, 0, 0}},
		{"more parts than vertices", []uint64{1, 1}, 4, 0, nil},
		{"uniform", []uint64{1, 1, 1, 1, 1, 1, 1, 1}, 4, 0, []uint32{0, 2, 4, 6, 8}},
		{"all degree on one vertex", []uint64{0, 0, 100, 0, 0, 0}, 2, 0, nil},
		{"alpha only counts vertices", []uint64{100, 0, 0, 0}, 2, 1e9, []uint32{0, 2, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Chunks(tt.degrees, tt.parts, tt.alpha)
			if err != nil {
				t.Fatal(err)
			}
			checkBounds(t, b, len(tt.degrees), tt.parts)
			if tt.want != nil {
				for i := range b {
					if b[i] != tt.want[i] {
						t.Fatalf("got %v want %v", b, tt.want)
					}
				}
			}
		})
	}
	if _, err := Chunks([]uint64{1}, 0, 0); err == nil {
		t.Error("0 parts accepted")
	}
	if _, err := Chunks([]uint64{1}, 2, -1); err == nil {
		t.Error("negative alpha accepted")
	}
}

// On power-law degrees, every chunk is within one vertex's cost of the
// ideal share: |cost_i − total/parts| ≤ 2·(α + maxdeg).
func TestChunksBalancedOnPowerLaw(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 1 + rng.IntN(5000)
		deg := make([]uint64, n)
		var maxd uint64
		for i := range deg {
			deg[i] = uint64(math.Floor(math.Pow(rng.Float64()+1e-9, -1.5))) // Pareto-ish
			maxd = max(maxd, deg[i])
		}
		parts := 1 + rng.IntN(16)
		alpha := DefaultAlpha(parts)
		b, err := Chunks(deg, parts, alpha)
		if err != nil {
			t.Fatal(err)
		}
		checkBounds(t, b, n, parts)
		costs := Costs(deg, b, alpha)
		var total float64
		for _, c := range costs {
			total += c
		}
		bound := 2 * (alpha + float64(maxd))
		for i, c := range costs {
			if math.Abs(c-total/float64(parts)) > bound {
				t.Fatalf("trial %d: chunk %d cost %g, ideal %g, bound %g (bounds %v)", trial, i, c, total/float64(parts), bound, b)
			}
		}
	}
}

func BenchmarkChunks(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	deg := make([]uint64, 1<<20)
	for i := range deg {
		deg[i] = uint64(rng.IntN(64))
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Chunks(deg, 8, DefaultAlpha(8)); err != nil {
			b.Fatal(err)
		}
	}
}

// refChunks is Chunks's rule written plainly: for each boundary, the
// first v whose cost reaches its target, or v-1 when nearer and not
// before the previous boundary.
func refChunks(deg []uint64, parts int, alpha float64) []uint32 {
	n := len(deg)
	pre := make([]uint64, n+1)
	for v, d := range deg {
		pre[v+1] = pre[v] + d
	}
	cost := func(v int) float64 { return alpha*float64(v) + float64(pre[v]) }
	total := cost(n)
	b := make([]uint32, parts+1)
	b[parts] = uint32(n)
	for k := 1; k < parts; k++ {
		t := total * float64(k) / float64(parts)
		v := 0
		for cost(v) < t {
			v++
		}
		b[k] = uint32(v)
		if v > 0 && t-cost(v-1) < cost(v)-t && uint32(v-1) >= b[k-1] {
			b[k] = uint32(v - 1)
		}
	}
	return b
}

func TestCutSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 400 {
		n := rng.IntN(60)
		deg := make([]uint64, n)
		for i := range deg {
			switch rng.IntN(4) {
			case 0: // zero
			case 1:
				deg[i] = uint64(rng.IntN(1000)) // a hub
			default:
				deg[i] = uint64(rng.IntN(4))
			}
		}
		parts := 1 + rng.IntN(9)
		alpha := []float64{0, 1, 8, DefaultAlpha(parts), 0.3}[rng.IntN(5)]
		want := refChunks(deg, parts, alpha)
		whole, err := Chunks(deg, parts, alpha)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(whole, want) {
			t.Fatalf("trial %d: Chunks %v, want %v (deg %v, parts %d, alpha %g)", trial, whole, want, deg, parts, alpha)
		}
		// The same cut from random slices, some empty.
		var edges uint64
		for _, d := range deg {
			edges += d
		}
		c := Cut{Parts: parts, Alpha: alpha, N: uint32(n), Edges: edges}
		var placed []Boundary
		var before uint64
		for lo := 0; lo < n || lo == 0; {
			hi := min(n, lo+rng.IntN(8))
			bs, err := c.Slice(deg[lo:hi], uint32(lo), before)
			if err != nil {
				t.Fatal(err)
			}
			placed = append(placed, bs...)
			for _, d := range deg[lo:hi] {
				before += d
			}
			if lo = hi; n == 0 {
				break
			}
		}
		got, err := c.Bounds(placed)
		if err != nil {
			t.Fatalf("trial %d: %v (deg %v, parts %d, alpha %g)", trial, err, deg, parts, alpha)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: sliced %v, want %v (deg %v, parts %d, alpha %g)", trial, got, want, deg, parts, alpha)
		}
		if a, b := c.Imbalance(got, placed), Imbalance(deg, got, alpha); math.Abs(a-b) > 1e-9*max(1, b) {
			t.Fatalf("trial %d: imbalance %g, from the costs %g", trial, a, b)
		}
	}
}

func TestCutBoundsErrors(t *testing.T) {
	c := Cut{Parts: 3, N: 10, Edges: 5}
	for _, placed := range [][]Boundary{
		{{K: 1, V: 2}}, // one missing
		{{K: 1, V: 2}, {K: 1, V: 2}, {K: 2, V: 3}}, // twice
		{{K: 1, V: 5}, {K: 2, V: 3}},               // out of order
		{{K: 1, V: 5}, {K: 2, V: 11}},              // past N
		{{K: 0, V: 0}, {K: 1, V: 5}, {K: 2, V: 6}}, // boundary 0 is not placed
	} {
		if b, err := c.Bounds(placed); err == nil {
			t.Fatalf("%v: bounds %v, want an error", placed, b)
		}
	}
	if _, err := (Cut{Parts: 2, N: 4}).Slice(make([]uint64, 3), 2, 0); err == nil {
		t.Fatal("a slice past N: no error")
	}
}
