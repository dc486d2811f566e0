package csr

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// recCodec is how a staged read writes an edge routed to a part (a
// window, or a chunk built whole) as a record of the staging memory:
//   - 16 bytes, weighted: source, destination, weight;
//   - 8 bytes: source and destination, 32 bits each;
//   - 6 bytes, unweighted when the ids have at most narrowMaxBits bits:
//     the end outside the part (or either, when both are in it) in the
//     low far bits, the end in the part as an offset from the part's
//     first vertex in the next 47 − far bits, and in bit 47 which end
//     that is (1: the destination). A part is then at most
//     2^(47−far) vertices wide (width).
//
// At kron:26 the 2.15 G records of a load take 12.9 GB as 6-byte
// records against 17.2 GB: two rounds of the default staging memory
// instead of three, a generation and a routing of every edge fewer.
type recCodec struct {
	bytes int
	far   uint // 6-byte records: the bits of the far end
}

// narrowMaxBits is the widest ids 6-byte records take: their parts may
// then be 2^20 vertices wide.
const narrowMaxBits = 27

// codecFor is the records of a staged read of ids below n: 16 bytes if
// weighted, else 6 when the ids fit narrowMaxBits bits, else 8.
func codecFor(weighted bool, n uint64) recCodec {
	switch far := uint(max(bits.Len64(n-min(n, 1)), 1)); {
	case weighted:
		return recCodec{bytes: 16}
	case far <= narrowMaxBits:
		return recCodec{bytes: 6, far: far}
	default:
		return recCodec{bytes: 8}
	}
}

// width is the widest part the records can address (0: any, which ids
// of up to 23 bits can).
func (c recCodec) width() uint32 {
	if c.bytes != 6 || 47-c.far >= c.far {
		return 0
	}
	return 1 << (47 - c.far)
}

// put writes e into b (c.bytes long), routed to the part whose first
// vertex is lo and which holds e's destination if dst, else its source.
func (c recCodec) put(b []byte, e edgeRec, lo uint64, dst bool) {
	switch c.bytes {
	case 6:
		c.put6(b, e, lo, dst)
	case 16:
		binary.LittleEndian.PutUint64(b[8:], math.Float64bits(e.w))
		fallthrough
	default:
		binary.LittleEndian.PutUint32(b, uint32(e.s))
		binary.LittleEndian.PutUint32(b[4:], uint32(e.d))
	}
}

// put6 is put of a 6-byte record, without a branch on dst (at random
// where an edge is routed by both ends): the end in the part as its
// offset from lo, the other whole, and dst in bit 47.
func (c recCodec) put6(b []byte, e edgeRec, lo uint64, dst bool) {
	var f uint64
	if dst {
		f = 1
	}
	x := (e.s ^ e.d) & -f // swaps the ends when the destination is near
	v := e.d ^ x | (e.s^x-lo)<<c.far | f<<47
	binary.LittleEndian.PutUint32(b, uint32(v))
	binary.LittleEndian.PutUint16(b[4:], uint16(v>>32))
}

// offsets decodes the record at b, routed to the part from lo, as its
// source's and destination's offsets from lo (an end before lo wraps
// past the part).
func (c recCodec) offsets(b []byte, lo uint64) (i, j uint64) {
	if c.bytes == 6 {
		return c.offsets6(b, lo)
	}
	return uint64(binary.LittleEndian.Uint32(b)) - lo, uint64(binary.LittleEndian.Uint32(b[4:])) - lo
}

// offsets6 is offsets of a 6-byte record, without a branch on which end
// is in the part (each is, at random).
func (c recCodec) offsets6(b []byte, lo uint64) (i, j uint64) {
	v := uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint16(b[4:]))<<32
	near, far := (v>>c.far)&(1<<(47-c.far)-1), v&(1<<c.far-1)-lo
	swap := (near ^ far) & -(v >> 47) // all ones when the destination is near
	return near ^ swap, far ^ swap
}

// get decodes the record at b, routed to the part whose first vertex is
// lo, with its weight (1 when unweighted).
func (c recCodec) get(b []byte, lo uint64) edgeRec {
	i, j := c.offsets(b, lo)
	e := edgeRec{s: uint64(uint32(lo + i)), d: uint64(uint32(lo + j)), w: 1}
	if c.bytes == 16 {
		e.w = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	}
	return e
}
