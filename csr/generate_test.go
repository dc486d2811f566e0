package csr

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestParseGenSpec(t *testing.T) {
	tests := []struct {
		spec string
		want GenSpec
		ok   bool
	}{
		{"kron:10", GenSpec{Kind: FormatKron, Scale: 10, EdgeFactor: 16, N: 1024, M: 16384}, true},
		{"kron:4:2", GenSpec{Kind: FormatKron, Scale: 4, EdgeFactor: 2, N: 16, M: 32}, true},
		{"kron:0", GenSpec{Kind: FormatKron, Scale: 0, EdgeFactor: 16, N: 1, M: 16}, true},
		{"uniform:100:7", GenSpec{Kind: FormatUniform, N: 100, M: 7}, true},
		{"uniform:0:0", GenSpec{Kind: FormatUniform}, true},
		{"kron:32", GenSpec{}, false},
		{"kron:1:2:3", GenSpec{}, false},
		{"kron:", GenSpec{}, false},
		{"uniform:5", GenSpec{}, false},
		{"uniform:0:5", GenSpec{}, false},
		{"rmat:5", GenSpec{}, false},
	}
	for _, tc := range tests {
		got, err := ParseGenSpec(tc.spec)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("%s: got %+v, %v", tc.spec, got, err)
		}
		if err != nil && !IsInputError(err) {
			t.Errorf("%s: not an InputError: %v", tc.spec, err)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	for _, spec := range []string{"kron:13:4", "uniform:1000:200000"} {
		t.Run(spec, func(t *testing.T) {
			ref, err := Generate(spec, Options{Seed: 11, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{2, 5} {
				el, _ := Generate(spec, Options{Seed: 11, Workers: w})
				if !reflect.DeepEqual(ref, el) {
					t.Errorf("workers=%d differs", w)
				}
			}
			// As ranks would: uneven, block-aligned and unaligned pieces.
			gs, _ := ParseGenSpec(spec)
			src := make([]uint32, gs.M)
			dst := make([]uint32, gs.M)
			cuts := []uint64{0, genBlock, genBlock + 17, 3*genBlock - 5, gs.M}
			for i := 0; i+1 < len(cuts); i++ {
				lo, hi := min(cuts[i], gs.M), min(cuts[i+1], gs.M)
				gs.GenerateRange(11, lo, hi, src[lo:hi], dst[lo:hi])
			}
			if !slices.Equal(src, ref.Src) || !slices.Equal(dst, ref.Dst) {
				t.Errorf("range-wise generation differs")
			}
			other, _ := Generate(spec, Options{Seed: 12})
			if slices.Equal(other.Src, ref.Src) {
				t.Errorf("seed has no effect")
			}
			for i := range ref.Src {
				if uint64(ref.Src[i]) >= gs.N || uint64(ref.Dst[i]) >= gs.N {
					t.Fatalf("edge %d out of range", i)
				}
			}
		})
	}
}

func TestKronShape(t *testing.T) {
	g, meta, err := Open("kron:14", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkCSR(t, g)
	if g.N != 1<<14 || meta.InputEdges != 16<<14 || meta.Format != FormatKron {
		t.Fatalf("N=%d input edges %d", g.N, meta.InputEdges)
	}
	// Skewed: the max out-degree is far above the average (16), many
	// vertices are isolated, and hubs are spread by the permutation (not
	// all at low ids).
	var maxd uint64
	var hub uint32
	zero := 0
	for v := uint32(0); v < g.N; v++ {
		d := g.Degree(v)
		if d > maxd {
			maxd, hub = d, v
		}
		if d == 0 {
			zero++
		}
	}
	if maxd < 400 || zero < int(g.N)/8 {
		t.Errorf("max degree %d, isolated %d: not a Kronecker graph", maxd, zero)
	}
	if hub == 0 {
		t.Errorf("hub at vertex 0: labels not permuted")
	}
	// Few duplicates at this density, but some.
	if meta.DroppedDuplicates == 0 || meta.DroppedDuplicates > meta.InputEdges/4 {
		t.Errorf("dropped %d duplicates of %d", meta.DroppedDuplicates, meta.InputEdges)
	}
}

// TestKronQuadrants checks the table of level pairs against the
// initiator's probabilities, and that the draws follow them at every level: each
// level's quadrant of a Kronecker edge is A, B, C or D with probabilities
// 0.57, 0.19, 0.19 and 0.05, independently of the others.
func TestKronQuadrants(t *testing.T) {
	p := [4]float64{kronA, kronB, kronC, 1 - kronA - kronB - kronC}
	var seen [16]int
	for _, code := range kronPairs {
		seen[code]++
	}
	for code, n := range seen {
		if want := p[code&3] * p[code>>2]; math.Abs(float64(n)/(1<<16)-want) > 1.0/(1<<16) {
			t.Errorf("pair %d: %d draws of 2^16, want %g of them", code, n, want)
		}
	}
	const scale, draws = 26, 200000
	var count [scale][4]int
	var pairs, across [4][4]int // levels 0 and 1 (one lookup), 1 and 2 (two)
	r := blockRNG{s: 5}
	for range draws {
		i, j := kronQuadrants(&r, scale)
		q := func(l int) int { return int(i>>l&1)<<1 | int(j>>l&1) }
		for l := range scale {
			count[l][q(l)]++
		}
		pairs[q(0)][q(1)]++
		across[q(1)][q(2)]++
	}
	for l := range scale {
		for k, n := range count[l] {
			// 6 standard deviations of a binomial count.
			if sd := math.Sqrt(draws * p[k] * (1 - p[k])); math.Abs(float64(n)-draws*p[k]) > 6*sd {
				t.Errorf("level %d: quadrant %d drawn %d times in %d, want about %.0f", l, k, n, draws, draws*p[k])
			}
		}
	}
	for a := range 4 {
		for b := range 4 {
			want := draws * p[a] * p[b]
			for _, c := range []struct {
				levels string
				n      int
			}{{"0 and 1", pairs[a][b]}, {"1 and 2", across[a][b]}} {
				if sd := math.Sqrt(want); math.Abs(float64(c.n)-want) > 6*sd+1 {
					t.Errorf("levels %s: quadrants (%d, %d) drawn %d times, want about %.0f (independent)", c.levels, a, b, c.n, want)
				}
			}
		}
	}
}

func TestScrambleBijective(t *testing.T) {
	for _, scale := range []uint64{1, 2, 5, 10} {
		seen := make([]bool, 1<<scale)
		for v := uint64(0); v < 1<<scale; v++ {
			x := scramble(v, scale, 99)
			if x >= 1<<scale || seen[x] {
				t.Fatalf("scale %d: not a bijection at %d", scale, v)
			}
			seen[x] = true
		}
	}
}

func TestUniform(t *testing.T) {
	g, _, err := Open("uniform:1000:20000", Options{Seed: 2, Weighted: true, Duplicates: KeepDuplicates})
	if err != nil {
		t.Fatal(err)
	}
	checkCSR(t, g)
	if g.NumEdges() != 20000 || g.N != 1000 {
		t.Fatalf("%d %d", g.N, g.NumEdges())
	}
	var maxd uint64
	for v := uint32(0); v < g.N; v++ {
		maxd = max(maxd, g.Degree(v))
	}
	if maxd > 60 { // mean 20, Poisson tail
		t.Errorf("max degree %d too large for uniform", maxd)
	}
	for _, w := range g.Weights {
		if !(w > 0 && w <= 1) {
			t.Fatalf("weight %v", w)
		}
	}
}

func BenchmarkKron16(b *testing.B) {
	gs, _ := ParseGenSpec("kron:16")
	b.Run("generate", func(b *testing.B) {
		for b.Loop() {
			if _, err := Generate("kron:16", Options{Seed: 1}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(gs.M)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	})
	el, _ := Generate("kron:16", Options{Seed: 1})
	for _, o := range []struct {
		name string
		opts Options
	}{{"build", Options{}}, {"build-undirected-weighted", Options{Undirected: true, Weighted: true}}} {
		b.Run(o.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Build(el, o.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(gs.M)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}

// BenchmarkKronEdges generates a million edges on one goroutine, at a
// small scale and at the largest (kron:26: seven 64-bit draws
// of four levels each an edge before stop 60, four of eight after).
func BenchmarkKronEdges(b *testing.B) {
	for _, spec := range []string{"kron:16", "kron:26"} {
		gs, _ := ParseGenSpec(spec)
		src, dst := make([]uint32, 1<<20), make([]uint32, 1<<20)
		b.Run(spec, func(b *testing.B) {
			for b.Loop() {
				gs.GenerateRange(1, 0, 1<<20, src, dst)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N<<20), "ns/edge")
		})
	}
}
