package csr

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSortIDs sorts rows of every path (by comparison, by buckets,
// through the scratch buffer, in place by the top digit then either) against
// slices.Sort: random ids of several widths, runs of one id, and rows
// already sorted or reversed.
func TestSortIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	random := func(n int, width uint) []uint32 {
		d := make([]uint32, n)
		for i := range d {
			d[i] = uint32(r.Uint64() & (1<<width - 1))
		}
		return d
	}
	cases := []struct {
		name string
		d    []uint32
	}{
		{"empty", nil},
		{"short", random(bucketMin-1, 26)},
		{"buckets", random(100, 26)},
		{"buckets, one short of radixMin", random(radixMin-1, 26)},
		{"buckets, clustered", append(random(150, 4), random(100, 30)...)},
		{"buckets, one id", slices.Repeat([]uint32{1 << 30}, 200)},
		{"buckets, two ids", append(slices.Repeat([]uint32{5}, 120), slices.Repeat([]uint32{1 << 31}, 120)...)},
		{"buckets, 32 bits", random(200, 32)},
		{"at radixMin", random(radixMin, 26)},
		{"scratch, 1 pass", random(5000, 9)},
		{"scratch, 3 passes", random(5000, 26)},
		{"scratch, 32 bits", random(radixScratch, 32)},
		{"in place, 26 bits", random(radixScratch*5+17, 26)},
		{"in place, 32 bits", random(radixScratch*3, 32)},
		{"in place, 4 bits", random(radixScratch*2, 4)},
		{"one id", slices.Repeat([]uint32{7}, radixScratch*2)},
		{"zeros", make([]uint32, 1000)},
		{"sorted", slices.Sorted(slices.Values(random(radixScratch*2, 20)))},
		{"reversed", func() []uint32 {
			d := slices.Sorted(slices.Values(random(3000, 20)))
			slices.Reverse(d)
			return d
		}()},
		{"hub-like", append(random(radixScratch*4, 26), slices.Repeat([]uint32{1 << 25}, 9000)...)},
	}
	var tmp []uint32
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := slices.Sorted(slices.Values(c.d))
			got := slices.Clone(c.d)
			tmp = sortIDs(got, tmp)
			if !slices.Equal(got, want) {
				t.Fatalf("sortIDs of %d ids differs from slices.Sort", len(c.d))
			}
			if cap(tmp) > radixScratch {
				t.Fatalf("scratch grew to %d ids, past %d", cap(tmp), radixScratch)
			}
		})
	}
}

// FuzzSortIDs checks sortIDs against slices.Sort on rows from the
// fuzzer's bytes, each id four of them, repeated to reach the paths
// for long rows.
func FuzzSortIDs(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 0, 0, 0, 1}, uint16(300))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 9, 0, 0, 0}, uint16(40000))
	f.Fuzz(func(t *testing.T, b []byte, n uint16) {
		if len(b) < 4 {
			return
		}
		d := make([]uint32, int(n)*2)
		for i := range d {
			j := 4 * (i % (len(b) / 4))
			d[i] = uint32(b[j]) | uint32(b[j+1])<<8 | uint32(b[j+2])<<16 | uint32(b[j+3])<<24
			d[i] ^= uint32(i) * 2654435761 >> (b[0] % 32)
		}
		want := slices.Sorted(slices.Values(d))
		sortIDs(d, nil)
		if !slices.Equal(d, want) {
			t.Fatalf("sortIDs of %d ids differs from slices.Sort", len(d))
		}
	})
}

// BenchmarkSortIDs sorts rows of kron:26-like ids (26 bits) of several
// lengths by digits and by slices.Sort: ns per id. The rows are all
// different (about 2 Mi ids a round): sorting one row over and over
// lets the branch predictor learn its comparisons.
func BenchmarkSortIDs(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{16, 24, 32, 64, 128, 256, 512, 767, 1024, 4096, 1 << 16, 1 << 20, 1 << 24} {
		rows := max(1, (1<<21)/n)
		src := make([]uint32, n*rows)
		for i := range src {
			src[i] = uint32(r.Uint64() & (1<<26 - 1))
		}
		all := make([]uint32, len(src))
		for _, by := range []string{"digits", "compare"} {
			b.Run(by+"/"+strconv.Itoa(n), func(b *testing.B) {
				var tmp []uint32
				for range b.N {
					copy(all, src)
					for k := range rows {
						d := all[k*n : (k+1)*n]
						if by == "digits" {
							tmp = sortIDs(d, tmp)
						} else {
							slices.Sort(d)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*n), "ns/id")
			})
		}
	}
}
