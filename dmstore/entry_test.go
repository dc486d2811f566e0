package dmstore

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestVarint(t *testing.T) {
	tests := []struct {
		v    uint32
		want []byte
	}{
		{0, []byte{0x00}},
		{63, []byte{0x3f}},
		{64, []byte{0x40, 0x40}},
		{1<<14 - 1, []byte{0x7f, 0xff}},
		{1 << 14, []byte{0x80, 0x40, 0x00}},
		{1<<22 - 1, []byte{0xbf, 0xff, 0xff}},
		{1 << 22, []byte{0xc0, 0x40, 0x00, 0x00}},
		{MaxVarint, []byte{0xff, 0xff, 0xff, 0xff}},
	}
	for _, tc := range tests {
		b := make([]byte, 4)
		n := PutVarint(b, tc.v)
		if !slices.Equal(b[:n], tc.want) || VarintLen(tc.v) != n {
			t.Errorf("PutVarint(%d) = %x, want %x", tc.v, b[:n], tc.want)
		}
		v, m := Varint(b[:n])
		if v != tc.v || m != n {
			t.Errorf("Varint(%x) = %d,%d", b[:n], v, m)
		}
		if _, m := Varint(b[:n-1]); m != 0 {
			t.Errorf("truncated varint decoded")
		}
	}
}

func TestEntryTable(t *testing.T) {
	tests := []struct {
		name  string
		codec EntryCodec
		cap   int
	}{
		{"16", EntryCodec{Size: 16, Chunks: 3}, 3},
		{"16w", EntryCodec{Size: 16, Weighted: true, Chunks: 3}, 1},
		{"32", EntryCodec{Size: 32, Chunks: 8}, 7},
		{"32w", EntryCodec{Size: 32, Weighted: true, Chunks: 8}, 3},
		{"64", EntryCodec{Size: 64, Chunks: 16}, 15},
		{"64w", EntryCodec{Size: 64, Weighted: true, Chunks: 16}, 7},
		{"16w8", EntryCodec{Size: 16, Weighted: true, Chunks: 3, Weights: WeightUint8}, 2},
		{"32w8", EntryCodec{Size: 32, Weighted: true, Chunks: 8, Weights: WeightUint8}, 5},
		{"32w16", EntryCodec{Size: 32, Weighted: true, Chunks: 8, Weights: WeightUint16}, 4},
		{"64w16", EntryCodec{Size: 64, Weighted: true, Chunks: 16, Weights: WeightUint16}, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.codec
			if c.InPlaceCap() != tc.cap {
				t.Fatalf("cap %d want %d", c.InPlaceCap(), tc.cap)
			}
			b := make([]byte, c.Size)
			dst := []uint32{1, 5, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}[:tc.cap]
			var w []float32
			if c.Weighted {
				w = make([]float32, len(dst))
				for i := range w {
					w[i] = float32(i) + 0.5
					if c.Weights != WeightFloat32 {
						w[i] = float32(i * 37)
					}
				}
			}
			if err := c.EncodeInPlace(b, dst, w); err != nil {
				t.Fatal(err)
			}
			var e Entry
			if err := c.Decode(b, &e); err != nil || e.Kind != InPlace || !slices.Equal(e.Dst, dst) || (c.Weighted && !slices.Equal(e.Weights, w)) {
				t.Fatalf("decode %+v %v", e, err)
			}
			if err := c.EncodeInPlace(b, append(dst, 99), append(w, 1)); err == nil {
				t.Errorf("cap+1 edges accepted in place")
			}
			// Out of place, small segments fit inline.
			segs := make([]uint32, c.Chunks)
			segs[0], segs[c.Chunks-1] = 10, 70
			kind, err := c.EncodeOutOfPlace(b, 80, 0x0003_0000_0000_1000, segs)
			if err != nil || kind != OutOfPlace {
				t.Fatalf("kind %v err %v", kind, err)
			}
			if err := c.Decode(b, &e); err != nil || e.Degree != 80 || e.Addr != 0x0003_0000_0000_1000 || !slices.Equal(e.Segments, segs) {
				t.Fatalf("decode %+v %v", e, err)
			}
			// Large segments overflow: (C-1)·4 bytes > Size-12.
			for i := range segs {
				segs[i] = 1 << 22
			}
			deg := uint32(c.Chunks) << 22
			kind, err = c.EncodeOutOfPlace(b, deg, 4096, segs)
			if err != nil || kind != Overflow {
				t.Fatalf("kind %v err %v", kind, err)
			}
			tab := c.OverflowTable(segs)
			if len(tab) != c.TableBytes(segs) || len(tab) != 4*(c.Chunks-1) {
				t.Fatalf("table %d bytes", len(tab))
			}
			if err := c.Decode(b, &e); err != nil || e.Kind != Overflow || int(e.TableBytes) != len(tab) {
				t.Fatalf("decode %+v %v", e, err)
			}
			if err := c.DecodeTable(tab, &e); err != nil || !slices.Equal(e.Segments, segs) {
				t.Fatalf("table decode %v %v", e.Segments, err)
			}
			if _, err := c.EncodeOutOfPlace(b, deg+1, 4096, segs); err == nil {
				t.Errorf("segments not summing to degree accepted")
			}
		})
	}
}

