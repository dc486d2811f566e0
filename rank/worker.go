package rank

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/reduce"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// worker is one goroutine of a CN: its endpoint, its fetch path, its side
// of the update coordinator and its buffers, made once per job.
type worker struct {
	e      *engine
	id     int
	ep     verbs.Endpoint
	rd     reader
	f      fetcher
	direct *update.Direct
	sender *update.Sender // the design's collaborative update
	stats  update.Stats
	// touched collects the own vertices whose accumulator this worker
	// took from the identity in a sparse push.
	touched []uint32
	cands   []uint64 // Custom edge maps: one run's candidates
	// A run for another chunk left by its bound (engine.bounded), or by
	// its reached bitmap (unreached).
	keptDst  []uint32
	keptW    []float32
	keptCand []uint64
	// The value pull of a multiset kernel: the bag of the task being read,
	// whose first vertex is tlo, and its UpdateBag's iteration.
	tbag bag
	tlo  uint32
	pitc algo.Iteration
	srcs []uint64 // the naive baseline's sources' contributions
	// Apply scratch.
	sAcc, sVal, sNext []uint64
	degs              []uint32
	pairDst           []uint32
	pairVal           []uint64
	itc               algo.Iteration
	bytes             []byte
	io                wordIO
	changed           []uint32
	busy              time.Duration
}

// reader queues READs and completes them at Flush: a verbs.ReadMerger
// (one that merges nothing for --no-merge).
type reader = *verbs.ReadMerger

// fetcher is a worker's fetch path (dmg.go, naive.go, famgraph.go): it
// reads what the iteration needs of the adjacency of a task's vertices and
// hands each vertex to worker.visit.
type fetcher interface {
	fetch(t balance.Task) error
}

// Needs of a vertex in an iteration.
const (
	needPull = 1 << iota // gather its local candidates (it is a destination)
	needPush             // send its contribution (it is active)
)

// need is what vertex v does in this iteration.
func (e *engine) need(v uint32) uint8 {
	if e.it.rpull && e.foreign(v) { // the remote pull: another chunk's vertex
		return needPull
	}
	var n uint8
	i := v - e.lo
	if e.it.bottomUp { // only the unreached work: they look for a parent
		if e.reached.has(i) || (!e.it.pullIn && e.deg[i] == 0) {
			return 0
		}
		return needPull
	}
	if e.it.sparseT { // the task is a run of the frontier list
		if e.deg[i] == 0 {
			return 0
		}
		return needPush
	}
	if e.it.pull && !(e.spec.Traversal && e.reached.has(i)) {
		n |= needPull
	}
	if e.front.active(v) && e.deg[i] > 0 && !e.it.rpull && !e.it.vpull {
		n |= needPush
	}
	if n == needPull && !e.it.pullIn && e.deg[i] == 0 {
		return 0 // symmetric: no out-edges, no in-edges
	}
	return n
}

// span is a task's vertices: a range of the chunk (dense iterations) or a
// run of the frontier list (sparse ones).
type span struct {
	lo   uint32
	n    int
	list []uint32
}

func (e *engine) span(t balance.Task) span {
	if e.it.sparseT {
		return span{list: e.front.list[t.Lo:t.Hi], n: int(t.Hi - t.Lo)}
	}
	return span{lo: t.Lo, n: int(t.Hi - t.Lo)}
}

func (s span) at(i int) uint32 {
	if s.list != nil {
		return s.list[i]
	}
	return s.lo + uint32(i)
}

// adj is one vertex's adjacency as a fetch path delivers it.
type adj struct {
	v    uint32
	deg  uint32 // the list's length
	kind dmstore.EntryKind
	addr verbs.Addr // first edge record of an out-of-place list
	// segs are the list's segment lengths per chunk; nil means cut dst at
	// the chunk bounds (in-place entries, the baselines' plain lists).
	segs []uint32
	// from, to is the part of the list this visit covers (a hub piece;
	// else 0, deg).
	from, to uint32
	// dst (and w, weighted) are the fetched edges of [from, to) in list
	// order: every edge when all is set, else only the segments fetchSeg
	// chose.
	dst  []uint32
	w    []float32
	all  bool
	need uint8
	in   bool // an in-list: its ids are sources, its segments by source chunk
}

