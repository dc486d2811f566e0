package dmstore

import (
	"encoding/binary"
	"math"
)

// WeightCode is how a layout stores its edges' weights on DM. Weights are
// float32 for the engine; a graph whose weights are all small integers
// (gapbs's and Graph500's 1–255, road networks' metres) stores them in one
// or two bytes instead of four, exactly: an edge record is then 5 or 6
// bytes instead of 8, every dense iteration of a weighted kernel reads
// that much less, and an entry holds more edges in place.
//
// The zero value is float32, the code of every layout made before codes
// existed. A larger code is a narrower one, so the code every part of a
// graph can take is the least of the parts' (NarrowestWeights).
type WeightCode uint8

const (
	WeightFloat32 WeightCode = iota // 4 bytes, IEEE 754 single precision
	WeightUint16                    // 2 bytes, little-endian, an integer 0..65535
	WeightUint8                     // 1 byte, an integer 0..255
)

// WeightCodes are the codes, widest first.
var WeightCodes = [...]WeightCode{WeightFloat32, WeightUint16, WeightUint8}

func (c WeightCode) String() string {
	switch c {
	case WeightFloat32:
		return "float32"
	case WeightUint16:
		return "uint16"
	case WeightUint8:
		return "uint8"
	}
	return "weight-code?"
}

// Bytes is the size of one stored weight.
func (c WeightCode) Bytes() int {
	switch c {
	case WeightUint16:
		return 2
	case WeightUint8:
		return 1
	}
	return 4
}

// max is the largest weight an integer code holds.
func (c WeightCode) max() float64 {
	switch c {
	case WeightUint16:
		return math.MaxUint16
	case WeightUint8:
		return math.MaxUint8
	}
	return math.Inf(1)
}

// Holds says whether the code stores w exactly, as float32(w) reads. An
// integer code holds the non-negative integers up to its maximum (not
// -0, whose sign it would lose); float32 holds every weight, rounded.
func (c WeightCode) Holds(w float64) bool {
	if c == WeightFloat32 {
		return true
	}
	return w >= 0 && w <= c.max() && w == math.Trunc(w) && !math.Signbit(w)
}

// NarrowestWeights is the narrowest code that holds every one of ws,
// starting from code from (WeightUint8 for a first part): a graph's
// parts, each measured on its own, take the least of their codes.
func NarrowestWeights(from WeightCode, ws []float64) WeightCode {
	c := from
	for _, w := range ws {
		for c != WeightFloat32 && !c.Holds(w) {
			c--
		}
		if c == WeightFloat32 {
			break
		}
	}
	return c
}

// Put stores w at b[:c.Bytes()] (w as float32 for WeightFloat32; an
// integer code truncates what it does not hold: Holds first).
func (c WeightCode) Put(b []byte, w float64) {
	switch c {
	case WeightUint16:
		binary.LittleEndian.PutUint16(b, uint16(w))
	case WeightUint8:
		b[0] = uint8(w)
	default:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(w)))
	}
}

// Append appends w as Put stores it.
func (c WeightCode) Append(b []byte, w float64) []byte {
	var buf [4]byte
	c.Put(buf[:], w)
	return append(b, buf[:c.Bytes()]...)
}

// Get reads the weight stored at b[:c.Bytes()].
func (c WeightCode) Get(b []byte) float32 {
	switch c {
	case WeightUint16:
		return float32(binary.LittleEndian.Uint16(b))
	case WeightUint8:
		return float32(b[0])
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// WeightCodeOfRecord is the code of the weights of edge records of rec
// bytes (4 + the weight's bytes), for readers that know a layout by its
// record size only (package update). It is false for a size no code has.
func WeightCodeOfRecord(rec int) (WeightCode, bool) {
	for _, c := range WeightCodes {
		if 4+c.Bytes() == rec {
			return c, true
		}
	}
	return 0, false
}
