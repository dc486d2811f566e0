package dmstore

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/pkg/errors"
)

// A packed list (LayoutConfig.Packed) stores a sorted id list as the gaps
// between consecutive ids (the first id as itself) in a group varint code:
// each group of four gaps is one control byte, whose bits 2i..2i+1 are the
// byte count minus one of gap i, then the four gaps, little-endian, in
// 1–4 bytes each. The last group holds the remaining 1–3 gaps; its unused
// control bits are zero. A weighted list's weights follow the ids, in the
// codec's WeightCode, in list order.
//
// On a Kronecker graph of 2^20 vertices an out-of-place list takes about
// 2 bytes per edge instead of 4 (docs/design.md). The code is byte-aligned
// so that a group decodes with four unaligned loads and masks, no branch
// per gap (Unpack's fast path).

// MaxPackedDegree is the longest list a packed layout packs: a longer
// one is read in pieces (a hub's tasks) and its segments sent by
// reference, which a packed list, read whole, cannot be.
const MaxPackedDegree = 1 << 16

// packs says whether the layout packs an out-of-place list of deg edges.
func (c *LayoutConfig) packs(deg uint64) bool { return c.Packed && deg <= MaxPackedDegree }

// gapBytes is the byte count of gap g in a packed list.
func gapBytes(g uint32) int { return max(1, (bits.Len32(g)+7)/8) }

// PackedBytes is the size of the packed code of the sorted ids.
func PackedBytes(ids []uint32) int {
	n := (len(ids) + 3) / 4
	prev := uint32(0)
	for _, x := range ids {
		n += gapBytes(x - prev)
		prev = x
	}
	return n
}

// AppendPacked appends the packed code of ids, sorted ascending, to b.
func AppendPacked(b []byte, ids []uint32) []byte {
	prev := uint32(0)
	for g := 0; g < len(ids); g += 4 {
		ctl := len(b)
		b = append(b, 0)
		var c byte
		for i, x := range ids[g:min(g+4, len(ids))] {
			d := x - prev
			prev = x
			n := gapBytes(d)
			c |= byte(n-1) << (2 * i)
			var w [4]byte
			binary.LittleEndian.PutUint32(w[:], d)
			b = append(b, w[:n]...) // no byte past the list's: b may be a buffer's tail
		}
		b[ctl] = c
	}
	return b
}

// packedSize is the size of ids' packed list, weights included.
func (c EntryCodec) packedSize(ids []uint32) uint64 {
	n := uint64(PackedBytes(ids))
	if c.Weighted {
		n += uint64(c.Weights.Bytes()) * uint64(len(ids))
	}
	return n
}

// Unpack decodes the n ids of the packed list at the start of b, appends
// them to out, and returns out and the bytes the ids took. A code that
// runs past b (its bytes are len(b); the capacity after them is only
// loaded from, and ignored), whose ids pass 2^32-1, or whose last group has control
// bits for gaps it does not hold is an error, never a panic.
func Unpack(b []byte, n int, out []uint32) ([]uint32, int, error) {
	full := n / 4
	at := len(out)
	out = slices.Grow(out, n)[:at+n]
	dst := out[at:]
	// Whole groups while 17 bytes are left for the loads, past the list
	// into b's capacity if it has some (a list cut from a larger read:
	// the bytes after it are only loaded, and masked off); then the
	// groups in the last 16 bytes, from a copy with room after them.
	p, g, id := groups(b[:cap(b)], 0, 0, full, 0, dst)
	if p > len(b) {
		return out[:at], 0, errors.Errorf("csr: a packed list of %d ids runs past its %d bytes by group %d", n, len(b), g)
	}
	if g < full {
		var tmp [48]byte
		rest := b[p:]
		copy(tmp[:], rest)
		q, g2, id2 := groups(tmp[:len(rest)+17], 0, g, full, id, dst)
		if q > len(rest) {
			return out[:at+4*g], 0, errors.Errorf("csr: a packed list of %d ids ends inside group %d (%d bytes)", n, g, len(b))
		}
		p, g, id = p+q, g2, id2
	}
	out = out[:at+4*g]
	if id > 1<<32-1 {
		return out, 0, errors.Errorf("csr: a packed list's ids pass 2^32-1 by group %d", g)
	}
	// The rest one gap at a time, with every length checked.
	for left := n - 4*g; left > 0; g++ {
		if p >= len(b) {
			return out, 0, errors.Errorf("csr: a packed list of %d ids ends after %d of them (%d bytes)", n, n-left, len(b))
		}
		c := b[p]
		p++
		k := min(left, 4)
		if c>>(2*k) != 0 && k < 4 {
			return out, 0, errors.Errorf("csr: a packed list's last group of %d gaps has control byte %#02x", k, c)
		}
		for i := range k {
			l := int(c>>(2*i)&3) + 1
			if p+l > len(b) {
				return out, 0, errors.Errorf("csr: a packed list of %d ids ends inside id %d (%d bytes)", n, n-left+i, len(b))
			}
			var d uint32
			for j := l - 1; j >= 0; j-- {
				d = d<<8 | uint32(b[p+j])
			}
			p += l
			id += uint64(d)
			if id > 1<<32-1 {
				return out, 0, errors.Errorf("csr: a packed list's ids pass 2^32-1 at id %d", n-left+i)
			}
			out = append(out, uint32(id))
		}
		left -= k
	}
	return out, p, nil
}

