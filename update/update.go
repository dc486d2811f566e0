package update

import (
	"encoding/binary"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/pkg/errors"
)

// Record sizes in the mailboxes.
const (
	// ValRec is a ValRD pair: uint32 destination, uint64 value.
	ValRec = 12
	// RefRec is a RefRD item: uint64 segment address, uint32 edge count,
	// uint32 source degree, uint64 source value.
	RefRec = 24
	// header is what precedes each mailbox's records: the 8-byte tail
	// counter (bytes reserved by senders' FAAs) and the 8-byte commit
	// counter (bytes whose WRITE has completed; RefRD senders add to it
	// after their WRITE, so the owner's puller can read records while the
	// iteration runs).
	header = 16
	// commitOff is the commit counter's offset in the header.
	commitOff = 8
)

// Stats counts update candidates by the path they took, and the traffic
// of the redistribution.
type Stats struct {
	Local      uint64 `json:"local"`       // applied to the own chunk's cache
	Direct     uint64 `json:"direct"`      // remote CAS on the destination's inbox word
	ValRD      uint64 `json:"valrd"`       // pairs sent by value (after pre-combining)
	RefRD      uint64 `json:"refrd"`       // edges sent by reference (segments not fetched)
	RefItems   uint64 `json:"refrd_items"` // RefRD items (segments)
	RDBytes    uint64 `json:"rd_bytes"`    // bytes written to mailboxes
	Flushes    uint64 `json:"mailbox_flushes"`
	Spills     uint64 `json:"spills"`       // records that did not fit a mailbox and went direct
	MNApplied  uint64 `json:"mn_applied"`   // ValRD pairs applied by memory nodes
	RefPulled  uint64 `json:"refrd_pulled"` // RefRD edges applied by the owner's puller while the push ran
	Combined   uint64 `json:"combined"`     // candidates merged into an earlier one before sending
	Candidates uint64 `json:"candidates"`   // every candidate produced by an edge
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Local += o.Local
	s.Direct += o.Direct
	s.ValRD += o.ValRD
	s.RefRD += o.RefRD
	s.RefItems += o.RefItems
	s.RDBytes += o.RDBytes
	s.Flushes += o.Flushes
	s.Spills += o.Spills
	s.MNApplied += o.MNApplied
	s.RefPulled += o.RefPulled
	s.Combined += o.Combined
	s.Candidates += o.Candidates
}

// Int64s / FromInt64s carry Stats through an all-reduce.
func (s Stats) Int64s() []int64 {
	return []int64{int64(s.Local), int64(s.Direct), int64(s.ValRD), int64(s.RefRD), int64(s.RefItems), int64(s.RDBytes),
		int64(s.Flushes), int64(s.Spills), int64(s.MNApplied), int64(s.RefPulled), int64(s.Combined), int64(s.Candidates)}
}

// StatsFromInt64s is the inverse of Int64s.
func StatsFromInt64s(v []int64) Stats {
	return Stats{uint64(v[0]), uint64(v[1]), uint64(v[2]), uint64(v[3]), uint64(v[4]), uint64(v[5]),
		uint64(v[6]), uint64(v[7]), uint64(v[8]), uint64(v[9]), uint64(v[10]), uint64(v[11])}
}

// Sub is s − o.
func (s Stats) Sub(o Stats) Stats {
	a, b := s.Int64s(), o.Int64s()
	for i := range a {
		a[i] -= b[i]
	}
	return StatsFromInt64s(a)
}

// Mailboxes are the bounded regions on the MNs that receive chunk k's
// redistributed updates: one ValRD and one RefRD mailbox per chunk, on the
// MN that holds the chunk's attributes, after the graph (the layout's
// Reserve). Each is an 8-byte tail counter followed by the records.
type Mailboxes struct {
	ValCap, RefCap uint64 // capacity in bytes (multiples of the record sizes)
	Val, Ref       []verbs.Addr
}

// Reserve is the space the mailboxes of C chunks over M MNs need on each MN
// (chunk k lives on MN k·M/C, as in csr.Layout).
func Reserve(c, m int, valCap, refCap uint64) uint64 {
	perMN := make([]uint64, m)
	for k := 0; k < c; k++ {
		perMN[k*m/c]++
	}
	var mx uint64
	for _, n := range perMN {
		mx = max(mx, n)
	}
	return mx * (2*header + align8(roundCap(valCap, ValRec)) + align8(roundCap(refCap, RefRec)))
}

// align8 keeps every mailbox's tail counter 8-byte aligned for the FAA.
func align8(n uint64) uint64 { return (n + 7) &^ 7 }

