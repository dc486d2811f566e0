package update

import (
	"encoding/binary"
	"math"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/verbs"
)

// Sender is one worker's side of the collaborative update: per target
// chunk, a ValRD buffer of pre-combined (destination, value) pairs and a
// RefRD buffer of segments sent by reference. A full buffer is flushed
// with one FAA (reserving room in the target's mailbox) and one WRITE;
// what does not fit the mailbox is spilled to direct remote update, so
// nothing is lost whatever the mailbox size.
type Sender struct {
	ep       verbs.Endpoint
	at       verbs.Atomics
	p        *algo.Program
	mb       *Mailboxes
	direct   *Direct
	val      []map[uint32]uint64
	ref      [][]RefItem
	maxPairs int
	maxItems int
	recBytes int
	weighted bool
	stats    *Stats
	buf      []byte
	seg      []byte
	prev     []uint64
	commit   []uint64 // RefRD bytes reserved per chunk in this flush, to commit
	commitOn bool
}

// SenderConfig tunes a Sender.
type SenderConfig struct {
	// Pairs and Items bound each per-target buffer (defaults 1024 pairs,
	// 256 items).
	Pairs, Items int
	// RecordBytes and Weighted describe the edge records of the layout
	// (needed to spill RefRD items).
	RecordBytes int
	Weighted    bool
	// Commit adds a RefRD flush's bytes to the mailbox's commit counter
	// once its WRITE has completed, for an owner that pulls while the
	// senders work (RefCursor.Pull); without it the owner drains only
	// after the iteration's barrier.
	Commit bool
}

// NewSender returns a sender for a worker; direct takes the spills.
func NewSender(ep verbs.Endpoint, p *algo.Program, mb *Mailboxes, direct *Direct, cfg SenderConfig, stats *Stats) *Sender {
	if cfg.Pairs <= 0 {
		cfg.Pairs = 1024
	}
	if cfg.Items <= 0 {
		cfg.Items = 256
	}
	c := len(mb.Val)
	s := &Sender{ep: ep, at: direct.at, p: p, mb: mb, direct: direct, val: make([]map[uint32]uint64, c), ref: make([][]RefItem, c),
		maxPairs: cfg.Pairs, maxItems: cfg.Items, recBytes: cfg.RecordBytes, weighted: cfg.Weighted, stats: stats, prev: make([]uint64, 2*c), commit: make([]uint64, c), commitOn: cfg.Commit}
	for k := range s.val {
		s.val[k] = map[uint32]uint64{}
	}
	return s
}

// Val queues a candidate for vertex v of chunk k by value.
func (s *Sender) Val(k int, v uint32, cand uint64) error {
	m := s.val[k]
	if old, ok := m[v]; ok {
		m[v] = s.p.Combine(old, cand)
		s.stats.Combined++
	} else {
		m[v] = cand
	}
	if len(m) >= s.maxPairs {
		return s.flush(false)
	}
	return nil
}

// Ref queues a segment of it.Edges edges, all destined for chunk k, by
// reference.
func (s *Sender) Ref(k int, it RefItem) error {
	s.ref[k] = append(s.ref[k], it)
	s.stats.RefRD += uint64(it.Edges)
	if len(s.ref[k]) >= s.maxItems {
		return s.flush(false)
	}
	return nil
}

// Flush sends every buffer (at the end of the worker's work).
func (s *Sender) Flush() error { return s.flush(true) }

