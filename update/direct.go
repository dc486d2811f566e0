package update

import (
	"encoding/binary"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/reduce"
	"github.com/dmg-hpc/dmg/verbs"
)

// combiner pre-combines candidates by destination in a bounded,
// direct-mapped table: slot[d & mask] holds the index of the entry of d,
// valid while it is below n and that entry's destination is d. Collisions
// keep both entries (the later one is not combined with the earlier), so
// nothing is lost; the table needs no reset between uses.
type combiner struct {
	slot []int32
	mask uint32
}

func newCombiner(bits int) combiner {
	c := combiner{slot: make([]int32, 1<<bits), mask: 1<<bits - 1}
	for i := range c.slot {
		c.slot[i] = -1
	}
	return c
}

// find returns the index the table holds for d (check it), and the slot.
func (c *combiner) find(d uint32) (int32, *int32) {
	s := &c.slot[d&c.mask]
	return *s, s
}

// tableBits is the size of a combining table for n entries: a power of
// two of at least 2n slots.
func tableBits(n int) int {
	b := 4
	for 1<<b < 2*n {
		b++
	}
	return b
}

// DirectConfig tunes a Direct.
type DirectConfig struct {
	// Pending bounds the destinations combined before an automatic Flush
	// (default 4096).
	Pending int
	// PerOp rings a doorbell and waits after every CAS (the naive baseline
	// and the --no-doorbell ablation).
	PerOp bool
	// Log writes every destination whose inbox word a CAS took from the
	// identity into its chunk's touched log (Mailboxes.Log), so the owner
	// reads only the words that changed. Without it the owner reads its
	// whole inbox.
	Log bool
	// Prune reads the destinations' current values first (through
	// Reader, merged) and sends only candidates below them: for monotone
	// kernels (algo.Spec.Monotone), where the others change nothing.
	Prune  bool
	Reader Reader
	// Gap is the Reader's merge gap in bytes (0: it does not merge). Where
	// a chunk's pending destinations lie closer together on average, Prune
	// reads the range between the lowest and the highest in one READ:
	// what merging their reads would read anyway, without sorting them.
	Gap int
}

// Direct applies candidates to the destinations' inbox words on the MNs
// with remote CAS, in rounds: each round posts one CAS per unfinished
// destination as one doorbell batch and retries those that lost a race
// (integer sums take one FAA each instead). Candidates for one destination
// are combined first.
type Direct struct {
	ep    verbs.Endpoint
	at    verbs.Atomics
	op    reduce.Op
	tg    Targets
	mb    *Mailboxes
	cfg   DirectConfig
	stats *Stats
	comb  combiner
	pend  []pending
	keep  []pending
	logs  [][]byte // per chunk: entries to append to its touched log
	prev  []uint64
	vals  []byte // Prune: the destinations' values
	spans []valSpan
	chunk []int // Prune: each pending destination's chunk
	hs    []int // Prune with a viewer: each single read's view
}

// valSpan is what Prune reads of one chunk's values: the range [lo, hi] of
// its n pending destinations, whole (at off in vals, or view h) or one by
// one.
type valSpan struct {
	lo, hi, n uint32
	whole     bool
	off, h    int
}

// viewer is a Reader whose reads can land in its own buffer, to be read
// there until its next Flush (verbs.ReadMerger: registered memory where
// the fabric has it), so Prune copies nothing.
type viewer interface {
	ReadView(src verbs.Addr, n int) (int, error)
	View(h int) []byte
}

// maxPruneSpan bounds a range Prune reads whole (16 MiB of values).
const maxPruneSpan = 1 << 21

type pending struct {
	v               uint32
	cand, old, prev uint64
}

// NewDirect returns a direct updater over ep; mb is needed with cfg.Log.
func NewDirect(ep verbs.Endpoint, op reduce.Op, tg Targets, mb *Mailboxes, cfg DirectConfig, stats *Stats) (*Direct, error) {
	at, ok := ep.(verbs.Atomics)
	if !ok {
		return nil, errors.New("update: the endpoint has no remote atomics")
	}
	if cfg.Pending <= 0 {
		cfg.Pending = 4096
	}
	if cfg.Log && mb == nil {
		return nil, errors.New("update: a logging direct updater needs the mailboxes")
	}
	if cfg.Prune && cfg.Reader == nil {
		cfg.Reader = ep
	}
	d := &Direct{ep: ep, at: at, op: op, tg: tg, mb: mb, cfg: cfg, stats: stats, comb: newCombiner(tableBits(cfg.Pending)),
		pend: make([]pending, 0, cfg.Pending), keep: make([]pending, 0, cfg.Pending)}
	if mb != nil {
		d.logs = make([][]byte, len(mb.Log))
		d.prev = make([]uint64, len(mb.Log))
	}
	return d, nil
}

