package reduce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
)

// benchLists are sorted runs of random sources into a chunk of n vertices,
// the shape of a kron:20 chunk's local in-segments.
func benchLists(n uint32, runs, per int) [][]uint32 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]uint32, runs)
	for i := range out {
		l := make([]uint32, per)
		for j := range l {
			l[j] = uint32(r.IntN(int(n)))
		}
		slices.Sort(l)
		out[i] = l
	}
	return out
}

// BenchmarkGather is the pull's loop: ns per edge.
func BenchmarkGather(b *testing.B) {
	for _, n := range []uint32{1 << 16, 1 << 19, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchGather(b, n) })
	}
}

func benchGather(b *testing.B, n uint32) {
	lists := benchLists(n, 1<<16, 16)
	contrib := make([]uint64, n)
	for i := range contrib {
		contrib[i] = math.Float64bits(float64(i))
	}
	op := OpOf(algo.Spec{Reduce: algo.Sum, Float: true})
	var s uint64
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lists {
			s += op.Gather(0, contrib, 0, l, nil, false)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lists)*16), "ns/edge")
	_ = s
}

// BenchmarkScatter is a lane's fold of RefRD segments: ns per edge.
func BenchmarkScatter(b *testing.B) {
	const n = 1 << 19
	lists := benchLists(n, 1<<16, 16)
	acc := make([]uint64, n)
	op := OpOf(algo.Spec{Reduce: algo.Sum, Float: true})
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lists {
			op.Scatter(acc, 0, l, nil, 0x3ff0000000000000)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lists)*16), "ns/edge")
}
