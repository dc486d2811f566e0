package update

import (
	"encoding/binary"

	"github.com/dmg-hpc/dmg/verbs"
)

// Reader queues READs and completes them at Flush (a verbs.ReadMerger, or
// the endpoint itself).
type Reader interface {
	Read(dst []byte, src verbs.Addr) error
	Flush() error
}

// maxRead bounds one READ of a drain.
const maxRead = 4 << 20

// readTail returns how many bytes of a mailbox hold records (the tail
// counter grows past the capacity when senders spilled).
func readTail(ep verbs.Endpoint, box verbs.Addr, capBytes uint64) (uint64, error) {
	t, err := readWord(ep, box)
	return min(t, capBytes), err
}

// reset empties a mailbox (after the barrier that ends an iteration's
// sends, before the barrier that starts the next).
func reset(ep verbs.Endpoint, box verbs.Addr) error {
	var zero [header]byte
	if err := ep.Write(box, zero[:]); err != nil {
		return err
	}
	return ep.Flush()
}

// DrainVal reads chunk k's ValRD mailbox, calls fn for every pair and
// empties the mailbox. It returns the number of pairs.
func (mb *Mailboxes) DrainVal(ep verbs.Endpoint, k int, fn func(v uint32, val uint64)) (uint64, error) {
	used, err := readTail(ep, mb.Val[k], mb.ValCap)
	if err != nil || used == 0 {
		return 0, err
	}
	b := make([]byte, used)
	if err := verbs.ReadBulk(ep, b, mb.Val[k].Add(header)); err != nil {
		return 0, err
	}
	for off := 0; off+ValRec <= len(b); off += ValRec {
		fn(getVal(b[off:]))
	}
	return used / ValRec, reset(ep, mb.Val[k])
}

// readWord reads one 8-byte counter of a mailbox header.
func readWord(ep verbs.Endpoint, a verbs.Addr) (uint64, error) {
	var b [8]byte
	if err := ep.Read(b[:], a); err != nil {
		return 0, err
	}
	if err := ep.Flush(); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// RefApply is called for every edge of a RefRD segment, with the item that
// referenced it.
type RefApply func(it RefItem, dst uint32, w float64)

// RefCursor walks chunk k's RefRD mailbox for its owner: Pull while the
// senders are still at work, Drain once after the barrier that ends their
// sends. It remembers how far it has read, so every record is applied
// exactly once.
type RefCursor struct {
	mb       *Mailboxes
	k        int
	recBytes int
	weighted bool
	done     uint64 // bytes of records applied so far
}

// RefCursor starts at the beginning of chunk k's RefRD mailbox; recBytes
// and weighted describe the layout's edge records.
func (mb *Mailboxes) RefCursor(k, recBytes int, weighted bool) *RefCursor {
	return &RefCursor{mb: mb, k: k, recBytes: recBytes, weighted: weighted}
}

// Pull applies the records written since the last call, if there are at
// least minItems of them (fewer would make small READs) and the mailbox is
// quiet: it reads the commit counter, then the tail, and only when the
// two are equal is every reserved byte written (the commit never passes
// the tail, and both only grow). It returns the items and edges applied
// (zero when nothing new was complete).
func (c *RefCursor) Pull(ep verbs.Endpoint, merger Reader, minItems int, fn RefApply) (uint64, uint64, error) {
	box := c.mb.Ref[c.k]
	committed, err := readWord(ep, box.Add(commitOff))
	if err != nil {
		return 0, 0, err
	}
	if min(committed, c.mb.RefCap) < c.done+uint64(minItems)*RefRec {
		return 0, 0, nil // not worth a look at the tail yet
	}
	tail, err := readWord(ep, box)
	if err != nil || tail != committed {
		return 0, 0, err
	}
	return c.apply(ep, merger, min(tail, c.mb.RefCap), fn)
}

// Drain applies every record not applied yet and empties the mailbox. It
// must run after the barrier that ends the iteration's sends.
func (c *RefCursor) Drain(ep verbs.Endpoint, merger Reader, fn RefApply) (uint64, uint64, error) {
	used, err := readTail(ep, c.mb.Ref[c.k], c.mb.RefCap)
	if err != nil {
		return 0, 0, err
	}
	items, edges, err := c.apply(ep, merger, used, fn)
	if err != nil {
		return 0, 0, err
	}
	c.done = 0
	return items, edges, reset(ep, c.mb.Ref[c.k])
}

// apply reads the records in [c.done, upto), fetches the referenced
// segments (merged, doorbell-batched READs of up to maxRead bytes at a
// time) and calls fn for every edge with its source's value and degree.
func (c *RefCursor) apply(ep verbs.Endpoint, merger Reader, upto uint64, fn RefApply) (uint64, uint64, error) {
	if upto <= c.done {
		return 0, 0, nil
	}
	b := make([]byte, upto-c.done)
	if err := verbs.ReadBulk(ep, b, c.mb.Ref[c.k].Add(header+c.done)); err != nil {
		return 0, 0, err
	}
	c.done = upto
	items := make([]RefItem, 0, len(b)/RefRec)
	for off := 0; off+RefRec <= len(b); off += RefRec {
		items = append(items, getRef(b[off:]))
	}
	var edges uint64
	var seg []byte
	for lo := 0; lo < len(items); {
		// A group of items whose segments total at most maxRead bytes.
		hi, total := lo, 0
		for hi < len(items) && (hi == lo || total+int(items[hi].Edges)*c.recBytes <= maxRead) {
			total += int(items[hi].Edges) * c.recBytes
			hi++
		}
		if cap(seg) < total {
			seg = make([]byte, total)
		}
		seg = seg[:total]
		off := 0
		for _, it := range items[lo:hi] {
			n := int(it.Edges) * c.recBytes
			if err := merger.Read(seg[off:off+n], it.Seg); err != nil {
				return 0, 0, err
			}
			off += n
		}
		if err := merger.Flush(); err != nil {
			return 0, 0, err
		}
		off = 0
		for _, it := range items[lo:hi] {
			n := int(it.Edges) * c.recBytes
			forRecords(seg[off:off+n], c.recBytes, c.weighted, func(dst uint32, w float64) { fn(it, dst, w) })
			off += n
			edges += uint64(it.Edges)
		}
		lo = hi
	}
	return uint64(len(items)), edges, nil
}

// ApplyValLocal is the memory node's side of ValRD applied at the MN: it
// walks the ValRD mailbox of a chunk held in its own pool and folds each
// pair into the destination's inbox word with combine, in local memory.
// It must run between the barrier that ends the sends and the one before
// the owner reads the inbox. It returns the number of pairs.
func (mb *Mailboxes) ApplyValLocal(pool []byte, k int, inboxOff func(v uint32) uint64, combine func(a, b uint64) uint64) uint64 {
	off := mb.Val[k].Offset()
	used := min(binary.LittleEndian.Uint64(pool[off:]), mb.ValCap)
	recs := pool[off+header : off+header+used]
	for p := 0; p+ValRec <= len(recs); p += ValRec {
		v, val := getVal(recs[p:])
		w := pool[inboxOff(v):]
		binary.LittleEndian.PutUint64(w, combine(binary.LittleEndian.Uint64(w), val))
	}
	binary.LittleEndian.PutUint64(pool[off:], 0)
	return used / ValRec
}
