package csr

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/bits"
	"slices"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
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

// SummarizeDegrees summarises out-degrees given per vertex.
func SummarizeDegrees(d []uint64) DegreeSummary { return CountDegrees(d).Summary() }

// DegreeCounts is a degree distribution: how many vertices have each
// degree, by increasing degree. It has an entry per distinct degree, a
// few thousand for a power-law graph of any size, so the CNs exchange
// their chunks' distributions rather than their degrees.
type DegreeCounts []DegreeCount

// DegreeCount is how many vertices have a degree.
type DegreeCount struct{ Degree, Vertices uint64 }

// CountDegrees is the distribution of the degrees d (given per vertex).
func CountDegrees[T uint32 | uint64](d []T) DegreeCounts {
	s := slices.Clone(d)
	slices.Sort(s)
	var c DegreeCounts
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j] == s[i] {
			j++
		}
		c = append(c, DegreeCount{uint64(s[i]), uint64(j - i)})
		i = j
	}
	return c
}

// MergeDegreeCounts is the distribution of the union of disjoint vertex
// sets given theirs.
func MergeDegreeCounts(all ...DegreeCounts) DegreeCounts {
	n := map[uint64]uint64{}
	for _, c := range all {
		for _, e := range c {
			n[e.Degree] += e.Vertices
		}
	}
	var out DegreeCounts
	for _, d := range slices.Sorted(maps.Keys(n)) {
		out = append(out, DegreeCount{d, n[d]})
	}
	return out
}

// Summary summarises the distribution: the figures SummarizeDegrees
// gives for the degrees it counts.
func (c DegreeCounts) Summary() DegreeSummary {
	var s DegreeSummary
	var n, sum uint64
	for _, e := range c {
		n += e.Vertices
		sum += e.Degree * e.Vertices
		b := bits.Len64(e.Degree)
		if b >= len(s.Log2) {
			s.Log2 = append(s.Log2, make([]uint64, b+1-len(s.Log2))...)
		}
		s.Log2[b] += e.Vertices
	}
	if n == 0 {
		return DegreeSummary{}
	}
	s.Zero = s.Log2[0]
	// The degree of rank k in sorted order: pct(p) takes rank p·n.
	at := func(k uint64) uint64 {
		for _, e := range c {
			if k < e.Vertices {
				return e.Degree
			}
			k -= e.Vertices
		}
		return c[len(c)-1].Degree
	}
	pct := func(p float64) uint64 { return at(min(uint64(p*float64(n)), n-1)) }
	s.Min, s.Max = c[0].Degree, c[len(c)-1].Degree
	s.Median, s.P90, s.P99 = pct(0.5), pct(0.9), pct(0.99)
	s.Mean = float64(sum) / float64(n)
	return s
}

// AppendBinary appends the distribution as uvarint pairs (degree, vertices).
func (c DegreeCounts) AppendBinary(b []byte) []byte {
	for _, e := range c {
		b = binary.AppendUvarint(b, e.Degree)
		b = binary.AppendUvarint(b, e.Vertices)
	}
	return b
}

// DecodeDegreeCounts decodes what AppendBinary wrote: pairs of strictly
// increasing degrees and their (non-zero) vertex counts.
func DecodeDegreeCounts(b []byte) (DegreeCounts, error) {
	var c DegreeCounts
	for len(b) > 0 {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errors.Errorf("csr: degree counts: bad degree at %d bytes from the end", len(b))
		}
		b = b[k:]
		v, k := binary.Uvarint(b)
		if k <= 0 || v == 0 {
			return nil, errors.Errorf("csr: degree counts: bad vertex count of degree %d", d)
		}
		b = b[k:]
		if len(c) > 0 && d <= c[len(c)-1].Degree {
			return nil, errors.Errorf("csr: degree counts: degree %d after %d", d, c[len(c)-1].Degree)
		}
		c = append(c, DegreeCount{d, v})
	}
	return c, nil
}

func (s DegreeSummary) String() string {
	return fmt.Sprintf("degree min %d median %d mean %.1f p90 %d p99 %d max %s, %s without out-edges",
		s.Min, s.Median, s.Mean, s.P90, s.P99, humanize.Comma(int64(s.Max)), humanize.Comma(int64(s.Zero)))
}
