package balance

import (
	"math"
	"math/rand/v2"
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