func roundCap(c uint64, rec uint64) uint64 { return max(rec, c/rec*rec) }

// PlanMailboxes places the mailboxes after the graph of l (whose
// LayoutConfig.Reserve was Reserve(...) with the same capacities).
func PlanMailboxes(l *csr.Layout, valCap, refCap uint64) *Mailboxes {
	valCap, refCap = roundCap(valCap, ValRec), roundCap(refCap, RefRec)
	c := l.NumChunks()
	mb := &Mailboxes{ValCap: valCap, RefCap: refCap, Val: make([]verbs.Addr, c), Ref: make([]verbs.Addr, c)}
	used := make([]uint64, len(l.MN))
	for k := 0; k < c; k++ {
		m := l.ChunkMN[k]
		base := l.MN[m].End + used[m]
		mb.Val[k] = addr(m, base)
		mb.Ref[k] = addr(m, base+header+align8(valCap))
		used[m] += 2*header + align8(valCap) + align8(refCap)
	}
	return mb
}

func addr(m int, off uint64) verbs.Addr {
	a, _ := verbs.MakeAddr(m, off) // bounded by the layout's pool sizes
	return a
}

// Direct applies candidates to the destinations' inbox words on the MNs
// with remote CAS, in rounds: each round posts one CAS per unfinished
// destination as one doorbell batch and retries those that lost a race.
type Direct struct {
	ep    verbs.Endpoint
	at    verbs.Atomics
	p     *algo.Program
	inbox func(uint32) verbs.Addr
	pend  []pending
	// PerOp flushes after every CAS (the --no-doorbell ablation).
	PerOp bool
	stats *Stats
}

type pending struct {
	v               uint32
	cand, old, prev uint64
}

// NewDirect returns a direct updater over ep.
func NewDirect(ep verbs.Endpoint, p *algo.Program, inbox func(uint32) verbs.Addr, stats *Stats) (*Direct, error) {
	at, ok := ep.(verbs.Atomics)
	if !ok {
		return nil, errors.New("update: the endpoint has no remote atomics")
	}
	return &Direct{ep: ep, at: at, p: p, inbox: inbox, stats: stats}, nil
}

// Add queues a candidate for v (not yet sent).
func (d *Direct) Add(v uint32, cand uint64) {
	d.pend = append(d.pend, pending{v: v, cand: cand, old: d.p.Identity})
	d.stats.Direct++
}

// Pending is the number of queued candidates.
func (d *Direct) Pending() int { return len(d.pend) }

// Flush applies every queued candidate. Candidates for one destination
// must have been combined by the caller (one CAS chain per destination per
// round keeps a batch free of conflicting operations).
func (d *Direct) Flush() error {
	for len(d.pend) > 0 {
		for i := range d.pend {
			pd := &d.pend[i]
			if err := d.at.CAS64(d.inbox(pd.v), pd.old, d.p.Combine(pd.old, pd.cand), &pd.prev); err != nil {
				return err
			}
			if d.PerOp {
				if err := d.ep.Flush(); err != nil {
					return err
				}
			}
		}
		if err := d.ep.Flush(); err != nil {
			return err
		}
		keep := d.pend[:0]
		for _, pd := range d.pend {
			if pd.prev == pd.old {
				continue // applied
			}
			if d.p.Reduce == algo.Min && pd.cand >= pd.prev {
				continue // a smaller value is already there
			}
			pd.old = pd.prev
			keep = append(keep, pd)
		}
		d.pend = keep
	}
	return nil
}

// putVal / getVal encode ValRD pairs.
func putVal(b []byte, v uint32, val uint64) {
	binary.LittleEndian.PutUint32(b, v)
	binary.LittleEndian.PutUint64(b[4:], val)
}

func getVal(b []byte) (uint32, uint64) {
	return binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint64(b[4:])
}

// RefItem is a segment sent by reference.
type RefItem struct {
	Seg   verbs.Addr
	Edges uint32
	Deg   uint32
	Val   uint64
}

func putRef(b []byte, it RefItem) {
	binary.LittleEndian.PutUint64(b, uint64(it.Seg))
	binary.LittleEndian.PutUint32(b[8:], it.Edges)
	binary.LittleEndian.PutUint32(b[12:], it.Deg)
	binary.LittleEndian.PutUint64(b[16:], it.Val)
}

func getRef(b []byte) RefItem {
	return RefItem{Seg: verbs.Addr(binary.LittleEndian.Uint64(b)), Edges: binary.LittleEndian.Uint32(b[8:]),
		Deg: binary.LittleEndian.Uint32(b[12:]), Val: binary.LittleEndian.Uint64(b[16:])}
}