// Add queues a candidate for v, combined with one queued for v; it flushes
// when the queue is full.
func (d *Direct) Add(v uint32, cand uint64) error {
	if d.op.IsBag() {
		return ErrBagOverflow
	}
	i, s := d.comb.find(v)
	if i >= 0 && int(i) < len(d.pend) && d.pend[i].v == v {
		d.pend[i].cand = d.op.Combine(d.pend[i].cand, cand)
		d.stats.Combined++
		return nil
	}
	*s = int32(len(d.pend))
	d.pend = append(d.pend, pending{v: v, cand: cand, old: d.op.Identity()})
	d.stats.Direct++
	if len(d.pend) >= d.cfg.Pending {
		return d.Flush()
	}
	return nil
}

// AddSegment queues the candidates from a source with contribution c
// along edges to dst (weights w), or the given candidates (cands non-nil).
func (d *Direct) AddSegment(dst []uint32, w []float32, c uint64, cands []uint64) error {
	for i, v := range dst {
		cand := d.op.EdgeCandidate(i, c, w, cands)
		if err := d.Add(v, cand); err != nil {
			return err
		}
	}
	return nil
}

// Pending is the number of queued destinations.
func (d *Direct) Pending() int { return len(d.pend) }

// Flush applies every queued candidate, then appends the destinations it
// took from the identity to their chunks' touched logs (with Log).
func (d *Direct) Flush() error {
	if d.cfg.Prune && len(d.pend) > 0 {
		if err := d.prune(); err != nil {
			return err
		}
	}
	faa := d.op.IsIntSum()
	for len(d.pend) > 0 {
		for i := range d.pend {
			pd := &d.pend[i]
			var err error
			if faa {
				// Integer sums: one FAA, never retried (DESIGN.md §5).
				err = d.at.FAA64(d.tg.InboxAddr(pd.v), pd.cand, &pd.prev)
			} else {
				err = d.at.CAS64(d.tg.InboxAddr(pd.v), pd.old, d.op.Combine(pd.old, pd.cand), &pd.prev)
			}
			if err != nil {
				return err
			}
			if d.cfg.PerOp {
				if err := d.ep.Flush(); err != nil {
					return err
				}
			}
		}
		if err := d.ep.Flush(); err != nil {
			return err
		}
		d.keep = d.keep[:0]
		for _, pd := range d.pend {
			if faa {
				pd.old = pd.prev // applied: the word held prev before
			}
			if pd.prev == pd.old { // applied
				if pd.old == d.op.Identity() && d.cfg.Log {
					k := d.tg.ChunkOf(pd.v)
					d.logs[k] = binary.LittleEndian.AppendUint32(d.logs[k], pd.v)
				}
				continue
			}
			if !d.op.Better(pd.cand, pd.prev) {
				continue // the word already holds something at least as good
			}
			pd.old = pd.prev
			d.keep = append(d.keep, pd)
		}
		d.pend, d.keep = d.keep, d.pend
	}
	if d.cfg.Log {
		return d.flushLogs()
	}
	return nil
}

