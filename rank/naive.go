package rank

import (
	"encoding/binary"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// naiveMode is the naive baseline (DESIGN.md §8): plain CSR on DM (an
// 8-byte word per vertex holding its list's address, the next word ending
// it), two dependent READs per active vertex, no merging or batching, and
// every non-local update a remote CAS with its own doorbell.
type naiveMode struct{}

func (naiveMode) String() string { return ModeNaive }
func (naiveMode) plain() bool    { return true }

// reserve and place: only the triangle operator's regions (LCC).
func (naiveMode) reserve(c StoreConfig, cm []int) uint64 {
	if c.Triangles {
		return triReserve(c, cm)
	}
	return 0
}

func (naiveMode) place(st *Store, c StoreConfig, start []uint64) error {
	if c.Triangles {
		return placeTriangles(st, c, append([]uint64(nil), start...))
	}
	return nil
}

func (naiveMode) fetcher(wk *worker) (fetcher, error)     { return &naiveFetcher{wk: wk}, nil }
func (naiveMode) pulls(*Config, algo.Spec) bool           { return false }
func (naiveMode) remote(*Config, bool) remotePath         { return viaDirect }
func (naiveMode) perOpDirect() bool                       { return true }
func (naiveMode) logDirect() bool                         { return false }
func (naiveMode) setup(*engine) error                     { return nil }
func (naiveMode) exchanges() bool                         { return false }
func (naiveMode) exchange(*engine) error                  { return nil }
func (naiveMode) refresh(*engine) error                   { return nil }
func (naiveMode) cacheBytes(*engine) uint64               { return 0 }
func (naiveMode) sources() sourceKind                     { return sourcesPerEdge }
func (naiveMode) pullSources(*engine, *worker, int) error { return nil }

// collect reads the lane's whole inbox: the baseline keeps no log.
func (naiveMode) collect(e *engine, wk *worker, lo, hi uint32) error {
	return e.collectInbox(wk, lo, hi)
}

// naiveFetcher reads, per active vertex, its two offset words, then its
// list: two dependent round trips per vertex.
type naiveFetcher struct {
	wk    *worker
	words [16]byte
	buf   []byte
	dst   []uint32
	w     []float32
	a     adj
}

func (f *naiveFetcher) fetch(t balance.Task) error { return f.lists(t, f.bounds) }

// bounds reads v's list bounds from the plain index on DM: one READ, one
// round trip.
func (f *naiveFetcher) bounds(v uint32) (start, end verbs.Addr, err error) {
	ep := f.wk.ep
	if err := ep.Read(f.words[:], f.wk.e.st.Out.EntryAddr(v)); err != nil {
		return 0, 0, err
	}
	if err := ep.Flush(); err != nil {
		return 0, 0, err
	}
	return verbs.Addr(binary.LittleEndian.Uint64(f.words[:])), verbs.Addr(binary.LittleEndian.Uint64(f.words[8:])), nil
}

// lists visits the list of every vertex of t that the iteration needs,
// its bounds from bounds (the naive and FAM-Graph fetch paths).
func (f *naiveFetcher) lists(t balance.Task, bounds func(v uint32) (start, end verbs.Addr, err error)) error {
	e := f.wk.e
	sp := e.span(t)
	for i := range sp.n {
		v := sp.at(i)
		nd := e.need(v)
		if nd == 0 {
			continue
		}
		start, end, err := bounds(v)
		if err == nil {
			err = f.list(v, nd, t, start, end)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// list reads the edges [t's piece] of v's list [start, end) with one READ
// and visits them (shared with the FAM-Graph fetch path).
func (f *naiveFetcher) list(v uint32, nd uint8, t balance.Task, start, end verbs.Addr) error {
	e := f.wk.e
	rec := uint64(e.st.Out.Codec.RecordBytes())
	if end < start || uint64(end-start)%rec != 0 || (end-start)/verbs.Addr(rec) != verbs.Addr(e.deg[v-e.lo]) {
		return errors.Errorf("rank: vertex %d's plain-CSR list [%v, %v) does not hold its %d edges (corrupt store)", v, start, end, e.deg[v-e.lo])
	}
	deg := uint32((end - start) / verbs.Addr(rec))
	from, to := uint32(0), deg
	if !t.Whole() {
		from, to = uint32(t.EdgeLo), min(deg, uint32(t.EdgeHi))
	}
	f.buf = grow(f.buf, int(uint64(to-from)*rec))
	if len(f.buf) > 0 {
		if err := f.wk.ep.Read(f.buf, start.Add(uint64(from)*rec)); err != nil {
			return err
		}
		if err := f.wk.ep.Flush(); err != nil {
			return err
		}
	}
	f.a = adj{v: v, deg: deg, from: from, to: to, need: nd, all: true}
	if e.st.Out.Weighted {
		f.dst, f.w = update.DecodeRecords(f.buf, int(rec), true, f.dst[:0], f.w[:0])
		f.a.dst, f.a.w = f.dst, f.w
	} else {
		f.a.dst, f.dst = update.Destinations(f.buf, f.dst)
	}
	if err := f.wk.visit(&f.a); err != nil {
		return err
	}
	if f.wk.direct.Pending() > 0 {
		return f.wk.direct.Flush() // the baselines send each vertex's updates at once
	}
	return nil
}
