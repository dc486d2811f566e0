package update

import (
	"encoding/binary"

	"github.com/dmg-hpc/dmg/reduce"
	"github.com/dmg-hpc/dmg/verbs"
)

// Sender is one worker's side of the collaborative update: per target
// chunk, a ValRD buffer of (destination, candidate) pairs pre-combined in
// a bounded direct-mapped table (no Go map), and a RefRD buffer of
// segments sent by reference. A Sender is made once per job and reused.
//
// ValRD pairs go into blocks of the target's mailbox: the sender reserves
// a whole block with one FAA (the only round trip it waits for, once per
// block), fills it with WRITEs that complete with the endpoint's next
// Flush, and writes the block's record count when it closes it. RefRD
// items go with one FAA and one WRITE per full buffer. What does not fit a
// mailbox is spilled to direct remote update, so nothing is lost whatever
// the mailbox size.
type Sender struct {
	ep     verbs.Endpoint
	at     verbs.Atomics
	op     reduce.Op
	mb     *Mailboxes
	direct *Direct
	cfg    SenderConfig
	stats  *Stats
	val    []valBuf
	ref    [][]byte // per target: encoded RefRD items
	prev   []uint64
	commit []uint64 // RefRD bytes reserved per target in this flush, to commit
	seg    []byte
	dst    []uint32
	w      []float32
	hdr    []byte // block headers to write, one 8-byte slot per target
	holds  bool   // something was queued since the last Flush
	enc    []byte // big-endian machines: pairs encoded for a WRITE
}

// valBuf is one target's ValRD state: a direct-mapped table that combines
// the candidates per destination (one random access per candidate, no Go
// map; its destinations and values in two arrays, so the probe touches
// 4 bytes a slot and the array it misses in is a third of the table), the
// pairs it evicted on collisions waiting to be written (destinations and
// candidates in two arrays, as the blocks hold them), and the mailbox
// block they go to.
type valBuf struct {
	tblD []uint32 // a slot's destination, emptySlot when free
	tblV []uint64 // the combination of its candidates
	mask uint32
	dst  []uint32
	val  []uint64
	blk  uint64 // offset of the current block in the mailbox's records, or noBlock
	n    uint64 // records written into it
	full bool   // a reservation failed: the mailbox is full until the iteration ends
}

const noBlock = ^uint64(0)

// emptySlot marks a free slot: no vertex has this id (csr.MaxVertices).
const emptySlot = ^uint32(0)

// SenderConfig tunes a Sender.
type SenderConfig struct {
	// Pairs is each target's combining table (a power of two from it;
	// default 4096) and Items its RefRD buffer (default 1024).
	Pairs, Items int
	// RecordBytes and Weighted describe the edge records of the layout
	// (needed to spill RefRD items).
	RecordBytes int
	Weighted    bool
	// Commit adds a RefRD flush's bytes to the mailbox's commit counter
	// once its WRITE has completed, for an owner that pulls while the
	// senders work (RefCursor.Pullable); without it the owner drains only
	// after the iteration's barrier.
	Commit bool
}

// NewSender returns a sender for a worker; direct takes the spills.
func NewSender(ep verbs.Endpoint, op reduce.Op, mb *Mailboxes, direct *Direct, cfg SenderConfig, stats *Stats) *Sender {
	if cfg.Pairs <= 0 {
		cfg.Pairs = 4096
	}
	if cfg.Items <= 0 {
		cfg.Items = 1024
	}
	c := len(mb.Val)
	s := &Sender{ep: ep, at: direct.at, op: op, mb: mb, direct: direct, cfg: cfg, stats: stats,
		val: make([]valBuf, c), ref: make([][]byte, c), prev: make([]uint64, 2*c), commit: make([]uint64, c), hdr: make([]byte, 8*c)}
	bits := tableBits(cfg.Pairs) - 1
	out := max(64, min(cfg.Pairs, 8192))
	for k := range s.val {
		b := valBuf{tblD: make([]uint32, 1<<bits), tblV: make([]uint64, 1<<bits), mask: 1<<bits - 1,
			dst: make([]uint32, 0, out), val: make([]uint64, 0, out), blk: noBlock}
		for i := range b.tblD {
			b.tblD[i] = emptySlot
		}
		s.val[k] = b
		s.ref[k] = make([]byte, 0, cfg.Items*RefRec)
	}
	return s
}

// Val queues a candidate for vertex v of chunk k by value, combined with
// the one queued for v, if any.
func (s *Sender) Val(k int, v uint32, cand uint64) error {
	return s.ValSegment(k, []uint32{v}, nil, cand, nil)
}

