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

// BenchmarkGather is the pull's loop: ns per edge, for PageRank's float
// sum and SSSP's weighted min.
func BenchmarkGather(b *testing.B) {
	sum := algo.Spec{Reduce: algo.Sum, Float: true}
	sssp := algo.Spec{Reduce: algo.Min, Float: true, Edge: algo.AddWeight, Weighted: true}
	for _, n := range []uint32{1 << 16, 1 << 19, 1 << 20} {
		b.Run(fmt.Sprint("sum/", n), func(b *testing.B) { benchGather(b, sum, n) })
		b.Run(fmt.Sprint("wmin/", n), func(b *testing.B) { benchGather(b, sssp, n) })
	}
}

func benchGather(b *testing.B, spec algo.Spec, n uint32) {
	lists := benchLists(n, 1<<16, 16)
	contrib := make([]uint64, n)
	for i := range contrib {
		contrib[i] = math.Float64bits(float64(i % 1000))
	}
	var w []float32
	if spec.Weighted {
		w = make([]float32, 16)
		for i := range w {
			w[i] = float32(i)
		}
	}
	op := OpOf(spec)
	var s uint64
	b.ResetTimer()
	for b.Loop() {
		for _, l := range lists {
			s += op.Gather(op.Identity(), contrib, nil, 0, l, w, false)
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
