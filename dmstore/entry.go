package dmstore

import (
	"encoding/binary"

	"github.com/pkg/errors"
)

// The adaptive index entry (DESIGN.md §4) describes one vertex in a fixed
// number of bytes (EntryCodec.Size: 16, 32 or 64). All fields are
// little-endian. The first 4-byte word is degree<<2 | kind:
//
// In place (kind 0): the edges themselves follow the header word.
//
//	[0:4]            degree<<2 | 0           (degree ≤ InPlaceCap)
//	[4:4+4c]         destination ids, uint32 (c = InPlaceCap, unused = 0)
//	[4+4c:4+(4+b)c]  weighted only: weights in the codec's WeightCode of b
//	                 bytes each, in the same order
//
// so a 32-byte entry holds up to 7 unweighted edges, or 3 weighted ones
// with float32 weights (5 with one-byte weights), and one READ fetches the
// vertex and its edges together.
//
// Out of place (kind 1, segments inline):
//
//	[0:4]    degree<<2 | 1
//	[4:12]   global address (verbs.Addr: MN<<48 | offset) of the edge list
//	[12:S]   the lengths of segments 0..C-2 as varints (segment k = the
//	         edges whose destination lies in CN chunk k; the last segment's
//	         length is degree minus the others), zero padding after
//
// Out of place with overflow table (kind 2), when the varints do not fit:
//
//	[0:4]    degree<<2 | 2
//	[4:12]   global address of the edge list
//	[12:16]  T, the byte size of the overflow table (a multiple of 4)
//
// The overflow table sits at address-T, just before the edge list, so one
// READ of T + degree·record bytes fetches both. It holds the same C-1
// varints, zero-padded to T bytes.
//
// Varint: 1–4 bytes, big-endian; the top two bits of the first byte are the
// byte count minus one, the remaining 6, 14, 22 or 30 bits the value (so
// values below 2^30). Degrees are below 2^30 as well.
//
// Packed (kind 3, a codec with Packed set: LayoutConfig.Packed):
//
//	[0:4]    degree<<2 | 3
//	[4:12]   global address of the packed list (pack.go)
//	[12:16]  its size in bytes, weights included
//
// A packed list has no segment lengths: it is read whole and cut at the
// chunk bounds by its reader. A packed layout packs the lists of up to
// MaxPackedDegree edges; longer ones are records, as above.
//
// An out-of-place edge list is degree records sorted by destination: a
// uint32 destination id, followed (weighted graphs) by the weight in the
// codec's WeightCode (weights.go: float32, or a one- or two-byte integer
// when every weight of the graph is one).
type EntryCodec struct {
	// Size is the entry size in bytes: 16, 32 or 64.
	Size int
	// Weighted says whether edges carry a weight, stored as Weights says.
	Weighted bool
	Weights  WeightCode
	// Chunks is the number of CN chunks C (segments per edge list), ≥ 1.
	Chunks int
	// Packed: out-of-place lists of up to MaxPackedDegree edges are
	// packed (Packed entries).
	Packed bool
}

// EntryKind tells how an entry stores its edges.
type EntryKind uint8

const (
	InPlace    EntryKind = 0
	OutOfPlace EntryKind = 1
	Overflow   EntryKind = 2 // out of place, segment lengths in an overflow table
	Packed     EntryKind = 3 // out of place, packed, no segment lengths
)

func (k EntryKind) String() string {
	switch k {
	case InPlace:
		return "in-place"
	case OutOfPlace:
		return "out-of-place"
	case Overflow:
		return "overflow"
	case Packed:
		return "packed"
	}
	return "kind?"
}

// MaxEntryDegree is the largest degree an entry can describe (30 bits).
const MaxEntryDegree = 1<<30 - 1

// MaxVarint is the largest value a segment-length varint holds.
const MaxVarint = 1<<30 - 1

// Entry is a decoded index entry.
type Entry struct {
	Kind   EntryKind
	Degree uint32
	// Dst and Weights are the in-place edges (Weights only when weighted).
	Dst     []uint32
	Weights []float32
	// Addr is the global address of an out-of-place edge list.
	Addr uint64
	// Segments holds all C segment lengths of an out-of-place list (for
	// Overflow entries, after DecodeTable).
	Segments []uint32
	// TableBytes is the overflow table size (Overflow entries).
	TableBytes uint32
	// Bytes is the size of a packed list (Packed entries).
	Bytes uint32
}

