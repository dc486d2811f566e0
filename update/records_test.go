package update

import (
	"encoding/binary"
	"math"
	"testing"
)

// DecodeRecords agrees with a record-by-record decode whatever the
// alignment of the bytes, appends after what dst and w hold, and writes in
// place when they have room (the apply decodes into slices of one array).
func TestDecodeRecords(t *testing.T) {
	for _, c := range []struct {
		name     string
		weighted bool
		n, skew  int
		pre      int
	}{
		{"unweighted", false, 9, 0, 0},
		{"weighted-aligned", true, 33, 0, 0},
		{"weighted-unaligned", true, 17, 1, 0},
		{"weighted-appends", true, 5, 0, 3},
		{"empty", true, 0, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := 4
			if c.weighted {
				rec = 8
			}
			raw := make([]byte, c.skew+c.n*rec)
			b := raw[c.skew:]
			for i := range c.n {
				binary.LittleEndian.PutUint32(b[i*rec:], uint32(7*i+1))
				if c.weighted {
					binary.LittleEndian.PutUint32(b[i*rec+4:], math.Float32bits(float32(i)/4))
				}
			}
			backing := make([]uint32, c.pre+c.n)
			for i := range c.pre {
				backing[i] = 99
			}
			wb := make([]float32, c.pre+c.n)
			dst, w := DecodeRecords(b, rec, c.weighted, backing[:c.pre], wb[:c.pre])
			if len(dst) != c.pre+c.n {
				t.Fatalf("%d destinations, want %d", len(dst), c.pre+c.n)
			}
			for i := range c.pre {
				if dst[i] != 99 {
					t.Fatalf("destination %d before the records changed to %d", i, dst[i])
				}
			}
			for i := range c.n {
				if got := dst[c.pre+i]; got != uint32(7*i+1) || backing[c.pre+i] != got {
					t.Fatalf("destination %d = %d (in place %d), want %d", i, got, backing[c.pre+i], 7*i+1)
				}
				if c.weighted && (w[c.pre+i] != float32(i)/4 || wb[c.pre+i] != w[c.pre+i]) {
					t.Fatalf("weight %d = %v, want %v", i, w[c.pre+i], float32(i)/4)
				}
			}
		})
	}
}