// UnpackList decodes a packed list of degree edges, b being the whole
// list (Entry.Bytes bytes): it appends the ids to dst and, for a weighted
// codec, the weights to w. A list whose code does not take exactly b is
// an error.
func (c EntryCodec) UnpackList(b []byte, degree uint32, dst []uint32, w []float32) ([]uint32, []float32, error) {
	dst, n, err := Unpack(b, int(degree), dst)
	if err != nil {
		return dst, w, err
	}
	rest := b[n:]
	if c.Weighted {
		wb := c.Weights.Bytes()
		if len(rest) != wb*int(degree) {
			return dst, w, errors.Errorf("csr: a packed list of %d weighted edges has %d bytes of weights; expected %d", degree, len(rest), wb*int(degree))
		}
		for i := 0; i < len(rest); i += wb {
			w = append(w, c.Weights.Get(rest[i:]))
		}
		return dst, w, nil
	}
	if len(rest) != 0 {
		return dst, w, errors.Errorf("csr: a packed list of %d edges is %d bytes; its code takes %d", degree, len(b), n)
	}
	return dst, w, nil
}

// gapMask keeps a gap's 1–4 bytes of a little-endian word (read only).
var gapMask = [4]uint32{0xff, 0xffff, 0xffffff, 0xffffffff}

// groups decodes whole groups g, g+1, ... (up to full) of a packed list
// from b[p:] into dst while 17 bytes are left at p, the most a group
// takes: four unaligned loads and masks, no branch per gap. id is the
// last id before group g; it returns where it stopped and the id then.
func groups(b []byte, p, g, full int, id uint64, dst []uint32) (int, int, uint64) {
	for ; g < full && p+17 <= len(b); g++ {
		w := b[p : p+17]
		c := uint(w[0])
		l0, l1, l2, l3 := c&3, c>>2&3, c>>4&3, c>>6
		q1 := 2 + l0
		q2 := q1 + 1 + l1
		q3 := q2 + 1 + l2
		d0 := binary.LittleEndian.Uint32(w[1:]) & gapMask[(l0)&3]
		d1 := binary.LittleEndian.Uint32(w[q1&7:]) & gapMask[(l1)&3]
		d2 := binary.LittleEndian.Uint32(w[q2&15:]) & gapMask[(l2)&3]
		d3 := binary.LittleEndian.Uint32(w[q3&15:]) & gapMask[(l3)&3]
		q := q3 + 1 + l3
		o := dst[4*g : 4*g+4]
		id += uint64(d0)
		o[0] = uint32(id)
		id += uint64(d1)
		o[1] = uint32(id)
		id += uint64(d2)
		o[2] = uint32(id)
		id += uint64(d3)
		o[3] = uint32(id)
		p += int(q)
	}
	return p, g, id
}
