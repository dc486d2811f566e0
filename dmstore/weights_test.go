package dmstore

import (
	"math"
	"testing"
)

func TestWeightCode(t *testing.T) {
	tests := []struct {
		w               float64
		u8, u16, narrow bool // held by uint8, by uint16
	}{
		{0, true, true, true},
		{1, true, true, true},
		{255, true, true, true},
		{256, false, true, true},
		{65535, false, true, true},
		{65536, false, false, false},
		{0.5, false, false, false},
		{-1, false, false, false},
		{math.Copysign(0, -1), false, false, false}, // its sign would be lost
		{math.NaN(), false, false, false},
		{math.Inf(1), false, false, false},
		{1e-40, false, false, false},
	}
	for _, tc := range tests {
		if WeightUint8.Holds(tc.w) != tc.u8 || WeightUint16.Holds(tc.w) != tc.u16 || !WeightFloat32.Holds(tc.w) {
			t.Errorf("%g: held by uint8 %v, uint16 %v, float32 %v", tc.w, WeightUint8.Holds(tc.w), WeightUint16.Holds(tc.w), WeightFloat32.Holds(tc.w))
		}
		for _, c := range WeightCodes {
			if !c.Holds(tc.w) || math.IsNaN(tc.w) {
				continue
			}
			b := c.Append(nil, tc.w)
			if len(b) != c.Bytes() || math.Float32bits(c.Get(b)) != math.Float32bits(float32(tc.w)) {
				t.Errorf("%s: %g stored as %x reads %g", c, tc.w, b, c.Get(b))
			}
		}
	}
	narrow := []struct {
		from WeightCode
		ws   []float64
		want WeightCode
	}{
		{WeightUint8, nil, WeightUint8},
		{WeightUint8, []float64{1, 2, 255}, WeightUint8},
		{WeightUint8, []float64{1, 300, 2}, WeightUint16},
		{WeightUint16, []float64{1, 2}, WeightUint16}, // never wider than from
		{WeightUint8, []float64{1, 300, 0.25}, WeightFloat32},
		{WeightUint8, []float64{70000, 1}, WeightFloat32},
		{WeightFloat32, []float64{1}, WeightFloat32},
	}
	for _, tc := range narrow {
		if got := NarrowestWeights(tc.from, tc.ws); got != tc.want {
			t.Errorf("NarrowestWeights(%s, %v) = %s, want %s", tc.from, tc.ws, got, tc.want)
		}
	}
	for _, c := range WeightCodes {
		if got, ok := WeightCodeOfRecord(4 + c.Bytes()); !ok || got != c {
			t.Errorf("record of %d bytes: %s %v, want %s", 4+c.Bytes(), got, ok, c)
		}
	}
	if _, ok := WeightCodeOfRecord(7); ok {
		t.Error("a 7-byte record has a weight code")
	}
}

// A stored weight reads back as the float32 the engine would compute
// with, for every weight a code holds; Get reads any bytes without
// failing.
func FuzzWeightCode(f *testing.F) {
	f.Add(1.0, []byte{1, 2, 3, 4})
	f.Add(255.0, []byte{0xff})
	f.Add(0.1, []byte{})
	f.Fuzz(func(t *testing.T, w float64, raw []byte) {
		for _, c := range WeightCodes {
			if len(raw) >= c.Bytes() {
				x := c.Get(raw)
				if c != WeightFloat32 && (x < 0 || float64(x) > c.max() || x != float32(math.Trunc(float64(x)))) {
					t.Fatalf("%s read %g from %x", c, x, raw)
				}
			}
			if !c.Holds(w) || math.IsNaN(w) {
				continue
			}
			if got := c.Get(c.Append(nil, w)); math.Float32bits(got) != math.Float32bits(float32(w)) {
				t.Fatalf("%s: %g reads back as %g", c, w, got)
			}
		}
	})
}