// prune drops the queued candidates that are not below their
// destination's current value. It reads the values chunk by chunk (the
// chunk's values are one array on one MN): the whole range between its
// lowest and highest pending destination when they are dense enough
// (DirectConfig.Gap), else one read per destination.
func (d *Direct) prune() error {
	sp := d.spans[:0]
	d.chunk = d.chunk[:0]
	for _, pd := range d.pend {
		k := d.tg.ChunkOf(pd.v)
		d.chunk = append(d.chunk, k)
		for len(sp) <= k {
			sp = append(sp, valSpan{lo: ^uint32(0)})
		}
		r := &sp[k]
		r.lo, r.hi, r.n = min(r.lo, pd.v), max(r.hi, pd.v), r.n+1
	}
	d.spans = sp
	if v, ok := d.cfg.Reader.(viewer); ok {
		return d.pruneViews(v, sp)
	}
	off := 8 * len(d.pend) // one slot per destination read alone, at the start
	for k := range sp {
		if r := &sp[k]; d.readWhole(r) {
			r.off = off
			off += 8 * int(r.hi-r.lo+1)
		}
	}
	d.vals = grow(d.vals, off)
	for k := range sp {
		if r := &sp[k]; r.whole {
			if err := d.cfg.Reader.Read(d.vals[r.off:r.off+8*int(r.hi-r.lo+1)], d.tg.ValueAddr(r.lo)); err != nil {
				return err
			}
		}
	}
	for i, pd := range d.pend {
		if !sp[d.chunk[i]].whole {
			if err := d.cfg.Reader.Read(d.vals[8*i:8*i+8], d.tg.ValueAddr(pd.v)); err != nil {
				return err
			}
		}
	}
	if err := d.cfg.Reader.Flush(); err != nil {
		return err
	}
	return d.keepBetter(func(i int, pd *pending) uint64 {
		at := 8 * i
		if r := &sp[d.chunk[i]]; r.whole {
			at = r.off + 8*int(pd.v-r.lo)
		}
		return binary.LittleEndian.Uint64(d.vals[at:])
	})
}

// readWhole decides whether Prune reads span r's range whole: its pending
// destinations lie denser than the merge gap, within maxPruneSpan.
func (d *Direct) readWhole(r *valSpan) bool {
	span := uint64(r.hi-r.lo) + 1
	r.whole = r.n > 0 && span <= maxPruneSpan && 8*span <= uint64(r.n)*uint64(d.cfg.Gap)
	return r.whole
}

// pruneViews is prune through a viewer: the values are read where they
// land.
func (d *Direct) pruneViews(v viewer, sp []valSpan) error {
	for k := range sp {
		r := &sp[k]
		if !d.readWhole(r) {
			continue
		}
		var err error
		if r.h, err = v.ReadView(d.tg.ValueAddr(r.lo), 8*int(r.hi-r.lo+1)); err != nil {
			return err
		}
	}
	d.hs = d.hs[:0]
	for i, pd := range d.pend {
		h := -1
		if !sp[d.chunk[i]].whole {
			var err error
			if h, err = v.ReadView(d.tg.ValueAddr(pd.v), 8); err != nil {
				return err
			}
		}
		d.hs = append(d.hs, h)
	}
	if err := d.cfg.Reader.Flush(); err != nil {
		return err
	}
	return d.keepBetter(func(i int, pd *pending) uint64 {
		if r := &sp[d.chunk[i]]; r.whole {
			return binary.LittleEndian.Uint64(v.View(r.h)[8*int(pd.v-r.lo):])
		}
		return binary.LittleEndian.Uint64(v.View(d.hs[i]))
	})
}

// keepBetter keeps the pending candidates better than their
// destination's value (value(i, pd) for the i-th).
func (d *Direct) keepBetter(value func(i int, pd *pending) uint64) error {
	d.keep = d.keep[:0]
	for i := range d.pend {
		pd := &d.pend[i]
		if d.op.Better(pd.cand, value(i, pd)) {
			d.keep = append(d.keep, *pd)
		} else {
			d.stats.Pruned++
			d.stats.Direct--
		}
	}
	d.pend, d.keep = d.keep, d.pend
	return nil
}

// flushLogs reserves room in each touched log with one FAA (one doorbell
// batch for all chunks), then writes the entries; entries past a log's
// capacity are dropped, the tail past the capacity telling the owner to
// read its whole inbox.
func (d *Direct) flushLogs() error {
	any := false
	for k, b := range d.logs {
		if len(b) == 0 {
			continue
		}
		any = true
		if err := d.at.FAA64(d.mb.Log[k], uint64(len(b)), &d.prev[k]); err != nil {
			return err
		}
	}
	if !any {
		return nil
	}
	if err := d.ep.Flush(); err != nil {
		return err
	}
	for k, b := range d.logs {
		if len(b) == 0 {
			continue
		}
		if p := d.prev[k]; p < d.mb.LogCap[k] {
			fit := min(uint64(len(b)), d.mb.LogCap[k]-p)
			if err := d.ep.Write(Records(d.mb.Log[k], p), b[:fit]); err != nil {
				return err
			}
			d.stats.Logged += fit / LogRec
		}
		d.logs[k] = b[:0]
	}
	return d.ep.Flush()
}