// flush sends the full buffers (all non-empty ones when all is set): one
// doorbell batch of FAA reservations, then one of WRITEs, then the spills.
func (s *Sender) flush(all bool) error {
	c := len(s.val)
	want := func(i int) bool {
		if i < c {
			return len(s.val[i]) > 0 && (all || len(s.val[i]) >= s.maxPairs)
		}
		return len(s.ref[i-c]) > 0 && (all || len(s.ref[i-c]) >= s.maxItems)
	}
	any := false
	for i := 0; i < 2*c; i++ {
		if !want(i) {
			continue
		}
		any = true
		var n uint64
		box := s.mb.Val[i%c]
		if i < c {
			n = uint64(len(s.val[i])) * ValRec
		} else {
			n = uint64(len(s.ref[i-c])) * RefRec
			box = s.mb.Ref[i-c]
			if s.commitOn {
				s.commit[i-c] = n
			}
		}
		if err := s.at.FAA64(box, n, &s.prev[i]); err != nil {
			return err
		}
	}
	if !any {
		return nil
	}
	if err := s.ep.Flush(); err != nil {
		return err
	}
	var spillRefs []RefItem
	for i := 0; i < 2*c; i++ {
		if !want(i) {
			continue
		}
		prev := s.prev[i]
		if i < c {
			k := i
			fit := uint64(0)
			if prev < s.mb.ValCap {
				fit = (s.mb.ValCap - prev) / ValRec
			}
			s.buf = s.buf[:0]
			j := uint64(0)
			for v, val := range s.val[k] {
				if j < fit {
					var rec [ValRec]byte
					putVal(rec[:], v, val)
					s.buf = append(s.buf, rec[:]...)
				} else {
					s.direct.Add(v, val)
					s.stats.Spills++
				}
				j++
				delete(s.val[k], v)
			}
			s.stats.ValRD += min(j, fit)
			if err := s.write(s.mb.Val[k].Add(header+prev), s.buf); err != nil {
				return err
			}
			continue
		}
		k := i - c
		items := s.ref[k]
		fit := 0
		if prev < s.mb.RefCap {
			fit = int(min(uint64(len(items)), (s.mb.RefCap-prev)/RefRec))
		}
		s.buf = s.buf[:0]
		for _, it := range items[:fit] {
			var rec [RefRec]byte
			putRef(rec[:], it)
			s.buf = append(s.buf, rec[:]...)
		}
		s.stats.RefItems += uint64(fit)
		spillRefs = append(spillRefs, items[fit:]...)
		s.ref[k] = s.ref[k][:0]
		if err := s.write(s.mb.Ref[k].Add(header+prev), s.buf); err != nil {
			return err
		}
	}
	if err := s.ep.Flush(); err != nil {
		return err
	}
	// The RefRD WRITEs have completed: commit the reserved bytes (spilled
	// ones too), so the owner's puller may read up to the tail once every
	// reservation is committed.
	committed := false
	for k, n := range s.commit {
		if n == 0 {
			continue
		}
		s.commit[k], committed = 0, true
		if err := s.at.FAA64(s.mb.Ref[k].Add(commitOff), n, &s.prev[c+k]); err != nil {
			return err
		}
	}
	if committed {
		if err := s.ep.Flush(); err != nil {
			return err
		}
	}
	if len(spillRefs) > 0 {
		if err := s.spillRef(spillRefs); err != nil {
			return err
		}
	}
	if s.direct.Pending() > 0 {
		return s.direct.Flush()
	}
	return nil
}

func (s *Sender) write(a verbs.Addr, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	s.stats.Flushes++
	s.stats.RDBytes += uint64(len(b))
	// The buffer is reused: Write copies it (verbs.Endpoint contract).
	return s.ep.Write(a, b)
}

// spillRef fetches segments that did not fit a RefRD mailbox and applies
// their edges by direct remote update.
func (s *Sender) spillRef(items []RefItem) error {
	for _, it := range items {
		n := int(it.Edges) * s.recBytes
		if cap(s.seg) < n {
			s.seg = make([]byte, n)
		}
		s.seg = s.seg[:n]
		if err := s.ep.Read(s.seg, it.Seg); err != nil {
			return err
		}
		if err := s.ep.Flush(); err != nil {
			return err
		}
		s.stats.RefRD -= uint64(it.Edges)
		s.stats.Spills += uint64(it.Edges)
		comb := map[uint32]uint64{}
		forRecords(s.seg, s.recBytes, s.weighted, func(dst uint32, w float64) {
			cand := s.p.Edge(it.Val, uint64(it.Deg), w)
			if old, ok := comb[dst]; ok {
				cand = s.p.Combine(old, cand)
			}
			comb[dst] = cand
		})
		for v, c := range comb {
			s.direct.Add(v, c)
		}
	}
	return nil
}

// forRecords walks packed edge records (uint32 destination, then a float32
// weight when weighted).
func forRecords(b []byte, rec int, weighted bool, fn func(dst uint32, w float64)) {
	for off := 0; off+rec <= len(b); off += rec {
		w := 1.0
		if weighted {
			w = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off+4:])))
		}
		fn(binary.LittleEndian.Uint32(b[off:]), w)
	}
}
