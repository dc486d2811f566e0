package update

import (
	"encoding/binary"
	"slices"

	"github.com/dmg-hpc/dmg/reduce"
	"github.com/dmg-hpc/dmg/verbs"
)

// Reader queues READs and completes them at Flush (a verbs.ReadMerger, or
// the endpoint itself).
type Reader interface {
	Read(dst []byte, src verbs.Addr) error
	Flush() error
}

// RefCursor walks chunk k's RefRD mailbox for its owner: Pullable while
// the senders are still at work (with SenderConfig.Commit), Drainable once
// after the barrier that ends their sends. It remembers how far the owner
// has taken records, so every record is applied exactly once.
type RefCursor struct {
	mb   *Mailboxes
	k    int
	done uint64 // bytes of records taken so far
}

// RefCursor starts at the beginning of chunk k's RefRD mailbox.
func (mb *Mailboxes) RefCursor(k int) *RefCursor { return &RefCursor{mb: mb, k: k} }

// Pullable returns how far the records are complete while senders work:
// it reads the commit counter, then the tail, and only when the two are
// equal is every reserved byte written (the commit never passes the tail,
// and both only grow). It returns the cursor's position when fewer than
// minItems new records are complete (fewer would make small READs).
func (c *RefCursor) Pullable(ep verbs.Endpoint, minItems int) (uint64, error) {
	box := c.mb.Ref[c.k]
	committed, err := readWord(ep, box.Add(commitOff))
	if err != nil {
		return c.done, err
	}
	if min(committed, c.mb.RefCap) < c.done+uint64(minItems)*RefRec {
		return c.done, nil // not worth a look at the tail yet
	}
	tail, err := readWord(ep, box)
	if err != nil || tail != committed {
		return c.done, err
	}
	return min(tail, c.mb.RefCap), nil
}

// Drainable is how far the records go once every sender is done (after
// the iteration's barrier).
func (c *RefCursor) Drainable(ep verbs.Endpoint) (uint64, error) {
	used, _, err := Used(ep, c.mb.Ref[c.k], c.mb.RefCap)
	return max(used, c.done), err
}

// Take reads the records from the cursor up to upto (at most maxBytes of
// them, rounded down to whole records), decodes them into items (appended; recBytes, maxEdges and the
// vertex count n describe the layout, check its pools) and advances the
// cursor.
func (c *RefCursor) Take(ep verbs.Endpoint, upto, maxBytes uint64, buf []byte, recBytes int, maxEdges, n uint32, check verbs.RangeChecker, items []RefItem) ([]RefItem, []byte, error) {
	if upto <= c.done {
		return items, buf, nil
	}
	size := min(upto-c.done, max(RefRec, maxBytes/RefRec*RefRec))
	buf = grow(buf, int(size))
	if err := verbs.ReadBulk(ep, buf, Records(c.mb.Ref[c.k], c.done)); err != nil {
		return items, buf, err
	}
	c.done += size
	items, err := DecodeRefs(buf, recBytes, maxEdges, n, check, items)
	return items, buf, err
}

// Position is how many bytes of records the cursor has taken.
func (c *RefCursor) Position() uint64 { return c.done }

// Done tells whether the cursor has reached upto.
func (c *RefCursor) Done(upto uint64) bool { return c.done >= upto }

// Rewind sets the cursor back to the start (after the mailbox is reset).
func (c *RefCursor) Rewind() { c.done = 0 }

// FetchSegments queues, on r, the READs of the segments of items into buf
// at consecutive offsets (item i at offs[i]); the caller flushes r. buf
// must hold Σ Edges·recBytes bytes.
func FetchSegments(r Reader, items []RefItem, recBytes int, buf []byte, offs []int) ([]int, error) {
	off := 0
	for _, it := range items {
		n := int(it.Edges) * recBytes
		if err := r.Read(buf[off:off+n], it.Seg); err != nil {
			return offs, err
		}
		offs = append(offs, off)
		off += n
	}
	return offs, nil
}

// SegmentBytes is the size of the segments of items.
func SegmentBytes(items []RefItem, recBytes int) int {
	n := 0
	for _, it := range items {
		n += int(it.Edges) * recBytes
	}
	return n
}