// Validate checks the codec parameters.
func (c EntryCodec) Validate() error {
	if c.Size != 16 && c.Size != 32 && c.Size != 64 {
		return errors.Errorf("csr: index entry size %d; expected 16, 32 or 64", c.Size)
	}
	if c.Chunks < 1 || c.Chunks > 1<<16 {
		return errors.Errorf("csr: %d chunks; expected 1..65536", c.Chunks)
	}
	if c.Weights > WeightUint8 {
		return errors.Errorf("csr: weight code %d; expected 0..%d", c.Weights, WeightUint8)
	}
	return nil
}

// RecordBytes is the size of one out-of-place edge record: 4, or 4 and
// the weight's bytes (8 with float32 weights).
func (c EntryCodec) RecordBytes() int {
	if c.Weighted {
		return 4 + c.Weights.Bytes()
	}
	return 4
}

// InPlaceCap is the largest degree stored in place.
func (c EntryCodec) InPlaceCap() int { return (c.Size - 4) / c.RecordBytes() }

// VarintLen is the encoded size of v (v ≤ MaxVarint).
func VarintLen(v uint32) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<22:
		return 3
	}
	return 4
}

// PutVarint encodes v (≤ MaxVarint) at b and returns the bytes written; b
// must have room.
func PutVarint(b []byte, v uint32) int {
	n := VarintLen(v)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	b[0] = b[0]&0x3f | byte(n-1)<<6
	return n
}

// Varint decodes one varint from b, returning the value and its size, or
// size 0 if b is too short.
func Varint(b []byte) (uint32, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := int(b[0]>>6) + 1
	if len(b) < n {
		return 0, 0
	}
	v := uint32(b[0] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint32(b[i])
	}
	return v, n
}

// segBytes is the varint size of the first C-1 segment lengths.
func segBytes(segs []uint32) int {
	n := 0
	for _, s := range segs[:max(len(segs)-1, 0)] {
		n += VarintLen(s)
	}
	return n
}

// SegmentsFit reports whether the segment lengths fit inline.
func (c EntryCodec) SegmentsFit(segs []uint32) bool { return segBytes(segs) <= c.Size-12 }

// TableBytes is the overflow table size for segs (0 if they fit inline).
func (c EntryCodec) TableBytes(segs []uint32) int {
	if c.SegmentsFit(segs) {
		return 0
	}
	return (segBytes(segs) + 3) &^ 3
}

// Kind says how a vertex with these out-edges is stored, given whether
// in-place storage is enabled.
func (c EntryCodec) Kind(degree int, segs []uint32, inPlace bool) EntryKind {
	if inPlace && degree <= c.InPlaceCap() {
		return InPlace
	}
	if c.SegmentsFit(segs) {
		return OutOfPlace
	}
	return Overflow
}

// EncodeInPlace writes an in-place entry for edges dst (weights w, float32,
// when weighted) into b[:Size].
func (c EntryCodec) EncodeInPlace(b []byte, dst []uint32, w []float32) error {
	if len(b) < c.Size {
		return errors.Errorf("csr: entry buffer of %d bytes; expected %d", len(b), c.Size)
	}
	k := c.InPlaceCap()
	if len(dst) > k {
		return errors.Errorf("csr: %d edges do not fit in place (at most %d)", len(dst), k)
	}
	if (c.Weighted && len(w) != len(dst)) || (!c.Weighted && len(w) > 0) {
		return errors.Errorf("csr: %d in-place weights for %d edges of a weighted=%v codec", len(w), len(dst), c.Weighted)
	}
	clear(b[:c.Size])
	binary.LittleEndian.PutUint32(b, uint32(len(dst))<<2|uint32(InPlace))
	for i, d := range dst {
		binary.LittleEndian.PutUint32(b[4+4*i:], d)
	}
	wb := c.Weights.Bytes()
	for i, x := range w {
		if !c.Weights.Holds(float64(x)) {
			return errors.Errorf("csr: in-place weight %g is not one the entry's %s weights hold", x, c.Weights)
		}
		c.Weights.Put(b[4+4*k+wb*i:], float64(x))
	}
	return nil
}