// fetchSeg says whether the n edges of segment k of a's list are fetched,
// or sent by reference without being fetched.
func (wk *worker) fetchSeg(a *adj, k int, n uint32) (fetch, byRef bool) {
	e := wk.e
	if n == 0 {
		return false, false
	}
	if e.it.bottomUp || e.it.vpull { // the whole in-list of a pulling vertex
		return a.need&needPull != 0 && (a.in || !e.it.pullIn), false
	}
	if k == e.me {
		switch {
		case a.in:
			return a.need&needPull != 0, false
		case e.it.pull:
			return a.need&needPull != 0 && !e.it.pullIn, false
		}
		return a.need&needPush != 0, false
	}
	if a.in || a.need&needPush == 0 {
		return false, false
	}
	if e.it.refrd && n >= e.cfg.RefRDMin && a.kind == dmstore.OutOfPlace {
		return false, true
	}
	return true, false
}

// visit routes one vertex's fetched edges by segment.
func (wk *worker) visit(a *adj) error {
	if wk.e.it.vpull { // the whole piece, every chunk's sources in one gather
		if a.need&needPull == 0 {
			return nil
		}
		return wk.pull(a, a.dst, a.w)
	}
	if a.segs == nil {
		return wk.visitCut(a)
	}
	var s0 uint32
	off := uint32(0)
	for k, n := range a.segs {
		lo, hi := max(s0, a.from), min(s0+n, a.to)
		s0 += n
		if lo >= hi {
			continue
		}
		m := hi - lo
		fetch, byRef := wk.fetchSeg(a, k, m)
		if byRef {
			if err := wk.sendRef(a, k, lo, m); err != nil {
				return err
			}
			continue
		}
		if !fetch && !a.all {
			continue
		}
		seg, ws := a.dst[off:off+m], weights(a.w, off, m)
		off += m
		if fetch {
			if err := wk.handle(a, k, seg, ws); err != nil {
				return err
			}
			if wk.e.it.bottomUp && wk.e.acc[a.v-wk.e.lo] != wk.e.op.Identity() {
				return nil // a parent is found
			}
		}
	}
	return nil
}

// visitCut routes a list whose segments are not stored: sorted ids cut at
// the chunk bounds.
func (wk *worker) visitCut(a *adj) error {
	b := wk.e.st.Out.Config.Bounds
	dst := a.dst
	for i := 0; i < len(dst); {
		k := wk.e.st.ChunkOf(dst[i])
		end := b[k+1]
		j := i + 1 + sortSearch(dst[i+1:], end)
		if fetch, _ := wk.fetchSeg(a, k, uint32(j-i)); fetch {
			if err := wk.handle(a, k, dst[i:j], weights(a.w, uint32(i), uint32(j-i))); err != nil {
				return err
			}
			if wk.e.it.bottomUp && wk.e.acc[a.v-wk.e.lo] != wk.e.op.Identity() {
				return nil // a parent is found
			}
		}
		i = j
	}
	return nil
}

// sortSearch is the index of the first id ≥ x in sorted ids.
func sortSearch(ids []uint32, x uint32) int {
	i, _ := slices.BinarySearch(ids, x)
	return i
}

func weights(w []float32, off, n uint32) []float32 {
	if w == nil {
		return nil
	}
	return w[off : off+n]
}

