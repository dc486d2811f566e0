package update

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	"github.com/dmg-hpc/dmg/dmstore"
)

// Edge records on DM (dmstore's layout): a little-endian uint32
// destination, followed on weighted graphs by its weight in the layout's
// code (dmstore.WeightCode), which the record's size tells.

// littleEndian says this machine stores words as DM does, so unweighted
// records can be read in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// DecodeRecords appends the destinations (and, weighted, the weights) of
// packed edge records to dst and w.
func DecodeRecords(b []byte, rec int, weighted bool, dst []uint32, w []float32) ([]uint32, []float32) {
	n := len(b) / rec
	if n == 0 {
		return dst, w
	}
	d0 := len(dst)
	dst = slices.Grow(dst, n)[:d0+n]
	out := dst[d0:]
	if !weighted {
		for i := range out {
			out[i] = binary.LittleEndian.Uint32(b[i*rec:])
		}
		return dst, w
	}
	w0 := len(w)
	w = slices.Grow(w, n)[:w0+n]
	ws := w[w0:]
	if littleEndian && rec == 8 && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		// The records as (destination, weight bits) word pairs, in place.
		pairs := unsafe.Slice((*[2]uint32)(unsafe.Pointer(&b[0])), n)
		for i, p := range pairs {
			out[i], ws[i] = p[0], math.Float32frombits(p[1])
		}
		return dst, w
	}
	code, _ := dmstore.WeightCodeOfRecord(rec)
	if code == dmstore.WeightUint8 { // the common integer weights, unrolled
		for i := range out {
			r := b[i*5 : i*5+5]
			out[i], ws[i] = binary.LittleEndian.Uint32(r), float32(r[4])
		}
		return dst, w
	}
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[i*rec:])
		ws[i] = code.Get(b[i*rec+4:])
	}
	return dst, w
}

// Destinations views unweighted records as their destination ids without
// copying when the machine is little-endian and b is 4-byte aligned, else
// decodes them into scratch. It returns the view and the scratch to keep.
func Destinations(b []byte, scratch []uint32) ([]uint32, []uint32) {
	n := len(b) / 4
	if n == 0 {
		return nil, scratch
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n), scratch
	}
	scratch, _ = DecodeRecords(b, 4, false, scratch[:0], nil)
	return scratch, scratch
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// u32Bytes is words as DM stores them (little-endian): a
// view of the words themselves on little-endian machines, else encoded
// into scratch.
func u32Bytes(w []uint32, scratch *[]byte) []byte {
	if len(w) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 4*len(w))
	}
	b := (*scratch)[:0]
	for _, x := range w {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	*scratch = b
	return b
}

// WordBytes is w as DM stores words (little-endian): a view of w itself
// on little-endian machines, else w encoded into *scratch.
func WordBytes(w []uint64, scratch *[]byte) []byte {
	if v := WordsView(w); v != nil || len(w) == 0 {
		return v
	}
	b := (*scratch)[:0]
	for _, x := range w {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	*scratch = b
	return b
}

// WordsView is w's own memory as bytes when that is how DM stores the
// words (little-endian machines), so a READ can land in w itself; nil
// otherwise, or when w is empty.
func WordsView(w []uint64) []byte {
	if !littleEndian || len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

// Pairs views a ValRD block's pairs (b the whole block, n its count) as
// their destinations and values, decoding into the scratch slices on
// big-endian machines or unaligned buffers.
func Pairs(b []byte, block, n uint64, dst []uint32, val []uint64) ([]uint32, []uint64) {
	d := b[blockHeader : blockHeader+4*n]
	v := b[blockHeader+4*block : blockHeader+4*block+8*n]
	if n == 0 {
		return nil, nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&d[0]))%4 == 0 && uintptr(unsafe.Pointer(&v[0]))%8 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&d[0])), n), unsafe.Slice((*uint64)(unsafe.Pointer(&v[0])), n)
	}
	dst, val = dst[:0], val[:0]
	for i := range n {
		dst = append(dst, binary.LittleEndian.Uint32(d[4*i:]))
		val = append(val, binary.LittleEndian.Uint64(v[8*i:]))
	}
	return dst, val
}
