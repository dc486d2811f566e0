package csr

import (
	"testing"
)

func TestCodecFor(t *testing.T) {
	for _, c := range []struct {
		weighted bool
		n        uint64
		bytes    int
		width    uint32
	}{
		{false, 0, 6, 0},
		{false, 2, 6, 0},
		{false, 1 << 23, 6, 0},
		{false, 1<<23 + 1, 6, 1 << 23},
		{false, 1 << 26, 6, 1 << 21},
		{false, 1 << 27, 6, 1 << 20},
		{false, 1<<27 + 1, 8, 0},
		{false, 1 << 32, 8, 0},
		{true, 10, 16, 0},
	} {
		got := codecFor(c.weighted, c.n)
		if got.bytes != c.bytes || got.width() != c.width {
			t.Errorf("codecFor(%v, %d): %d bytes, parts of %d; want %d, %d", c.weighted, c.n, got.bytes, got.width(), c.bytes, c.width)
		}
	}
}

// TestRecordsRoundTrip: a record decodes to the edge put, at the ends of
// the ids' and the parts' ranges, routed by either end.
func TestRecordsRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		n    uint64 // the ids' bound
		e    edgeRec
		lo   uint64
		dst  bool
	}{
		{"first ids", 1 << 26, edgeRec{s: 0, d: 0, w: 1}, 0, false},
		{"last ids", 1 << 26, edgeRec{s: 1<<26 - 1, d: 1<<26 - 1, w: 1}, 1<<26 - 1, true},
		{"source in the part", 1 << 26, edgeRec{s: 5 << 20, d: 1<<26 - 1, w: 1}, 4 << 20, false},
		{"destination at the part's far end", 1 << 26, edgeRec{s: 3, d: 4<<20 + 1<<21 - 1, w: 1}, 4 << 20, true},
		{"27-bit ids", 1 << 27, edgeRec{s: 1<<27 - 1, d: 1<<27 - 1, w: 1}, 1<<27 - 1<<20, true},
		{"both ends in the part", 1 << 10, edgeRec{s: 700, d: 701, w: 1}, 512, false},
		{"8 bytes", 1 << 32, edgeRec{s: 1<<32 - 1, d: 7, w: 1}, 0, true},
		{"16 bytes", 0, edgeRec{s: 9, d: 1<<32 - 1, w: -2.5}, 3, false},
	} {
		codec := codecFor(c.n == 0, c.n)
		b := make([]byte, codec.bytes)
		codec.put(b, c.e, c.lo, c.dst)
		if got := codec.get(b, c.lo); got != c.e {
			t.Errorf("%s: %d-byte record of %+v from part %d: %+v", c.name, codec.bytes, c.e, c.lo, got)
		}
	}
}

// FuzzRecords: every edge of ids below n, put in any part that holds the
// end it is routed by and no wider than the codec addresses, decodes to
// itself.
func FuzzRecords(f *testing.F) {
	f.Add(uint8(26), uint32(1), uint32(2), uint32(0), false)
	f.Add(uint8(27), uint32(1<<27-1), uint32(0), uint32(1<<20-1), true)
	f.Add(uint8(32), uint32(1<<31), uint32(5), uint32(9), false)
	f.Fuzz(func(t *testing.T, logN uint8, s, d, off uint32, dst bool) {
		n := uint64(1) << (logN%32 + 1)
		e := edgeRec{s: uint64(s) % n, d: uint64(d) % n, w: 1}
		c := codecFor(false, n)
		near := e.s
		if dst {
			near = e.d
		}
		lo := near - min(near, uint64(off))
		if w := uint64(c.width()); w > 0 {
			lo = near - min(near, uint64(off)%w)
		}
		b := make([]byte, c.bytes)
		c.put(b, e, lo, dst)
		if got := c.get(b, lo); got != e {
			t.Fatalf("%d-byte record of %+v routed by its %v end to the part from %d: %+v", c.bytes, e, dst, lo, got)
		}
	})
}