// handle applies one run of a's edges, all in chunk k.
func (wk *worker) handle(a *adj, k int, seg []uint32, ws []float32) error {
	e := wk.e
	n := uint64(len(seg))
	if e.it.bottomUp && k != e.me {
		wk.parentIn(a, seg)
		return nil
	}
	if k == e.me {
		if a.in || e.it.pull {
			return wk.pull(a, seg, ws)
		}
		c := e.contrib[a.v-e.lo]
		wk.stats.Candidates += n
		wk.stats.Local += n
		if e.multi.bag != nil {
			return e.multi.bag.scatter(e.lo, seg, c, true)
		}
		cands := wk.candidates(a.v, c, seg, ws)
		if e.spec.Monotone {
			var dropped uint64
			wk.touched, dropped = e.op.ScatterAtomicBelow(e.acc, e.val, e.lo, seg, ws, c, cands, wk.touched)
			wk.stats.Pruned += dropped
			return nil
		}
		wk.touched = e.op.ScatterAtomic(e.acc, e.lo, seg, ws, c, cands, wk.touched)
		return nil
	}
	c := e.contrib[a.v-e.lo]
	cands := wk.candidates(a.v, c, seg, ws)
	wk.stats.Candidates += n
	if e.it.reached {
		var dropped uint64
		seg, ws, cands, dropped = wk.unreached(seg, ws, cands)
		wk.stats.Pruned += dropped
		if len(seg) == 0 {
			return nil
		}
	}
	if e.vpl.bounded {
		var dropped uint64
		wk.keptDst, wk.keptCand, dropped = e.op.KeepBelow(e.vpl.far, seg, ws, c, cands, wk.keptDst[:0], wk.keptCand[:0])
		wk.stats.Pruned += dropped
		if len(wk.keptDst) == 0 {
			return nil
		}
		seg, ws, cands = wk.keptDst, nil, wk.keptCand
	}
	switch e.it.remote {
	case viaMailboxes:
		if e.it.valrd {
			return wk.sender.ValSegment(k, seg, ws, c, cands)
		}
	case viaDirect:
		if e.it.sparseVal && uint32(len(seg)) >= e.cfg.SparseValRDMin {
			return wk.sender.ValSegment(k, seg, ws, c, cands)
		}
	case viaLocalCopy:
		wk.stats.Local += n
		if e.spec.Monotone {
			_, dropped := e.op.ScatterAtomicBelow(e.fam.acc, e.fam.val, 0, seg, ws, c, cands, nil)
			wk.stats.Pruned += dropped
			return nil
		}
		e.op.ScatterAtomic(e.fam.acc, 0, seg, ws, c, cands, nil)
		return nil
	}
	return wk.direct.AddSegment(seg, ws, c, cands)
}

// unreached keeps, of a run for another chunk, the destinations its
// reached bitmap (e.bu.remote) does not hold, with their weights and
// given candidates: a traversal's reached vertex takes no candidate. It
// returns them and how many it dropped.
func (wk *worker) unreached(seg []uint32, ws []float32, cands []uint64) ([]uint32, []float32, []uint64, uint64) {
	r := wk.e.bu.remote
	dst, w, c := wk.keptDst[:0], wk.keptW[:0], wk.keptCand[:0]
	for i, v := range seg {
		if r.has(v) {
			continue
		}
		dst = append(dst, v)
		if ws != nil {
			w = append(w, ws[i])
		}
		if cands != nil {
			c = append(c, cands[i])
		}
	}
	wk.keptDst, wk.keptW, wk.keptCand = dst, w, c
	dropped := uint64(len(seg) - len(dst))
	if ws == nil {
		w = nil
	}
	if cands == nil {
		c = nil
	}
	return dst, w, c, dropped
}

// candidates computes a run's candidates with the kernel's Edger (Custom
// edge maps); nil otherwise, the loops then apply the edge map.
func (wk *worker) candidates(src uint32, c uint64, seg []uint32, ws []float32) []uint64 {
	e := wk.e
	if e.edgr == nil {
		return nil
	}
	wk.cands = grow(wk.cands, len(seg))
	e.edgr.Edges(src, c, seg, ws, wk.cands)
	return wk.cands
}

