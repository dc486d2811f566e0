package rank

import (
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// setup makes a CN's cache, workers and tasks, sets the initial values and
// writes them (and identity inboxes) to DM. It runs once per job; an MN
// only readies its statistics.
func (e *engine) setup(eps []verbs.Endpoint) error {
	e.stats.perPair, e.stats.count = map[string]float64{}, map[string]int{}
	e.stats.cpuStart, _ = processUsage()
	// Every rank alike: the end's catch-up is collective.
	e.valuesBehind = e.valuesUnread()
	if !e.cn {
		return nil
	}
	for _, ep := range eps {
		if _, ok := ep.(verbs.Atomics); !ok {
			return errors.Errorf("rank: the %s fabric has no remote atomics", e.net.Provider())
		}
	}
	n := e.hi - e.lo
	e.val, e.acc = e.mem.Words(int(n)), e.mem.Words(int(n))
	if e.holdsSources() {
		e.vpl.far = e.mem.Words(int(e.st.N()))
		e.contrib = e.vpl.far[e.lo:e.hi:e.hi]
		e.vpl.bounded = e.boundsValues()
		if e.narrowsIDs() {
			e.vpl.ids = e.mem.Uint32s(int(e.st.N()))
		}
		if e.vpl.bounded { // no bound known yet
			id := e.op.Identity()
			for _, r := range [][]uint64{e.vpl.far[:e.lo], e.vpl.far[e.hi:]} {
				for i := range r {
					r[i] = id
				}
			}
		}
	} else {
		e.contrib = e.mem.Words(int(n))
	}
	if e.multi.upd != nil && !e.vpl.on { // the value pull keeps a bag per task
		e.multi.bag = newBag(e.deg)
	}
	e.front = newFrontier(e.lo, n)
	e.listCost = balance.ListCost(&e.front.list, e.deg, e.lo, balance.TaskAlpha)
	e.front.all = e.spec.AllActive
	if e.spec.Traversal {
		e.reached = newBitmap(n)
	}
	active := make([]bool, n)
	if e.spec.Continue {
		copy(e.val, e.prevOwn())
	}
	e.prog.Init(e.lo, e.st.N(), e.val, active)
	if e.start != nil {
		if err := e.startFrom(e.start, active); err != nil {
			return err
		}
	}
	id := e.op.Identity()
	var s laneSum
	for i := range n {
		e.acc[i] = id
		if active[i] || e.spec.AllActive {
			e.front.bits.set(i)
			s.activeV++
			s.activeE += uint64(e.deg[i])
			if e.spec.Traversal {
				e.reached.set(i)
			}
		}
	}
	for x := uint32(0); x < n; x += chunkRange {
		y := min(n, x+chunkRange)
		e.prog.Contributions(e.val[x:y], e.deg[x:y], e.contrib[x:y])
	}
	for i := range n {
		if !e.front.active(e.lo+i) && !e.vpl.bounded {
			e.contrib[i] = id
		}
		if e.spec.Dangling && e.deg[i] == 0 {
			s.dangling += f64(e.val[i])
		}
	}
	if err := e.makeWorkers(eps); err != nil {
		return err
	}
	e.laneSums = make([]laneSum, len(e.wks))
	e.laneSums[0] = s
	e.planTasks()
	ep := e.wks[0].ep
	if mb := e.st.mb; mb != nil {
		e.mail.refCur = mb.RefCursor(e.me)
		// Empty, whatever an earlier job of a served pool left there.
		for _, box := range []verbs.Addr{mb.Val[e.me], mb.Ref[e.me], mb.Log[e.me]} {
			if err := update.Reset(ep, box); err != nil {
				return err
			}
		}
		if err := ep.Flush(); err != nil {
			return err
		}
	}
	if err := e.prefillEntries(ep); err != nil {
		return err
	}
	if !e.valuesBehind {
		if err := e.io.write(e.st, ep, attrValue, e.lo, e.val); err != nil {
			return err
		}
	}
	if err := e.io.fill(e.st, ep, attrInbox, e.lo, e.hi, id); err != nil {
		return err
	}
	if e.contribsOnDM() {
		if err := e.shareContribs(); err != nil {
			return err
		}
	}
	if e.st.tri != nil && e.me == 0 {
		// The triangle operator's heaps, empty before anyone reserves
		// room in them (after the first boundary).
		if err := e.st.tri.resetHeaps(ep); err != nil {
			return err
		}
	}
	return e.mode.setup(e)
}

// readPrevious reads, for a program that continues the previous phase
// (algo.Spec.Continue), the values that phase left on DM: the chunk's,
// or every vertex's when the mode keeps them all (famgraph). Every rank
// has read before any writes its new values (Run's boundary after it).
func (e *engine) readPrevious(ep verbs.Endpoint) error {
	if !e.cn || !e.spec.Continue {
		return nil
	}
	lo, hi := e.lo, e.hi
	if _, all := e.mode.(famMode); all {
		lo, hi = 0, e.st.N()
	}
	e.prev, e.prevLo = make([]uint64, hi-lo), lo
	return e.io.read(e.st, ep, attrValue, lo, e.prev)
}

// prevOwn is the chunk's part of the previous phase's values.
func (e *engine) prevOwn() []uint64 { return e.prev[e.lo-e.prevLo : e.hi-e.prevLo] }

// maxMergedRead bounds a READ that joins several reads (the read mergers,
// the fetcher's gathered runs).
const maxMergedRead = 4 << 20

// newReader is a read merger over ep as configured: merging across the
// fabric's gap, or nothing at all (--no-merge: every read its own READ).
func (e *engine) newReader(ep verbs.Endpoint) (*verbs.ReadMerger, error) {
	if e.cfg.NoMerge {
		return verbs.NewReadMerger(ep, e.net, 0, 1)
	}
	return verbs.NewReadMerger(ep, e.net, e.cfg.MergeGap, maxMergedRead)
}

// makeWorkers makes the gang: one worker per endpoint, with its reader,
// fetch path and update coordinator, and the lanes of the apply.
func (e *engine) makeWorkers(eps []verbs.Endpoint) error {
	e.wks = make([]*worker, 0, len(eps)) // the made ones only: cacheBytes reads them meanwhile (entryCaches)
	for i, ep := range eps {
		wk := &worker{e: e, id: i, ep: ep}
		var err error
		if wk.rd, err = e.newReader(ep); err != nil {
			return err
		}
		dcfg := update.DirectConfig{PerOp: e.mode.perOpDirect(), Log: e.mode.logDirect(),
			Prune: e.prunesByValues(), Reader: wk.rd}
		if dcfg.Prune {
			// Pruning reads the destinations' values: a flush should cover
			// enough destinations that its merged reads pay for themselves
			// (a flush of 4,096 spread over a chunk reads about all of its
			// value array; of 65,536, a sixteenth as often).
			dcfg.Pending = 1 << 16
			if !e.cfg.NoMerge {
				dcfg.Gap = e.cfg.MergeGap
			}
		}
		if wk.direct, err = update.NewDirect(ep, e.op, e.st, e.st.mb, dcfg, &wk.stats); err != nil {
			return err
		}
		if e.st.mb != nil {
			wk.sender = update.NewSender(ep, e.op, e.st.mb, wk.direct, update.SenderConfig{
				Pairs: senderPairs(e.w.Roles.CN), RecordBytes: e.st.Out.Codec.RecordBytes(), Weighted: e.st.Out.Weighted,
				Commit: e.pullEP != nil}, &wk.stats)
		}
		if e.spec.Triangles {
			// The triangle operator reads whole lists itself.
			wk.f, err = newTriangles(wk)
		} else {
			wk.f, err = e.mode.fetcher(wk)
		}
		if err != nil {
			return err
		}
		e.wks = append(e.wks, wk)
	}
	e.eps = append([]verbs.Endpoint(nil), eps...)
	if e.pullEP != nil {
		e.eps = append(e.eps, e.pullEP)
	}
	e.gang = newGang(len(eps))
	e.queue = balance.NewQueue(len(eps))
	e.pushFn, e.applyFn = e.pushWorker, e.applyWorker
	// Lanes: equal shares of the chunk, 64-aligned so that each worker
	// writes whole words of the frontier bitmap.
	n := uint64(e.hi - e.lo)
	w := uint64(len(eps))
	e.lanes = make([]uint32, w+1)
	for i := range w + 1 {
		x := min(n, (n*i/w+63)&^63)
		if i == w {
			x = n
		}
		e.lanes[i] = e.lo + uint32(x)
	}
	return nil
}

// senderPairs is the ValRD buffer per target chunk: 65,536 pairs (768 KiB
// and a 512 KiB table), fewer when there are many targets, so a worker's
// buffers stay near 8 MiB. A larger buffer combines more: on kron:20
// PageRank (cn:2,mn:2) 4,096 pairs sent 73.6 M pairs in 10 iterations,
// 16,384 sent 54.4 M, 65,536 28.6 M (docs/design.md).
func senderPairs(cns int) int {
	return max(1024, min(1<<16, (8<<20)/(20*max(1, cns-1))))
}

// planTasks cuts the chunk into stage-2 tasks once: its task spans (the
// layout's loading batches, whose entries and lists are contiguous on one
// MN, taken together up to Config.Batch vertices) cut to Config.Batch
// vertices and about HubDegree edges, hubs split into edge ranges.
func (e *engine) planTasks() {
	var edges uint64
	for _, d := range e.deg {
		edges += uint64(d)
	}
	if e.cfg.HubDegree == 0 {
		e.cfg.HubDegree = max(1024, edges/uint64(16*len(e.wks)))
	}
	var deg []uint64 // one span's degrees at a time
	e.tasks = e.tasks[:0]
	for _, sp := range taskSpans(e.st.Out.ChunkBatches(e.me), e.cfg.Batch) {
		deg = grow(deg, int(sp.Hi-sp.Lo))
		for i, d := range e.deg[sp.Lo-e.lo : sp.Hi-e.lo] {
			deg[i] = uint64(d)
		}
		// A multiset kernel's value pull reads whole vertices (bagTask).
		split := !e.cfg.NoHubSplit && !(e.vpl.on && e.multi.upd != nil)
		e.tasks = append(e.tasks, balance.Tasks(deg, sp.Lo, e.cfg.Batch, e.cfg.HubDegree, split)...)
	}
}

// vertexRun is a run of a chunk's consecutive vertices [Lo, Hi).
type vertexRun struct{ Lo, Hi uint32 }

// taskSpans takes a chunk's loading batches (consecutive, in order)
// together into runs of at most n vertices, whole batches each: a task
// then reads its entries in one READ and its lists in one per MN they are
// on, all in one round trip. A batch of more than n vertices is a run of
// its own, which the tasks cut.
func taskSpans(lbs []dmstore.Batch, n int) []vertexRun {
	var out []vertexRun
	for _, lb := range lbs {
		if k := len(out) - 1; k >= 0 && out[k].Hi == lb.Lo && int(lb.Hi-out[k].Lo) <= n {
			out[k].Hi = lb.Hi
			continue
		}
		out = append(out, vertexRun{lb.Lo, lb.Hi})
	}
	return out
}

// sparseTasks cuts a frontier list into tasks: runs of at most batch
// vertices and about hub edges, each hub its own task or (split) edge
// ranges of at most hub edges. Task.Lo and Hi index the list.
func sparseTasks(list []uint32, deg []uint32, lo uint32, batch int, hub uint64, split bool, out []balance.Task) []balance.Task {
	start, edges := 0, uint64(0)
	flush := func(i int) {
		if i > start {
			out = append(out, balance.Task{Lo: uint32(start), Hi: uint32(i)})
		}
		start, edges = i, 0
	}
	for i, v := range list {
		d := uint64(deg[v-lo])
		if d > hub {
			flush(i)
			if split {
				for a := uint64(0); a < d; a += hub {
					out = append(out, balance.Task{Lo: uint32(i), Hi: uint32(i + 1), EdgeLo: a, EdgeHi: min(d, a+hub)})
				}
			} else {
				out = append(out, balance.Task{Lo: uint32(i), Hi: uint32(i + 1)})
			}
			start = i + 1
			continue
		}
		if i-start == batch || (i > start && edges+d > hub) {
			flush(i)
		}
		edges += d
	}
	flush(len(list))
	return out
}