// ApplyValLocal is the memory node's side of ValRD applied at the MN: it
// walks the ValRD mailbox of a chunk held in its own pool, folds each pair
// whose destination lies in [lo, hi) into the destination's inbox word
// (inboxOff is the offset of vertex lo's word; the words are consecutive)
// in local memory, and empties the mailbox. It must run between the
// barrier that ends the sends and the one before the owner reads the
// inbox. It returns the pairs applied and those it refused as outside the
// chunk (a corrupt mailbox).
func (mb *Mailboxes) ApplyValLocal(pool []byte, k int, lo, hi uint32, inboxOff uint64, op reduce.Op) (uint64, error) {
	off := mb.Val[k].Offset()
	bb := mb.ValBlockBytes()
	used := min(binary.LittleEndian.Uint64(pool[off:]), mb.ValCap) / bb * bb
	blocks := pool[off+header : off+header+used]
	var applied uint64
	var dst []uint32
	var val []uint64
	for p := uint64(0); p < used; p += bb {
		d, v, err := mb.ValBlockPairs(blocks[p:p+bb], lo, hi, dst, val)
		if err != nil {
			return applied, err
		}
		for i, x := range d {
			w := pool[inboxOff+8*uint64(x-lo):]
			binary.LittleEndian.PutUint64(w, op.Combine(binary.LittleEndian.Uint64(w), v[i]))
		}
		applied += uint64(len(d))
		dst, val = d[:0], v[:0]
	}
	clear(pool[off : off+header])
	return applied, nil
}

// ReadValPairs reads the pairs of the first used bytes of chunk k's ValRD
// mailbox without reading the blocks whole: their counts in one round trip
// on r, then the destinations and candidates they hold in one more. It is
// for a mailbox that holds few pairs in large blocks (a sparse iteration's
// segments sent by value); a dense drain reads whole blocks
// (ValBlockPairs). Every destination must lie in [lo, hi). The pairs are
// appended to dst and val; buf is scratch, returned grown.
func (mb *Mailboxes) ReadValPairs(r Reader, k int, used uint64, lo, hi uint32, buf []byte, dst []uint32, val []uint64) ([]byte, []uint32, []uint64, error) {
	bb := mb.ValBlockBytes()
	nb := min(used, mb.ValCap) / bb
	if nb == 0 {
		return buf, dst, val, nil
	}
	box := mb.Val[k]
	buf = grow(buf, int(8*nb))
	for i := range nb {
		if err := r.Read(buf[8*i:8*i+8], Records(box, i*bb)); err != nil {
			return buf, dst, val, err
		}
	}
	if err := r.Flush(); err != nil {
		return buf, dst, val, err
	}
	// The counts stay at the front of buf; each block's destinations and
	// candidates follow, packed.
	total := uint64(0)
	for i := range nb {
		n, err := mb.blockCount(buf[8*i:])
		if err != nil {
			return buf, dst, val, err
		}
		total += n
	}
	buf = slices.Grow(buf[:8*nb], int(ValRec*total))[:8*nb+ValRec*total]
	off := 8 * nb
	for i := range nb {
		n := binary.LittleEndian.Uint64(buf[8*i:])
		if n == 0 {
			continue
		}
		d, v := mb.valOffsets(i*bb, 0)
		if err := r.Read(buf[off:off+4*n], Records(box, d)); err != nil {
			return buf, dst, val, err
		}
		if err := r.Read(buf[off+4*n:off+ValRec*n], Records(box, v)); err != nil {
			return buf, dst, val, err
		}
		off += ValRec * n
	}
	if err := r.Flush(); err != nil {
		return buf, dst, val, err
	}
	off = 8 * nb
	for i := range nb {
		n := binary.LittleEndian.Uint64(buf[8*i:])
		from := len(dst)
		for j := range n {
			dst = append(dst, binary.LittleEndian.Uint32(buf[off+4*j:]))
			val = append(val, binary.LittleEndian.Uint64(buf[off+4*n+8*j:]))
		}
		if err := checkPairDst(dst[from:], lo, hi); err != nil {
			return buf, dst, val, err
		}
		off += ValRec * n
	}
	return buf, dst, val, nil
}