// pull gathers the candidates of a's local in-neighbours (of all its
// in-neighbours in a value pull) into its accumulator. The vertex belongs
// to this task alone, so the store is plain, unless a hub's pieces or the
// RefRD puller share it.
func (wk *worker) pull(a *adj, src []uint32, ws []float32) error {
	e := wk.e
	acc, i := e.acc, a.v-e.lo
	contrib, base := e.contrib, e.lo
	if e.it.vpull {
		contrib, base = e.vpl.far, 0
	}
	if e.it.rpull && e.foreign(a.v) { // the remote pull: into the partials
		acc, i = e.rp.part, a.v-e.rp.partLo
	}
	wk.stats.Candidates += uint64(len(src))
	wk.stats.Local += uint64(len(src))
	wk.stats.Pulled += uint64(len(src))
	if e.multi.bag != nil {
		return e.multi.bag.gather(i, e.contrib, e.lo, src, a.from > 0 || a.to < a.deg)
	}
	if e.multi.upd != nil { // the value pull: the task's bag, whole vertices
		if e.vpl.far == nil { // the naive baseline: a READ per neighbour
			vals, err := wk.readSources(src)
			if err != nil {
				return err
			}
			return wk.tbag.put(a.v-wk.tlo, vals)
		}
		return wk.tbag.gather(a.v-wk.tlo, e.vpl.far, 0, src, false)
	}
	var active []uint64 // every source, or the own frontier's bitmap
	if e.it.skipIdle && e.front.dense && !e.it.vpull {
		active = e.front.bits
	}
	if e.it.relax {
		// Gauss–Seidel: a whole vertex's lower value is read by the pulls
		// that follow, this worker's and the others' (atomic loads), in
		// the words they read (the value pull's, or the chunk's
		// contributions, which are the values of a Relax kernel); a
		// hub's pieces, and a vertex the RefRD puller may fold into,
		// only read. Idle sources are read too: their contributions
		// are their values or the identity, which change nothing.
		// A vertex's labels gather from their 4-byte copy where the
		// value pull keeps one (valuePulls.ids).
		piece := a.from > 0 || a.to < a.deg || e.pull != nil
		r := e.op.Identity() // a piece's accumulator is shared: not read
		if !piece {
			r = acc[i]
		}
		ids := e.vpl.ids
		if !e.it.vpull {
			ids = nil
		}
		if ids != nil {
			r = reduce.WidenID(reduce.MinIDsRelaxed(reduce.NarrowID(r), ids, src))
		} else {
			r = e.op.GatherRelaxed(r, contrib, base, src, ws)
		}
		if piece {
			if r != e.op.Identity() {
				e.op.FoldAtomic(&acc[i], r)
			}
			return nil
		}
		acc[i] = r
		if e.op.Better(r, e.val[i]) {
			atomic.StoreUint64(&contrib[a.v-base], r)
			if ids != nil {
				atomic.StoreUint32(&ids[a.v], reduce.NarrowID(r))
			}
		}
		return nil
	}
	if a.from > 0 || a.to < a.deg || e.pull != nil {
		r := e.op.Gather(e.op.Identity(), contrib, active, base, src, ws, e.spec.Traversal)
		if r != e.op.Identity() {
			e.op.FoldAtomic(&acc[i], r)
		}
		return nil
	}
	acc[i] = e.op.Gather(acc[i], contrib, active, base, src, ws, e.spec.Traversal)
	return nil
}

// parentIn is the bottom-up step over in-neighbours in another chunk: the
// first one in its chunk's frontier gives the traversal's candidate.
func (wk *worker) parentIn(a *adj, src []uint32) {
	e := wk.e
	for i, u := range src {
		if e.bu.remote.has(u) {
			wk.stats.Candidates += uint64(i + 1)
			wk.stats.Pulled += uint64(i + 1)
			e.op.FoldAtomic(&e.acc[a.v-e.lo], e.bu.trav)
			return
		}
	}
	wk.stats.Candidates += uint64(len(src))
	wk.stats.Pulled += uint64(len(src))
}

