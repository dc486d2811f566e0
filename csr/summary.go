package csr

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/dustin/go-humanize"
)

// DegreeSummary summarises the out-degree distribution.
type DegreeSummary struct {
	Min, Max         uint64
	Mean             float64
	Median, P90, P99 uint64
	Zero             uint64 // vertices without out-edges
	// Log2[0] counts degree 0; Log2[i] counts degrees in [2^(i-1), 2^i).
	Log2 []uint64
}

// Degrees summarises g's out-degrees.
func Degrees(g *Graph) DegreeSummary {
	d := make([]uint64, g.N)
	for v := range d {
		d[v] = g.Offsets[v+1] - g.Offsets[v]
	}
	return SummarizeDegrees(d)
}

// SummarizeDegrees summarises out-degrees given per vertex (it sorts d).
func SummarizeDegrees(d []uint64) DegreeSummary {
	var s DegreeSummary
	if len(d) == 0 {
		return s
	}
	var sum uint64
	for _, x := range d {
		sum += x
		b := bits.Len64(x)
		if b >= len(s.Log2) {
			s.Log2 = append(s.Log2, make([]uint64, b+1-len(s.Log2))...)
		}
		s.Log2[b]++
	}
	s.Zero = s.Log2[0]
	slices.Sort(d)
	pct := func(p float64) uint64 { return d[min(int(p*float64(len(d))), len(d)-1)] }
	s.Min, s.Max = d[0], d[len(d)-1]
	s.Median, s.P90, s.P99 = pct(0.5), pct(0.9), pct(0.99)
	s.Mean = float64(sum) / float64(len(d))
	return s
}

func (s DegreeSummary) String() string {
	return fmt.Sprintf("degree min %d median %d mean %.1f p90 %d p99 %d max %s, %s without out-edges",
		s.Min, s.Median, s.Mean, s.P90, s.P99, humanize.Comma(int64(s.Max)), humanize.Comma(int64(s.Zero)))
}

// InPlaceShare is the fraction of vertices stored in place.
func (l *Layout) InPlaceShare() float64 {
	if l.N == 0 {
		return 0
	}
	return float64(l.InPlace) / float64(l.N)
}

// Imbalance is max/mean of the bytes the MNs hold of the layout, from
// Start to End (1 is perfect).
func (l *Layout) Imbalance() float64 {
	var sum, mx uint64
	for _, u := range l.MN {
		sum += u.End - u.Start
		mx = max(mx, u.End-u.Start)
	}
	if sum == 0 {
		return 1
	}
	return float64(mx) * float64(len(l.MN)) / float64(sum)
}
