package csr

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The union of sketches is the sketch of the union, its estimate is
// within a few percent, and newIDSlices cuts dense id spaces into
// bitmaps and sparse ones into slices of about as many ids each.
func TestIDSlices(t *testing.T) {
	for _, c := range []struct {
		name   string
		id     func(r *rand.Rand) uint64
		n      int
		bitmap bool
	}{
		{"dense", func(r *rand.Rand) uint64 { return uint64(r.IntN(200000)) }, 150000, true},
		{"holes", func(r *rand.Rand) uint64 { return uint64(r.IntN(100000)) * 37 }, 90000, true},
		{"sparse", func(r *rand.Rand) uint64 { return r.Uint64() >> uint(r.IntN(8)) }, 120000, false},
		{"few", func(r *rand.Rand) uint64 { return uint64(r.IntN(50)) << 40 }, 200, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(c.n)))
			ids := make([]uint64, c.n)
			for i := range ids {
				ids[i] = c.id(r)
			}
			var whole idSketch
			addSketch(&whole, ids)
			const cns = 5
			parts := make([]idSketch, cns)
			for i, x := range ids {
				addSketch(&parts[i%cns], []uint64{x})
			}
			if u := union(parts); !slices.Equal(u.Hash, whole.Hash) || !slices.Equal(u.ID, whole.ID) {
				t.Fatal("the union of the sketches is not the sketch of the union")
			}
			distinct := slices.Compact(slices.Sorted(slices.Values(ids)))
			n := len(distinct)
			if est := whole.estimate(); float64(est) < 0.9*float64(n) || float64(est) > 1.1*float64(n) {
				t.Fatalf("estimate %d for %d ids", est, n)
			}
			maxID := distinct[n-1]
			sl := newIDSlices(whole, maxID, cns)
			if sl.bitmap != c.bitmap {
				t.Fatalf("bitmap %v, want %v", sl.bitmap, c.bitmap)
			}
			count := make([]int, cns)
			for _, x := range distinct {
				k := sl.of(x)
				lo, span, ok := sl.span(k)
				if !ok || x-lo > span {
					t.Fatalf("id %d: slice %d (%d, +%d, %v) does not hold it", x, k, lo, span, ok)
				}
				for j := range cns {
					if lo, span, ok := sl.span(j); j != k && ok && x-lo <= span {
						t.Fatalf("id %d in slices %d and %d", x, k, j)
					}
				}
				count[k]++
			}
			if !sl.bitmap && n > 10000 {
				for k, m := range count {
					if m < n/cns/2 || m > 2*n/cns {
						t.Fatalf("slice %d has %d of %d ids: %v", k, m, n, count)
					}
				}
			}
		})
	}
}

// Mapping slice by slice, ascending and in place, maps every id once:
// the result is each id's rank among the distinct ids.
func TestMapPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for round := range 200 {
		a := make([]uint64, 1+r.IntN(300))
		spread := uint64(1) << uint(r.IntN(64))
		for i := range a {
			a[i] = r.Uint64() % max(spread, 1)
		}
		distinct := slices.Compact(slices.Sorted(slices.Values(a)))
		var sk idSketch
		addSketch(&sk, a)
		cns := 1 + r.IntN(6)
		sl := newIDSlices(sk, distinct[len(distinct)-1], cns)
		got := slices.Clone(a)
		a32 := make([]uint32, 0, len(a))
		for _, x := range a {
			if x <= 1<<32-1 {
				a32 = append(a32, uint32(x))
			}
		}
		want32 := make([]uint32, len(a32))
		for i, x := range a32 {
			j, _ := slices.BinarySearch(distinct, uint64(x))
			want32[i] = uint32(j)
		}
		base := uint32(0)
		for k := range cns {
			lo, span, ok := sl.span(k)
			if !ok {
				continue
			}
			var in []uint64
			for _, x := range distinct {
				if x-lo <= span {
					in = append(in, x)
				}
			}
			var pc *idPiece
			if sl.bitmap {
				bm := make([]uint64, sl.words)
				setBits(bm, in, lo, span)
				pc = newBitmapPiece(lo, span, base, bm)
			} else {
				pc = &idPiece{lo: lo, span: span, base: base, ids: in}
			}
			for i, x := range in {
				if pc.external(base+uint32(i)) != x {
					t.Fatalf("round %d: slice %d: dense %d is not %d", round, k, base+uint32(i), x)
				}
			}
			mapPiece(got, pc)
			mapPiece(a32, pc)
			base += uint32(len(in))
		}
		for i, x := range a {
			j, _ := slices.BinarySearch(distinct, x)
			if got[i] != uint64(j) {
				t.Fatalf("round %d (bitmap %v, %d slices): id %d mapped to %d, want %d", round, sl.bitmap, cns, x, got[i], j)
			}
		}
		if !slices.Equal(a32, want32) {
			t.Fatalf("round %d: 32-bit ids mapped to %v, want %v", round, a32, want32)
		}
	}
}