// ValSegment queues by value the candidates from a source with
// contribution c along its edges to dst (weights w), all in chunk k, or
// the given per-edge candidates (cands non-nil).
func (s *Sender) ValSegment(k int, dst []uint32, w []float32, c uint64, cands []uint64) error {
	s.holds = true
	b := &s.val[k]
	if s.op.IsBag() {
		return s.bagSegment(k, b, dst, w, c, cands)
	}
	tblD, tblV, mask := b.tblD, b.tblV[:len(b.tblD)], b.mask
	combined := uint64(0) // counted here, not through s per candidate
	for i, v := range dst {
		cand := s.op.EdgeCandidate(i, c, w, cands)
		j := v & mask
		switch d := tblD[j]; d {
		case v:
			tblV[j] = s.op.Combine(tblV[j], cand)
			combined++
			continue
		case emptySlot:
		default:
			b.dst, b.val = append(b.dst, d), append(b.val, tblV[j]) // evicted
		}
		tblD[j], tblV[j] = v, cand
		if len(b.dst) == cap(b.dst) {
			if err := s.sendVal(k, false); err != nil {
				s.stats.Combined += combined
				return err
			}
		}
	}
	s.stats.Combined += combined
	return nil
}

// bagSegment queues the candidates of a Multiset kernel, which nothing
// combines: every pair goes to the mailbox as it is.
func (s *Sender) bagSegment(k int, b *valBuf, dst []uint32, w []float32, c uint64, cands []uint64) error {
	for i := 0; i < len(dst); {
		m := min(len(dst)-i, cap(b.dst)-len(b.dst))
		for j, v := range dst[i : i+m] {
			b.dst, b.val = append(b.dst, v), append(b.val, s.op.EdgeCandidate(i+j, c, w, cands))
		}
		i += m
		if len(b.dst) == cap(b.dst) {
			if err := s.sendVal(k, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendVal writes target k's buffered pairs into its mailbox blocks,
// reserving a block when needed, and closes the block with close.
func (s *Sender) sendVal(k int, close bool) error {
	b := &s.val[k]
	per := s.mb.ValBlock
	box := s.mb.Val[k]
	dst, val := b.dst, b.val
	for len(dst) > 0 && !b.full {
		if b.blk == noBlock || b.n == per {
			if err := s.closeBlock(k); err != nil {
				return err
			}
			// Reserve a block: the one round trip of ValRD.
			if err := s.at.FAA64(box, s.mb.ValBlockBytes(), &s.prev[k]); err != nil {
				return err
			}
			if err := s.ep.Flush(); err != nil {
				return err
			}
			if s.prev[k]+s.mb.ValBlockBytes() > s.mb.ValCap {
				b.full = true // spill the rest
				break
			}
			b.blk, b.n = s.prev[k], 0
		}
		m := min(per-b.n, uint64(len(dst)))
		dOff, vOff := s.mb.valOffsets(b.blk, b.n)
		if err := s.write(Records(box, dOff), u32Bytes(dst[:m], &s.enc)); err != nil {
			return err
		}
		if err := s.write(Records(box, vOff), WordBytes(val[:m], &s.enc)); err != nil {
			return err
		}
		s.stats.ValRD += m
		b.n += m
		dst, val = dst[m:], val[m:]
	}
	for i, v := range dst {
		s.stats.Spills++
		if err := s.direct.Add(v, val[i]); err != nil {
			return err
		}
	}
	b.dst, b.val = b.dst[:0], b.val[:0]
	if close {
		return s.closeBlock(k)
	}
	return nil
}

// closeBlock writes the record count of target k's open block.
func (s *Sender) closeBlock(k int) error {
	b := &s.val[k]
	if b.blk == noBlock {
		return nil
	}
	h := s.hdr[8*k : 8*k+8]
	binary.LittleEndian.PutUint64(h, b.n)
	at := Records(s.mb.Val[k], b.blk)
	b.blk = noBlock
	return s.ep.Write(at, h) // Write copies h
}

// Holds reports whether anything was queued since the last Flush (a
// sparse iteration's hub segments), so that a worker that sent nothing
// need not sweep the combining tables.
func (s *Sender) Holds() bool { return s.holds }

// Ref queues a segment of it.Edges edges, all destined for chunk k, by
// reference.
func (s *Sender) Ref(k int, it RefItem) error {
	s.holds = true
	var rec [RefRec]byte
	PutRef(rec[:], it)
	s.ref[k] = append(s.ref[k], rec[:]...)
	s.stats.RefRD += uint64(it.Edges)
	if len(s.ref[k]) >= cap(s.ref[k]) {
		return s.flushRefs(false)
	}
	return nil
}

// Flush sends every buffer, closes every block and completes every write
// (at the end of the worker's work in an iteration).
func (s *Sender) Flush() error {
	s.holds = false
	for k := range s.val {
		b := &s.val[k]
		for i, d := range b.tblD {
			if d != emptySlot {
				b.dst, b.val = append(b.dst, d), append(b.val, b.tblV[i])
				b.tblD[i] = emptySlot
				if len(b.dst) == cap(b.dst) {
					if err := s.sendVal(k, false); err != nil {
						return err
					}
				}
			}
		}
		if len(b.dst) > 0 || b.blk != noBlock {
			if err := s.sendVal(k, true); err != nil {
				return err
			}
		}
	}
	for k := range s.val {
		s.val[k].full = false
	}
	if err := s.flushRefs(true); err != nil {
		return err
	}
	if s.direct.Pending() > 0 {
		if err := s.direct.Flush(); err != nil {
			return err
		}
	}
	return s.ep.Flush()
}

// flushRefs sends the full RefRD buffers (all non-empty ones when all is
// set): one doorbell batch of FAA reservations, then the WRITEs, then the
// spills.
func (s *Sender) flushRefs(all bool) error {
	c := len(s.ref)
	want := func(k int) bool { return len(s.ref[k]) > 0 && (all || len(s.ref[k]) >= cap(s.ref[k])) }
	any := false
	for k := range c {
		if !want(k) {
			continue
		}
		any = true
		if err := s.at.FAA64(s.mb.Ref[k], uint64(len(s.ref[k])), &s.prev[c+k]); err != nil {
			return err
		}
	}
	if !any {
		return nil
	}
	if err := s.ep.Flush(); err != nil {
		return err
	}
	var spill []byte
	committing := false
	for k := range c {
		if !want(k) {
			continue
		}
		prev, b := s.prev[c+k], s.ref[k]
		fit := uint64(0)
		if prev < s.mb.RefCap {
			fit = min(uint64(len(b)), (s.mb.RefCap-prev)/RefRec*RefRec)
		}
		if err := s.write(Records(s.mb.Ref[k], prev), b[:fit]); err != nil {
			return err
		}
		s.stats.RefItems += fit / RefRec
		spill = append(spill, b[fit:]...)
		if s.cfg.Commit {
			s.commit[k] = uint64(len(b)) // every reserved byte, spilled ones too
			committing = true
		}
		s.ref[k] = b[:0]
	}
	if committing {
		if err := s.commitRefs(); err != nil {
			return err
		}
	}
	if len(spill) > 0 {
		if err := s.spillRef(spill); err != nil {
			return err
		}
	}
	return nil
}

// commitRefs completes the RefRD WRITEs, then adds each flushed buffer's
// reserved bytes to its mailbox's commit counter: the owner's puller reads
// up to the tail only once every reservation is committed.
func (s *Sender) commitRefs() error {
	if err := s.ep.Flush(); err != nil {
		return err
	}
	for k, n := range s.commit {
		if n == 0 {
			continue
		}
		s.commit[k] = 0
		if err := s.at.FAA64(s.mb.Ref[k].Add(commitOff), n, nil); err != nil {
			return err
		}
	}
	return s.ep.Flush()
}

// spillRef fetches the segments of RefRD items that did not fit a mailbox
// and applies their edges by direct remote update.
func (s *Sender) spillRef(recs []byte) error {
	for off := 0; off+RefRec <= len(recs); off += RefRec {
		it := GetRef(recs[off:])
		n := int(it.Edges) * s.cfg.RecordBytes
		s.seg = grow(s.seg, n)
		if err := s.ep.Read(s.seg, it.Seg); err != nil {
			return err
		}
		if err := s.ep.Flush(); err != nil {
			return err
		}
		s.stats.RefRD -= uint64(it.Edges)
		s.stats.Spills += uint64(it.Edges)
		s.dst, s.w = DecodeRecords(s.seg, s.cfg.RecordBytes, s.cfg.Weighted, s.dst[:0], s.w[:0])
		if err := s.direct.AddSegment(s.dst, s.w, it.Val, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sender) write(a verbs.Addr, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	s.stats.Flushes++
	s.stats.RDBytes += uint64(len(b))
	// The buffer is reused at once: Write copies it (verbs.Endpoint contract).
	return s.ep.Write(a, b)
}