// EncodeOutOfPlace writes an out-of-place entry into b[:Size]: degree,
// the edge list address and the C segment lengths (summing to degree).
// If the lengths do not fit it writes an Overflow entry; the caller then
// stores OverflowTable(segs) at addr - TableBytes(segs).
func (c EntryCodec) EncodeOutOfPlace(b []byte, degree uint32, addr uint64, segs []uint32) (EntryKind, error) {
	if len(b) < c.Size {
		return 0, errors.Errorf("csr: entry buffer of %d bytes; expected %d", len(b), c.Size)
	}
	if degree > MaxEntryDegree {
		return 0, errors.Errorf("csr: degree %d exceeds the index entry's %d", degree, MaxEntryDegree)
	}
	if len(segs) != c.Chunks {
		return 0, errors.Errorf("csr: %d segment lengths; expected one per chunk (%d)", len(segs), c.Chunks)
	}
	var sum uint64
	for _, s := range segs {
		sum += uint64(s)
	}
	if sum != uint64(degree) {
		return 0, errors.Errorf("csr: segment lengths sum to %d; expected the degree %d", sum, degree)
	}
	clear(b[:c.Size])
	binary.LittleEndian.PutUint64(b[4:], addr)
	if c.SegmentsFit(segs) {
		binary.LittleEndian.PutUint32(b, degree<<2|uint32(OutOfPlace))
		p := 12
		for _, s := range segs[:len(segs)-1] {
			p += PutVarint(b[p:], s)
		}
		return OutOfPlace, nil
	}
	tb := c.TableBytes(segs)
	if addr&(1<<48-1) < uint64(tb) {
		return 0, errors.Errorf("csr: overflow table of %d bytes does not fit before offset %#x", tb, addr&(1<<48-1))
	}
	binary.LittleEndian.PutUint32(b, degree<<2|uint32(Overflow))
	binary.LittleEndian.PutUint32(b[12:], uint32(tb))
	return Overflow, nil
}

// packedRange is the least and the most bytes a packed list of degree
// edges takes: a control byte per four gaps, 1 to 4 bytes a gap, and a
// weighted list's weights.
func (c EntryCodec) packedRange(degree uint32) (lo, hi uint64) {
	d := uint64(degree)
	lo, hi = d+(d+3)/4, 4*d+(d+3)/4
	if c.Weighted {
		wb := uint64(c.Weights.Bytes()) * d
		lo, hi = lo+wb, hi+wb
	}
	return lo, hi
}

// checkPackedSize refuses a packed list size that degree edges cannot
// take.
func (c EntryCodec) checkPackedSize(degree, size uint32) error {
	if lo, hi := c.packedRange(degree); uint64(size) < lo || uint64(size) > hi {
		return errors.Errorf("csr: a packed list of %d edges in %d bytes; expected %d..%d", degree, size, lo, hi)
	}
	return nil
}

// EncodePacked writes a Packed entry into b[:Size]: degree, the packed
// list's address and its size in bytes.
func (c EntryCodec) EncodePacked(b []byte, degree uint32, addr uint64, size uint32) error {
	if len(b) < c.Size {
		return errors.Errorf("csr: entry buffer of %d bytes; expected %d", len(b), c.Size)
	}
	if !c.Packed {
		return errors.New("csr: a packed entry in a layout whose lists are not packed")
	}
	if degree > MaxEntryDegree {
		return errors.Errorf("csr: degree %d exceeds the index entry's %d", degree, MaxEntryDegree)
	}
	if err := c.checkPackedSize(degree, size); err != nil {
		return err
	}
	clear(b[:c.Size])
	binary.LittleEndian.PutUint32(b, degree<<2|uint32(Packed))
	binary.LittleEndian.PutUint64(b[4:], addr)
	binary.LittleEndian.PutUint32(b[12:], size)
	return nil
}

// OverflowTable encodes the overflow table of segs (TableBytes(segs) bytes).
func (c EntryCodec) OverflowTable(segs []uint32) []byte {
	t := make([]byte, c.TableBytes(segs))
	p := 0
	for _, s := range segs[:max(len(segs)-1, 0)] {
		if p+VarintLen(s) > len(t) {
			break // segs fit inline; no table
		}
		p += PutVarint(t[p:], s)
	}
	return t
}

// PeekEntry reads the header of the entry at b: its kind and degree, and
// for an entry out of place (every kind but InPlace) its list's address.
// It checks nothing; Decode does.
func PeekEntry(b []byte) (kind EntryKind, degree uint32, addr uint64) {
	h := binary.LittleEndian.Uint32(b)
	if kind, degree = EntryKind(h&3), h>>2; kind != InPlace {
		addr = binary.LittleEndian.Uint64(b[4:])
	}
	return kind, degree, addr
}

// InPlaceIDs is the bytes of the degree destination ids of the in-place
// entry at b.
func InPlaceIDs(b []byte, degree uint32) []byte { return b[4 : 4+4*degree] }

