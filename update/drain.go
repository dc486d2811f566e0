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
	var b [8]byte
	if err := ep.Read(b[:], box); err != nil {
		return 0, err
	}
	if err := ep.Flush(); err != nil {
		return 0, err
	}
	return min(binary.LittleEndian.Uint64(b[:]), capBytes), nil
}

// reset empties a mailbox (after the barrier that ends an iteration's
// sends, before the barrier that starts the next).
func reset(ep verbs.Endpoint, box verbs.Addr) error {
	var zero [8]byte
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

// DrainRef reads chunk k's RefRD mailbox, fetches the referenced segments
// (merged, doorbell-batched READs of up to maxRead bytes at a time) and
// calls fn for every edge with its source's value and degree; then it
// empties the mailbox. It returns the number of items and edges.
func (mb *Mailboxes) DrainRef(ep verbs.Endpoint, merger Reader, k int, recBytes int, weighted bool,
	fn func(it RefItem, dst uint32, w float64)) (uint64, uint64, error) {
	used, err := readTail(ep, mb.Ref[k], mb.RefCap)
	if err != nil || used == 0 {
		return 0, 0, err
	}
	b := make([]byte, used)
	if err := verbs.ReadBulk(ep, b, mb.Ref[k].Add(header)); err != nil {
		return 0, 0, err
	}
	items := make([]RefItem, 0, used/RefRec)
	for off := 0; off+RefRec <= len(b); off += RefRec {
		items = append(items, getRef(b[off:]))
	}
	var edges uint64
	var seg []byte
	for lo := 0; lo < len(items); {
		// A group of items whose segments total at most maxRead bytes.
		hi, total := lo, 0
		for hi < len(items) && (hi == lo || total+int(items[hi].Edges)*recBytes <= maxRead) {
			total += int(items[hi].Edges) * recBytes
			hi++
		}
		if cap(seg) < total {
			seg = make([]byte, total)
		}
		seg = seg[:total]
		off := 0
		for _, it := range items[lo:hi] {
			n := int(it.Edges) * recBytes
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
			n := int(it.Edges) * recBytes
			forRecords(seg[off:off+n], recBytes, weighted, func(dst uint32, w float64) { fn(it, dst, w) })
			off += n
			edges += uint64(it.Edges)
		}
		lo = hi
	}
	return uint64(len(items)), edges, reset(ep, mb.Ref[k])
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