func TestSegmentLengths(t *testing.T) {
	bounds := []uint32{0, 10, 10, 20, 30}
	dst := []uint32{0, 3, 9, 10, 19, 25, 29}
	segs := make([]uint32, 4)
	SegmentLengths(dst, bounds, segs)
	if !slices.Equal(segs, []uint32{3, 0, 2, 2}) {
		t.Errorf("got %v", segs)
	}
}

// fuzzCodec derives codec parameters from fuzz input.
func fuzzCodec(a, b byte) EntryCodec {
	return EntryCodec{Size: []int{16, 32, 64}[int(a)%3], Weighted: a&4 != 0, Chunks: 1 + int(b)%100, Packed: a&8 != 0,
		Weights: WeightCodes[int(a>>4)%len(WeightCodes)]}
}

func FuzzEntryRoundTrip(f *testing.F) {
	f.Add(byte(1), byte(3), uint64(7), uint32(5), []byte{1, 2, 3})
	f.Add(byte(2), byte(99), uint64(1<<40), uint32(1<<20), []byte{0xff, 0, 0x40})
	f.Add(byte(5), byte(0), uint64(0), uint32(2), []byte{})
	f.Fuzz(func(t *testing.T, a, b byte, addr uint64, degree uint32, pattern []byte) {
		c := fuzzCodec(a, b)
		degree %= MaxEntryDegree + 1
		rng := rand.New(rand.NewPCG(addr, uint64(degree)))
		// Segment pattern: each byte picks a share of the remaining degree.
		segs := make([]uint32, c.Chunks)
		rest := degree
		for k := 0; k < c.Chunks-1; k++ {
			var s uint32
			if k < len(pattern) {
				switch pattern[k] % 4 {
				case 0:
					s = 0
				case 1:
					s = min(rest, uint32(pattern[k])>>2)
				case 2:
					s = rest / 2
				case 3:
					s = uint32(rng.Uint64N(uint64(rest) + 1))
				}
			}
			segs[k] = s
			rest -= s
		}
		segs[c.Chunks-1] = rest
		buf := make([]byte, c.Size)
		kind, err := c.EncodeOutOfPlace(buf, degree, addr, segs)
		if tb := c.TableBytes(segs); tb > 0 && addr&(1<<48-1) < uint64(tb) {
			if err == nil {
				t.Fatalf("overflow table of %d bytes before offset %#x accepted", tb, addr)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var e Entry
		if err := c.Decode(buf, &e); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if e.Kind != kind || e.Degree != degree || e.Addr != addr {
			t.Fatalf("got %+v want kind %v degree %d addr %x", e, kind, degree, addr)
		}
		if kind == Overflow {
			if err := c.DecodeTable(c.OverflowTable(segs), &e); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(e.Segments, segs) {
			t.Fatalf("segments %v want %v", e.Segments, segs)
		}
		// Packed: any size a list of this degree can take.
		lo, hi := c.packedRange(degree)
		size := lo + uint64(len(pattern))%(hi-lo+1)
		err = c.EncodePacked(buf, degree, addr, uint32(size))
		if size > math.MaxUint32 { // not a size an entry holds
		} else if !c.Packed {
			if err == nil {
				t.Fatalf("packed entry of %d bytes accepted by codec %+v", size, c)
			}
		} else if err != nil {
			t.Fatal(err)
		} else if err := c.Decode(buf, &e); err != nil || e.Kind != Packed || e.Degree != degree || e.Addr != addr || uint64(e.Bytes) != size {
			t.Fatalf("packed: %+v %v; want degree %d addr %x bytes %d", e, err, degree, addr, size)
		}
		// In place: up to the cap.
		k := int(degree) % (c.InPlaceCap() + 1)
		dst := make([]uint32, k)
		var w []float32
		if c.Weighted {
			w = make([]float32, k)
		}
		for i := range dst {
			dst[i] = rng.Uint32()
			if w != nil {
				switch c.Weights {
				case WeightFloat32:
					w[i] = math.Float32frombits(rng.Uint32() &^ (0xff << 23)) // finite
				default:
					w[i] = float32(rng.Uint64N(uint64(c.Weights.max()) + 1))
				}
			}
		}
		if err := c.EncodeInPlace(buf, dst, w); err != nil {
			t.Fatal(err)
		}
		if err := c.Decode(buf, &e); err != nil || e.Kind != InPlace || !slices.Equal(e.Dst, dst) {
			t.Fatalf("in place: %+v %v", e, err)
		}
		if c.Weighted && !reflect.DeepEqual(e.Weights, w) && len(w) > 0 {
			t.Fatalf("weights %v want %v", e.Weights, w)
		}
	})
}

func FuzzEntryDecode(f *testing.F) {
	f.Add(byte(1), byte(3), []byte{0x05, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, a, b byte, data []byte) {
		c := fuzzCodec(a, b)
		var e Entry
		if err := c.Decode(data, &e); err != nil {
			return
		}
		if e.Kind == Overflow {
			c.DecodeTable(data, &e) // must not panic
			return
		}
		if e.Kind == Packed {
			buf := make([]byte, c.Size)
			var e2 Entry
			if err := c.EncodePacked(buf, e.Degree, e.Addr, e.Bytes); err != nil || c.Decode(buf, &e2) != nil || e2.Bytes != e.Bytes {
				t.Fatalf("packed %+v re-encoded: %v, %+v", e, err, e2)
			}
			return
		}
		if e.Kind == OutOfPlace {
			if len(e.Segments) != c.Chunks {
				t.Fatalf("%d segments for %d chunks", len(e.Segments), c.Chunks)
			}
			var sum uint64
			for _, s := range e.Segments {
				sum += uint64(s)
			}
			if sum != uint64(e.Degree) {
				t.Fatalf("segments sum %d != degree %d", sum, e.Degree)
			}
			// Re-encoding a decoded entry decodes to the same entry.
			buf := make([]byte, c.Size)
			if _, err := c.EncodeOutOfPlace(buf, e.Degree, e.Addr, e.Segments); err != nil {
				t.Fatal(err)
			}
			var e2 Entry
			if err := c.Decode(buf, &e2); err != nil {
				t.Fatal(err)
			}
			if e2.Kind == OutOfPlace && !reflect.DeepEqual(e, e2) {
				t.Fatalf("%+v != %+v", e, e2)
			}
		}
		_ = binary.LittleEndian
	})
}
