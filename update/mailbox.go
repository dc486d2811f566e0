package update

import (
	"encoding/binary"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// Record sizes.
const (
	// ValRec is a ValRD pair: uint32 destination, uint64 value (the
	// candidate, already mapped by the edge).
	ValRec = 12
	// RefRec is a RefRD item: uint64 segment address, uint32 edge count,
	// uint32 source vertex, uint64 source contribution.
	RefRec = 24
	// LogRec is a touched-log entry: the uint32 id of a vertex whose inbox
	// word a direct update took from the identity.
	LogRec = 4
	// header precedes each mailbox's and log's records: the 8-byte tail
	// counter (bytes reserved by senders' FAAs) and the 8-byte commit
	// counter (bytes whose WRITE has completed; RefRD senders add to it
	// after their WRITE when the owner pulls while they send).
	header = 16
	// commitOff is the commit counter's offset in the header.
	commitOff = 8
	// blockHeader precedes each ValRD block's records: their count.
	blockHeader = 8
)

// Mailboxes are the regions on the MNs that receive chunk k's updates from
// other compute nodes, on the MN that holds chunk k's attributes: a ValRD
// and a RefRD mailbox (collaborative update) and a touched log (direct
// update). Each is a header and bounded records; senders reserve room with
// one FAA on the tail and write with one WRITE. Records past a mailbox's
// capacity are spilled to direct update; log entries past the log's
// capacity set its tail past the capacity, which tells the owner to read
// its whole inbox instead.
//
// A ValRD mailbox is a sequence of blocks of ValBlock pairs: an 8-byte
// count of the pairs the block holds, ValBlock uint32 destinations, then
// ValBlock uint64 candidates (so both arrays are aligned). A sender
// reserves a whole block at a time and writes its count when it closes it.
type Mailboxes struct {
	ValCap, RefCap uint64 // bytes of records per mailbox (ValRD: whole blocks; RefRD: whole items)
	ValBlock       uint64 // pairs per ValRD block
	Val, Ref, Log  []verbs.Addr
	LogCap         []uint64 // bytes of records of chunk k's log: one entry per vertex
}

// ValBlockBytes is the size of a ValRD block.
func (mb *Mailboxes) ValBlockBytes() uint64 { return blockHeader + ValRec*mb.ValBlock }

// ValBlocks is the number of pairs per ValRD block for a mailbox of
// valCap bytes and the given number of senders (workers of every CN): at
// most 65,536 (768 KiB), so that a sender reserves a block rarely, and few
// enough that every sender's open block takes at most an eighth of the
// mailbox; always even, so the candidates stay 8-byte aligned.
func ValBlocks(valCap uint64, senders int) uint64 {
	b := valCap / uint64(8*max(1, senders)) / ValRec
	return max(2, min(b, 1<<16)) &^ 1
}

// valOffsets are where pair n of the block at blk (offsets in the
// mailbox's records) keeps its destination and its candidate.
func (mb *Mailboxes) valOffsets(blk, n uint64) (uint64, uint64) {
	return blk + blockHeader + 4*n, blk + blockHeader + 4*mb.ValBlock + 8*n
}

// roundBlocks is a ValRD capacity rounded down to whole blocks (at least
// one).
func roundBlocks(c, block uint64) uint64 {
	bb := blockHeader + ValRec*block
	return max(bb, c/bb*bb)
}

// roundCap is a capacity rounded down to whole records (at least one).
func roundCap(c, rec uint64) uint64 { return max(rec, c/rec*rec) }

// align8 keeps every header 8-byte aligned for the atomics.
func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// chunkBytes is the space of one chunk's regions.
func chunkBytes(vertices, valCap, refCap, block uint64) uint64 {
	return 3*header + align8(roundBlocks(valCap, block)) + align8(roundCap(refCap, RefRec)) + align8(LogRec*vertices)
}

// Reserve is the most space the regions of the chunks (bounds, chunk k on
// MN chunkMN[k]) need on one MN, for ValRD blocks of block pairs.
func Reserve(bounds []uint32, chunkMN []int, numMN int, valCap, refCap, block uint64) uint64 {
	per := make([]uint64, numMN)
	for k, m := range chunkMN {
		per[m] += chunkBytes(uint64(bounds[k+1]-bounds[k]), valCap, refCap, block)
	}
	var mx uint64
	for _, b := range per {
		mx = max(mx, b)
	}
	return mx
}

// PlanMailboxes places the regions of every chunk on its MN from start[m]
// on (the first free, 8-byte aligned offset of MN m, where Reserve's space
// begins) and returns them with the first offset after them per MN.
func PlanMailboxes(bounds []uint32, chunkMN []int, start []uint64, valCap, refCap, block uint64) (*Mailboxes, []uint64, error) {
	valCap, refCap = roundBlocks(valCap, block), roundCap(refCap, RefRec)
	c := len(chunkMN)
	mb := &Mailboxes{ValCap: valCap, RefCap: refCap, ValBlock: block, Val: make([]verbs.Addr, c), Ref: make([]verbs.Addr, c),
		Log: make([]verbs.Addr, c), LogCap: make([]uint64, c)}
	next := append([]uint64(nil), start...)
	var err error
	at := func(m int, n uint64) verbs.Addr {
		a, aerr := verbs.MakeAddr(m, next[m])
		if aerr != nil && err == nil {
			err = errors.Wrap(aerr, "update: placing the mailboxes")
		}
		next[m] = align8(next[m] + n)
		return a
	}
	for k, m := range chunkMN {
		if m < 0 || m >= len(next) {
			return nil, nil, errors.Errorf("update: chunk %d on MN %d of %d", k, m, len(next))
		}
		next[m] = align8(next[m])
		mb.Val[k] = at(m, header+valCap)
		mb.Ref[k] = at(m, header+refCap)
		mb.LogCap[k] = LogRec * uint64(bounds[k+1]-bounds[k])
		mb.Log[k] = at(m, header+mb.LogCap[k])
	}
	return mb, next, err
}

// RefItem is a segment sent by reference: Edges edge records at Seg, from
// the source vertex Src whose contribution is Val.
type RefItem struct {
	Seg   verbs.Addr
	Edges uint32
	Src   uint32
	Val   uint64
}

// PutRef encodes a RefRD item.
func PutRef(b []byte, it RefItem) {
	binary.LittleEndian.PutUint64(b, uint64(it.Seg))
	binary.LittleEndian.PutUint32(b[8:], it.Edges)
	binary.LittleEndian.PutUint32(b[12:], it.Src)
	binary.LittleEndian.PutUint64(b[16:], it.Val)
}

// GetRef decodes a RefRD item.
func GetRef(b []byte) RefItem {
	return RefItem{Seg: verbs.Addr(binary.LittleEndian.Uint64(b)), Edges: binary.LittleEndian.Uint32(b[8:]),
		Src: binary.LittleEndian.Uint32(b[12:]), Val: binary.LittleEndian.Uint64(b[16:])}
}

// DecodeRefs decodes RefRD records into items (appended to out), checking
// each against what a sender can have written: a segment of 1..maxEdges
// edge records of recBytes bytes that lies in a pool (check), from a
// source below n. A record that fails names its index: the mailbox is
// corrupt.
func DecodeRefs(recs []byte, recBytes int, maxEdges, n uint32, check verbs.RangeChecker, out []RefItem) ([]RefItem, error) {
	if len(recs)%RefRec != 0 {
		return out, errors.Errorf("update: %d bytes of RefRD records; expected a multiple of %d", len(recs), RefRec)
	}
	for i := 0; i < len(recs); i += RefRec {
		it := GetRef(recs[i:])
		if it.Edges == 0 || it.Edges > maxEdges || it.Src >= n {
			return out, errors.Errorf("update: RefRD record %d: %d edges from vertex %d; expected 1..%d edges from a vertex below %d (corrupt mailbox)", i/RefRec, it.Edges, it.Src, maxEdges, n)
		}
		if err := check.Check(it.Seg, int(it.Edges)*recBytes); err != nil {
			return out, errors.Wrapf(err, "update: RefRD record %d (corrupt mailbox)", i/RefRec)
		}
		out = append(out, it)
	}
	return out, nil
}

// ValBlockPairs returns the pairs of one ValRD block (b holds the whole
// block) after checking its count and that every destination lies in
// [lo, hi); a block that fails is a corrupt mailbox. The scratch slices
// are used where the block cannot be viewed in place.
func (mb *Mailboxes) ValBlockPairs(b []byte, lo, hi uint32, dst []uint32, val []uint64) ([]uint32, []uint64, error) {
	n, err := mb.blockCount(b)
	if err != nil {
		return nil, nil, err
	}
	d, v := Pairs(b, mb.ValBlock, n, dst, val)
	if err := checkPairDst(d, lo, hi); err != nil {
		return nil, nil, err
	}
	return d, v, nil
}

// blockCount is the pair count at the start of a ValRD block, checked
// against the block's size.
func (mb *Mailboxes) blockCount(b []byte) (uint64, error) {
	n := binary.LittleEndian.Uint64(b)
	if n > mb.ValBlock {
		return 0, errors.Errorf("update: ValRD block counts %d pairs; a block holds at most %d (corrupt mailbox)", n, mb.ValBlock)
	}
	return n, nil
}

// checkPairDst checks that every destination of a block's pairs lies in
// the owner's chunk [lo, hi).
func checkPairDst(d []uint32, lo, hi uint32) error {
	for i, x := range d {
		if x < lo || x >= hi {
			return errors.Errorf("update: ValRD pair %d of a block names vertex %d, outside the chunk [%d, %d) (corrupt mailbox)", i, x, lo, hi)
		}
	}
	return nil
}

// DecodeLog decodes touched-log entries (appended to out), each a vertex
// of [lo, hi).
func DecodeLog(recs []byte, lo, hi uint32, out []uint32) ([]uint32, error) {
	if len(recs)%LogRec != 0 {
		return out, errors.Errorf("update: %d bytes of touched-log entries; expected a multiple of %d", len(recs), LogRec)
	}
	for i := 0; i < len(recs); i += LogRec {
		v := binary.LittleEndian.Uint32(recs[i:])
		if v < lo || v >= hi {
			return out, errors.Errorf("update: touched-log entry %d names vertex %d, outside the chunk [%d, %d) (corrupt log)", i/LogRec, v, lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}

// readWord reads one 8-byte counter.
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

// Used reads how many bytes of records a mailbox or log holds: its tail,
// at most capBytes, and whether senders reserved more than that (spilled
// or overflowed).
func Used(ep verbs.Endpoint, box verbs.Addr, capBytes uint64) (used uint64, over bool, err error) {
	t, err := readWord(ep, box)
	return min(t, capBytes), t > capBytes, err
}

// Reset empties a mailbox or log (after the barrier that ends an
// iteration's sends, before the barrier that starts the next). It is
// queued on ep, not flushed.
func Reset(ep verbs.Endpoint, box verbs.Addr) error {
	return ep.Write(box, zeroHeader[:])
}

// zeroHeader is an empty header (never written: Write copies it).
var zeroHeader [header]byte

// Records is the address of a mailbox's or log's records from byte off.
func Records(box verbs.Addr, off uint64) verbs.Addr { return box.Add(header + off) }