// parentOf is the bottom-up step for unreached vertex v over its whole
// in-list src (sorted): the first in-neighbour in a frontier, the own
// chunk's (its contribution) or another's (as read: bu.remote, the
// traversal's candidate), gives v its candidate.
func (wk *worker) parentOf(v uint32, src []uint32) {
	e := wk.e
	i := v - e.lo
	var local uint64 // the in-neighbours looked at in the own chunk
	n := len(src)
	for j, u := range src {
		if u-e.lo < e.hi-e.lo {
			local++
			if e.front.bits.has(u - e.lo) {
				e.acc[i] = e.op.Combine(e.acc[i], e.contrib[u-e.lo])
				n = j + 1
				break
			}
		} else if e.bu.remote.has(u) {
			e.acc[i] = e.op.Combine(e.acc[i], e.bu.trav)
			n = j + 1
			break
		}
	}
	wk.stats.Candidates += uint64(n)
	wk.stats.Pulled += uint64(n)
	wk.stats.Local += local
}

// sendRef sends the m edges of segment k from list position pos by
// reference.
func (wk *worker) sendRef(a *adj, k int, pos, m uint32) error {
	e := wk.e
	rec := uint64(e.st.Out.Codec.RecordBytes())
	return wk.sender.Ref(k, update.RefItem{Seg: a.addr.Add(uint64(pos) * rec), Edges: m, Src: a.v, Val: e.contrib[a.v-e.lo]})
}

// push is the push phase: every worker takes tasks until none are left,
// then sends what it still holds.
func (e *engine) push() error {
	if e.it.bottomUp || e.it.reached {
		if err := e.readFrontiers(); err != nil {
			return err
		}
	}
	if e.it.remote == viaMailboxes && e.it.refrd && e.pullEP != nil && e.multi.bag == nil {
		var err error
		if e.pull, err = e.startPuller(); err != nil {
			return err
		}
	}
	err := e.gang.run(e.pushFn)
	b := e.stats.busyBuf[:0]
	for _, wk := range e.wks {
		b = append(b, wk.busy.Seconds())
	}
	e.stats.busyBuf = b
	st := e.queue.Stats()
	var steals uint64
	for _, s := range st.Steals {
		steals += uint64(s)
	}
	e.stats.busy(b, steals)
	if err != nil && e.pull != nil {
		_ = e.pull.stop() // the job ends; the first error is the one to report
		e.pull = nil
	}
	return err
}

// pushWorker is one worker's push.
func (e *engine) pushWorker(w int) error {
	wk := e.wks[w]
	wk.touched = wk.touched[:0]
	wk.busy = 0
	if e.it.vpull || e.it.fresh {
		t0 := time.Now()
		err := e.mode.pullSources(e, wk, w)
		if err == nil {
			err = e.gang.barrier()
		}
		wk.busy += time.Since(t0)
		if err != nil {
			return err
		}
	}
	for {
		t, ok := e.queue.Next(w)
		if !ok {
			break
		}
		t0 := time.Now()
		var err error
		if e.multi.upd != nil && e.it.vpull {
			err = wk.bagTask(t)
		} else {
			err = wk.f.fetch(t)
		}
		wk.busy += time.Since(t0)
		if err != nil {
			return err
		}
		if !e.it.sparseT {
			wk.touched = wk.touched[:0] // a dense apply visits every vertex anyway
		}
	}
	t0 := time.Now()
	defer func() { wk.busy += time.Since(t0) }()
	if e.it.rpull {
		return e.pullRemote(w)
	}
	if wk.sender != nil && (e.it.remote == viaMailboxes || wk.sender.Holds()) {
		if err := wk.sender.Flush(); err != nil {
			return err
		}
	}
	if wk.direct.Pending() > 0 {
		return wk.direct.Flush()
	}
	return nil
}
