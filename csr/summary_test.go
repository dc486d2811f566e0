package csr

import (
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// naiveSummary summarises degrees by sorting them: the reference the
// distributions' Summary is checked against.
func naiveSummary(d []uint64) DegreeSummary {
	var s DegreeSummary
	if len(d) == 0 {
		return s
	}
	d = slices.Sorted(slices.Values(d))
	var sum uint64
	for _, x := range d {
		sum += x
		b := bits.Len64(x)
		for len(s.Log2) <= b {
			s.Log2 = append(s.Log2, 0)
		}
		s.Log2[b]++
	}
	pct := func(p float64) uint64 { return d[min(int(p*float64(len(d))), len(d)-1)] }
	s.Zero, s.Min, s.Max = s.Log2[0], d[0], d[len(d)-1]
	s.Median, s.P90, s.P99 = pct(0.5), pct(0.9), pct(0.99)
	s.Mean = float64(sum) / float64(len(d))
	return s
}

// The distributions of any split of the vertices, encoded, decoded and
// merged, summarise as the degrees themselves do.
func TestDegreeCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name  string
		n     int
		parts int
		deg   func() uint64
	}{
		{"empty", 0, 2, nil},
		{"one vertex", 1, 3, func() uint64 { return 7 }},
		{"all equal", 1000, 4, func() uint64 { return 3 }},
		{"uniform", 5000, 3, func() uint64 { return r.Uint64N(100) }},
		{"power law with zeros", 20000, 5, func() uint64 { return uint64(1/(r.Float64()+1e-6)) - 1 }},
		{"huge degrees", 300, 2, func() uint64 { return r.Uint64() >> r.UintN(64) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := make([]uint64, c.n)
			for i := range d {
				d[i] = c.deg()
			}
			parts := make([]DegreeCounts, c.parts)
			for p := range parts {
				lo, hi := c.n*p/c.parts, c.n*(p+1)/c.parts
				var err error
				if parts[p], err = DecodeDegreeCounts(CountDegrees(d[lo:hi]).AppendBinary(nil)); err != nil {
					t.Fatal(err)
				}
			}
			want := naiveSummary(d)
			if got := MergeDegreeCounts(parts...).Summary(); !reflect.DeepEqual(got, want) {
				t.Fatalf("merged %+v\nwant %+v", got, want)
			}
			if got := SummarizeDegrees(d); !reflect.DeepEqual(got, want) {
				t.Fatalf("SummarizeDegrees %+v\nwant %+v", got, want)
			}
		})
	}
}

// The decoder takes what AppendBinary writes and refuses the rest with
// an error (never a panic).
func FuzzDecodeDegreeCounts(f *testing.F) {
	f.Add(CountDegrees([]uint32{0, 1, 1, 5, 1 << 30}).AppendBinary(nil))
	f.Add([]byte{1, 0})
	f.Add([]byte{5, 1, 3, 1})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeDegreeCounts(b)
		if err != nil {
			return
		}
		for i, e := range c {
			if e.Vertices == 0 || (i > 0 && e.Degree <= c[i-1].Degree) {
				t.Fatalf("decoded %v", c)
			}
		}
		again, err := DecodeDegreeCounts(c.AppendBinary(nil))
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("re-encoded %v: %v, %v", c, again, err)
		}
	})
}