// Decode decodes the entry in b[:Size] into e, reusing e's slices. For an
// Overflow entry the segment lengths are in the table: call DecodeTable.
// It returns an error (never panics) on a malformed entry.
func (c EntryCodec) Decode(b []byte, e *Entry) error {
	if len(b) < c.Size {
		return errors.Errorf("csr: entry of %d bytes; expected %d", len(b), c.Size)
	}
	e.Kind, e.Degree, e.Addr = PeekEntry(b)
	e.Dst, e.Weights, e.Segments = e.Dst[:0], e.Weights[:0], e.Segments[:0]
	e.TableBytes, e.Bytes = 0, 0
	switch e.Kind {
	case InPlace:
		k := c.InPlaceCap()
		if int(e.Degree) > k {
			return errors.Errorf("csr: in-place entry with degree %d; at most %d fit", e.Degree, k)
		}
		for i := 0; i < int(e.Degree); i++ {
			e.Dst = append(e.Dst, binary.LittleEndian.Uint32(b[4+4*i:]))
		}
		if c.Weighted {
			wb := c.Weights.Bytes()
			for i := 0; i < int(e.Degree); i++ {
				e.Weights = append(e.Weights, c.Weights.Get(b[4+4*k+wb*i:]))
			}
		}
		return nil
	case OutOfPlace:
		return c.decodeSegs(b[12:c.Size], e)
	case Overflow:
		e.TableBytes = binary.LittleEndian.Uint32(b[12:])
		if e.TableBytes%4 != 0 || uint64(e.TableBytes) > 4*uint64(c.Chunks) {
			return errors.Errorf("csr: overflow table of %d bytes; expected a multiple of 4 up to %d", e.TableBytes, 4*c.Chunks)
		}
		if e.TableBytes > 0 && uint64(e.TableBytes) > e.Addr&(1<<48-1) {
			return errors.Errorf("csr: overflow table of %d bytes before offset %#x", e.TableBytes, e.Addr&(1<<48-1))
		}
		return nil
	case Packed:
		if !c.Packed {
			return errors.New("csr: a packed index entry in a layout whose lists are not packed")
		}
		e.Bytes = binary.LittleEndian.Uint32(b[12:])
		return c.checkPackedSize(e.Degree, e.Bytes)
	}
	return errors.Errorf("csr: index entry of unknown kind %d", e.Kind)
}

// DecodeTable decodes the overflow table of an Overflow entry e (read from
// e.Addr - e.TableBytes) into e.Segments.
func (c EntryCodec) DecodeTable(table []byte, e *Entry) error {
	if e.Kind != Overflow {
		return errors.Errorf("csr: DecodeTable on a %v entry", e.Kind)
	}
	if len(table) < int(e.TableBytes) {
		return errors.Errorf("csr: overflow table of %d bytes; expected %d", len(table), e.TableBytes)
	}
	return c.decodeSegs(table[:e.TableBytes], e)
}

func (c EntryCodec) decodeSegs(b []byte, e *Entry) error {
	e.Segments = e.Segments[:0]
	var sum uint64
	p := 0
	for k := 0; k < c.Chunks-1; k++ {
		v, n := Varint(b[p:])
		if n == 0 {
			return errors.Errorf("csr: segment %d of %d: varint runs past the %d bytes available", k, c.Chunks, len(b))
		}
		p += n
		sum += uint64(v)
		e.Segments = append(e.Segments, v)
	}
	if sum > uint64(e.Degree) {
		return errors.Errorf("csr: segment lengths sum to %d, more than the degree %d", sum, e.Degree)
	}
	e.Segments = append(e.Segments, e.Degree-uint32(sum))
	return nil
}

// SegmentLengths fills segs (len C) with the number of edges of the sorted
// list dst whose destination lies in each chunk; bounds are the C+1 chunk
// boundaries (as from balance.Chunks).
func SegmentLengths(dst []uint32, bounds []uint32, segs []uint32) {
	c := len(bounds) - 1
	i := 0
	for k := 0; k < c; k++ {
		j := i
		hi := bounds[k+1]
		if k == c-1 {
			j = len(dst)
		} else {
			// galloping would be faster for long lists; dst is sorted
			lo, h := i, len(dst)
			for lo < h {
				m := int(uint(lo+h) >> 1)
				if dst[m] < hi {
					lo = m + 1
				} else {
					h = m
				}
			}
			j = lo
		}
		segs[k] = uint32(j - i)
		i = j
	}
}
