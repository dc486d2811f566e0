package rank

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// mailDrain is the collaborative path's apply: the RefRD records' cursor
// and items, and the buffers the segments and ValRD records are read into.
type mailDrain struct {
	refCur *update.RefCursor
	items  []update.RefItem
	recBuf []byte
	segDst []uint32
	segW   []float32
	segOff []int
	valBuf []byte
}

// The apply phase, after the barrier that ends every CN's sends. Each
// worker owns a lane: a contiguous, 64-aligned range of the chunk's
// destinations. RefRD segments and ValRD pairs are fetched cooperatively
// and every worker folds the part that falls in its lane, so no two
// workers write one accumulator and the folds need no atomics; then each
// worker turns its lane's accumulators into the next values.

// drainInfo is what worker 0 reads of the own chunk's regions before an
// apply.
type drainInfo struct {
	refUsed, valUsed, logUsed uint64
	refFrom                   uint64 // RefRD bytes the puller took
	logOver                   bool
	inboxDirty                bool // direct updates (or the MNs' ValRD apply) wrote inbox words
	dense                     bool // this apply visits the whole chunk
}

// groupBytes bounds the RefRD segments fetched before they are folded;
// pieceBytes the ValRD records read at a time.
const (
	groupBytes = 4 << 20
	pieceBytes = 4 << 20 / update.ValRec * update.ValRec
	recsBytes  = 1 << 20
	chunkRange = 4096 // vertices per call of the program's range methods
)

func (e *engine) apply() error { return e.gang.run(e.applyFn) }

func (e *engine) applyWorker(w int) error {
	wk := e.wks[w]
	if w == 0 {
		if err := e.readInfo(wk); err != nil {
			return err
		}
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	if !e.info.dense {
		return e.applySparse(wk, w)
	}
	a, b := e.lanes[w], e.lanes[w+1]
	if e.it.remote == viaMailboxes && e.it.refrd {
		if err := e.drainRef(wk, w, a, b); err != nil {
			return err
		}
	}
	if e.it.valrdAt == "cn" || e.it.sparseVal {
		t := time.Now()
		if err := e.drainVal(wk, w, a, b); err != nil {
			return err
		}
		if w == 0 {
			e.stats.drainSeconds = time.Since(t).Seconds()
		}
	}
	if w == 0 {
		if err := e.resetRegions(wk); err != nil {
			return err
		}
	}
	if !e.it.vpull { // a value pull sends nothing
		if err := e.mode.collect(e, wk, a, b); err != nil {
			return err
		}
	}
	return e.updateLane(wk, w, a, b)
}

// readInfo reads the own chunk's mailbox and log tails (one round trip)
// and stops the RefRD puller.
func (e *engine) readInfo(wk *worker) error {
	if e.pull != nil {
		err := e.pull.stop()
		e.pull = nil
		if err != nil {
			return err
		}
	}
	e.info = drainInfo{dense: !e.it.sparseT, inboxDirty: e.it.valrdAt == "mn" || e.it.rpull}
	mb := e.st.mb
	if mb == nil {
		// The baselines keep no touched log: every apply visits the whole
		// chunk (the naive one reads its whole inbox).
		e.info.dense = true
		e.front.asBits()
		return nil
	}
	k := e.me
	words := grow(wk.bytes, 24)
	wk.bytes = words
	if err := wk.ep.Read(words[0:8], mb.Ref[k]); err != nil {
		return err
	}
	if err := wk.ep.Read(words[8:16], mb.Val[k]); err != nil {
		return err
	}
	if err := wk.ep.Read(words[16:24], mb.Log[k]); err != nil {
		return err
	}
	if err := wk.ep.Flush(); err != nil {
		return err
	}
	ref, val, log := binary.LittleEndian.Uint64(words[0:]), binary.LittleEndian.Uint64(words[8:]), binary.LittleEndian.Uint64(words[16:])
	e.info.refUsed, e.info.valUsed = min(ref, mb.RefCap), min(val, mb.ValCap)
	if e.mail.refCur != nil {
		e.info.refFrom = e.mail.refCur.Position()
		e.info.refUsed = max(e.info.refUsed, e.info.refFrom)
	}
	e.info.logUsed, e.info.logOver = min(log, mb.LogCap[k]), log > mb.LogCap[k]
	if log > 0 {
		e.info.inboxDirty = true
	}
	if e.info.logOver || (!e.info.dense && e.info.logUsed/update.LogRec > uint64(e.hi-e.lo)/8) {
		// Too many remote touches to read them one by one: this apply
		// reads the whole inbox and visits the whole chunk.
		e.info.dense = true
	}
	if !e.info.dense {
		return e.gatherTouched(wk)
	}
	e.front.asBits()
	return nil
}

// resetRegions empties the own chunk's mailboxes and log for the next
// iteration (the MNs reset the ValRD mailboxes they applied).
func (e *engine) resetRegions(wk *worker) error {
	mb := e.st.mb
	if mb == nil {
		return nil
	}
	k := e.me
	if e.info.refUsed > 0 {
		if err := update.Reset(wk.ep, mb.Ref[k]); err != nil {
			return err
		}
	}
	if e.mail.refCur != nil {
		e.mail.refCur.Rewind()
	}
	if e.info.valUsed > 0 && e.it.valrdAt != "mn" {
		if err := update.Reset(wk.ep, mb.Val[k]); err != nil {
			return err
		}
	}
	if e.info.logUsed > 0 || e.info.logOver {
		if err := update.Reset(wk.ep, mb.Log[k]); err != nil {
			return err
		}
	}
	return wk.ep.Flush()
}

// drainRef folds the own chunk's RefRD items: worker 0 reads the records,
// every worker fetches a share of each group's segments, and every worker
// folds the part of every segment that falls in its lane [a, b) (segments
// are sorted by destination).
func (e *engine) drainRef(wk *worker, w int, a, b uint32) error {
	rec := e.st.Out.Codec.RecordBytes()
	upto := e.info.refUsed
	// Every worker follows the rounds on its own copy of the cursor's
	// position (worker 0 moves the shared cursor, and may be a round ahead
	// of the others when they look).
	pos := e.info.refFrom
	for pos < upto {
		size := min(upto-pos, recsBytes/update.RefRec*update.RefRec)
		pos += size
		if w == 0 {
			var err error
			e.mail.items, e.mail.recBuf, err = e.mail.refCur.Take(wk.ep, pos, size, e.mail.recBuf, rec, math.MaxUint32>>2, e.st.N(), e.net, e.mail.items[:0])
			if err != nil {
				return err
			}
			e.mail.segOff = e.mail.segOff[:0]
			off := 0
			for _, it := range e.mail.items {
				e.mail.segOff = append(e.mail.segOff, off)
				off += int(it.Edges)
			}
		}
		if err := e.gang.barrier(); err != nil {
			return err
		}
		items := e.mail.items
		for g0 := 0; g0 < len(items); {
			g1, bytes := g0, 0
			for g1 < len(items) && (g1 == g0 || bytes+int(items[g1].Edges)*rec <= groupBytes) {
				bytes += int(items[g1].Edges) * rec
				g1++
			}
			if err := e.fetchGroup(wk, w, g0, g1, bytes); err != nil {
				return err
			}
			if err := e.gang.barrier(); err != nil {
				return err
			}
			if err := e.foldGroup(wk, g0, g1, a, b); err != nil {
				return err
			}
			if err := e.gang.barrier(); err != nil {
				return err
			}
			g0 = g1
		}
	}
	return nil
}

// fetchGroup reads worker w's share of the segments of items [g0, g1)
// and decodes them into the group buffers.
func (e *engine) fetchGroup(wk *worker, w, g0, g1, bytes int) error {
	rec := e.st.Out.Codec.RecordBytes()
	if w == 0 {
		edges := bytes / rec
		e.mail.segDst = grow(e.mail.segDst, edges)
		if e.st.Out.Weighted {
			e.mail.segW = grow(e.mail.segW, edges)
		}
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	n := len(e.wks)
	any := false
	for i := g0 + w; i < g1; i += n {
		it := e.mail.items[i]
		if _, err := wk.rd.ReadView(it.Seg, int(it.Edges)*rec); err != nil {
			return err
		}
		any = true
	}
	if !any {
		return nil
	}
	if err := wk.rd.Flush(); err != nil {
		return err
	}
	base := e.mail.segOff[g0]
	for h, i := 0, g0+w; i < g1; h, i = h+1, i+n {
		it := e.mail.items[i]
		o := e.mail.segOff[i] - base
		b := wk.rd.View(h)
		dst := e.mail.segDst[o : o+int(it.Edges)]
		if e.mail.segW != nil {
			update.DecodeRecords(b, rec, true, dst[:0], e.mail.segW[o:o])
		} else {
			update.DecodeRecords(b, rec, false, dst[:0], nil)
		}
		if dst[0] < e.lo || dst[len(dst)-1] >= e.hi || !slices.IsSorted(dst) {
			return errRefSegment(it, e.lo, e.hi)
		}
	}
	return nil
}

// foldGroup folds the lane [a, b) of every segment of items [g0, g1).
func (e *engine) foldGroup(wk *worker, g0, g1 int, a, b uint32) error {
	base := e.mail.segOff[g0]
	for i := g0; i < g1; i++ {
		it := e.mail.items[i]
		o := e.mail.segOff[i] - base
		dst := e.mail.segDst[o : o+int(it.Edges)]
		x, y := sortSearch(dst, a), sortSearch(dst, b)
		if x >= y {
			continue
		}
		var ws []float32
		if e.mail.segW != nil {
			ws = e.mail.segW[o+x : o+y]
		}
		if e.edgr != nil {
			wk.cands = grow(wk.cands, y-x)
			e.edgr.Edges(it.Src, it.Val, dst[x:y], ws, wk.cands)
			e.op.ScatterCands(e.acc, e.lo, dst[x:y], wk.cands)
			continue
		}
		if e.multi.bag != nil {
			if err := e.multi.bag.scatter(e.lo, dst[x:y], it.Val, false); err != nil {
				return err
			}
			continue
		}
		e.op.Scatter(e.acc, e.lo, dst[x:y], ws, it.Val)
	}
	return nil
}

// drainVal folds the own chunk's ValRD mailbox: the workers read shares
// of each piece of whole blocks, then each folds the pairs of its lane.
func (e *engine) drainVal(wk *worker, w int, a, b uint32) error {
	mb := e.st.mb
	bb := mb.ValBlockBytes()
	used := e.info.valUsed / bb * bb
	piece := max(bb, pieceBytes/bb*bb)
	if w == 0 {
		if n := int(min(used, piece)); cap(e.mail.valBuf) < n {
			e.mail.valBuf = e.mem.Bytes(int(piece)) // once, at its bound, on huge pages
		}
		e.mail.valBuf = e.mail.valBuf[:min(used, piece)]
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	n := uint64(len(e.wks))
	box := mb.Val[e.me]
	for off := uint64(0); off < used; off += piece {
		size := min(piece, used-off)
		blocks := size / bb
		x, y := blocks*uint64(w)/n*bb, blocks*uint64(w+1)/n*bb
		if y > x {
			if err := verbs.ReadBulk(wk.ep, e.mail.valBuf[x:y], update.Records(box, off+x)); err != nil {
				return err
			}
			for p := x; p < y; p += bb {
				if _, _, err := mb.ValBlockPairs(e.mail.valBuf[p:p+bb], e.lo, e.hi, nil, nil); err != nil {
					return errors.Wrapf(err, "rank: chunk %d", e.me)
				}
			}
		}
		if err := e.gang.barrier(); err != nil {
			return err
		}
		for p := uint64(0); p < size; p += bb {
			blk := e.mail.valBuf[p : p+bb]
			// Checked by its reader; decoded again here only on machines
			// where the pairs cannot be viewed in place.
			dst, val := update.Pairs(blk, mb.ValBlock, min(binary.LittleEndian.Uint64(blk), mb.ValBlock), wk.pairDst, wk.pairVal)
			if e.multi.bag != nil {
				if err := e.multi.bag.pairs(e.lo, a, b, dst, val); err != nil {
					return err
				}
				continue
			}
			e.op.FoldPairs(e.acc, e.lo, a, b, dst, val)
		}
		if err := e.gang.barrier(); err != nil {
			return err
		}
	}
	return nil
}

// collectInbox folds the lane's inbox words into the cache and resets them
// to the identity.
func (e *engine) collectInbox(wk *worker, a, b uint32) error {
	if a >= b {
		return nil
	}
	wk.sVal = grow(wk.sVal, int(b-a))
	if err := wk.io.read(e.st, wk.ep, attrInbox, a, wk.sVal); err != nil {
		return err
	}
	e.op.FoldWords(e.acc[a-e.lo:b-e.lo], wk.sVal)
	return wk.io.fill(e.st, wk.ep, attrInbox, a, b, e.op.Identity())
}

// updateLane turns the lane's accumulators into the next values: the next
// frontier (bitmap), the contributions, the job-wide sums, and, unless a
// dense iteration leaves them behind (lazyValues), the values written
// back to DM in large WRITEs.
func (e *engine) updateLane(wk *worker, w int, a, b uint32) error {
	itc := &wk.itc
	*itc = algo.Iteration{Index: e.it.index, N: e.st.N(), Dangling: e.stats.prev.dangling}
	id := e.op.Identity()
	var s laneSum
	all := e.spec.AllActive
	for x := a; x < b; x += chunkRange {
		y := min(b, x+chunkRange)
		i0, i1 := x-e.lo, y-e.lo
		acc, val, deg := e.acc[i0:i1], e.val[i0:i1], e.deg[i0:i1]
		wk.sNext = grow(wk.sNext, len(acc))
		next := wk.sNext
		switch {
		case e.multi.bag != nil:
			e.multi.bag.update(e.multi.upd, e.lo, i0, i1, val, next, itc)
		case e.multi.upd != nil: // the value pull's bags set them in the push
			copy(next, acc)
		default:
			e.prog.Update(acc, val, next, itc)
		}
		if !all {
			clear(e.front.bits[i0/64 : (i1+63)/64])
		}
		for j, nv := range next {
			changed := nv != val[j]
			val[j], acc[j] = nv, id
			if all || changed {
				s.activeV++
				s.activeE += uint64(deg[j])
				if !all {
					e.front.bits.set(i0 + uint32(j))
				}
				if e.spec.Traversal {
					e.reached.set(i0 + uint32(j))
				}
			}
			if e.spec.Dangling && deg[j] == 0 {
				s.dangling += math.Float64frombits(nv)
			}
		}
		e.prog.Contributions(val, deg, e.contrib[i0:i1])
		if !all && !e.vpl.bounded {
			for j := range val {
				if !e.front.bits.has(i0 + uint32(j)) {
					e.contrib[i0+uint32(j)] = id
				}
			}
		}
	}
	e.laneSums[w] = s
	if e.contribsOnDM() {
		if err := wk.io.write(e.st, wk.ep, attrContrib, a, e.contrib[a-e.lo:b-e.lo]); err != nil {
			return err
		}
	}
	// A dense iteration's values wait (iterate marks them behind); a CN
	// applying densely for its own reasons writes them, as the others,
	// which do not know it, will not catch them up.
	if e.it.dense && e.lazyValues() {
		return nil
	}
	return wk.io.write(e.st, wk.ep, attrValue, a, e.val[a-e.lo:b-e.lo])
}

// lazyValues says whether a dense iteration's apply leaves the values on
// DM behind:
// nobody reads them before the next prune of direct candidates (a
// monotone kernel's sparse push), the end of the program (rank 0's
// gather, the next phase) or never, so they are written then, once,
// instead of every iteration (catchUpValues). Famgraph reads every
// value each iteration and the triangle operator its hubs': they are
// written as they change. The same on every rank (the mode and the
// kernel), so the catch-ups are collective.
func (e *engine) lazyValues() bool {
	_, fam := e.mode.(famMode)
	return !fam && !e.spec.Triangles
}

// valuesUnread says no CN reads a value on DM before the run ends, so
// the values are written once, at the end or before a probe
// (catchUpValues), not as they change: not at set-up, not by the sparse
// applies. The design's mode checks a traversal's candidates for other
// chunks against their reached bitmaps (plan.reached), and those of a
// kernel whose far words bound the values (WCC, SSSP: boundsValues)
// against those words, read again from the contributions on DM
// (plan.fresh), never against the values. The same on every rank.
func (e *engine) valuesUnread() bool {
	if !e.mode.logDirect() || !e.lazyValues() {
		return false
	}
	return e.spec.Traversal && e.st.bits != nil || e.boundsValues()
}

// prunesByValues says a sparse push reads the destinations' values on DM
// to drop the direct candidates that would change nothing (a monotone
// kernel in the design's mode, update.DirectConfig.Prune), so they must
// be current before it.
func (e *engine) prunesByValues() bool {
	return e.spec.Monotone && e.mode.logDirect() && !e.valuesUnread()
}

// catchUpValues writes the own chunk's values to DM (a CN's part; the
// caller's Sync makes them visible) when a dense apply left them behind.
func (e *engine) catchUpValues() error {
	e.valuesBehind = false
	if !e.cn {
		return nil
	}
	return e.io.write(e.st, e.wks[0].ep, attrValue, e.lo, e.val)
}

// gatherTouched is worker 0's start of a sparse apply: it reads the own
// chunk's touched log, folds the inbox words it names into the cache (and
// resets them), and merges them with the vertices the workers touched
// locally into one sorted list, e.touched.
func (e *engine) gatherTouched(wk *worker) error {
	e.touched = e.touched[:0]
	if n := e.info.logUsed; n > 0 {
		box := e.st.mb.Log[e.me]
		e.mail.recBuf = grow(e.mail.recBuf, int(n))
		if err := verbs.ReadBulk(wk.ep, e.mail.recBuf, update.Records(box, 0)); err != nil {
			return err
		}
		var err error
		if e.touched, err = update.DecodeLog(e.mail.recBuf, e.lo, e.hi, e.touched); err != nil {
			return err
		}
		slices.Sort(e.touched)
		if err := e.foldInboxWords(wk, e.touched); err != nil {
			return err
		}
		if err := update.Reset(wk.ep, box); err != nil {
			return err
		}
		if err := wk.ep.Flush(); err != nil {
			return err
		}
	}
	if e.it.sparseVal && e.info.valUsed > 0 {
		if err := e.drainValSparse(wk); err != nil {
			return err
		}
	}
	for _, x := range e.wks {
		e.touched = append(e.touched, x.touched...)
	}
	slices.Sort(e.touched)
	e.touched = slices.Compact(e.touched)
	e.oldFront = append(e.oldFront[:0], e.front.list...)
	return nil
}

// drainValSparse folds the pairs a sparse iteration sent to the own
// chunk by value into the cache, adds their destinations to e.touched and
// empties the mailbox (worker 0, at the start of a sparse apply).
func (e *engine) drainValSparse(wk *worker) error {
	mb := e.st.mb
	var err error
	wk.bytes, wk.pairDst, wk.pairVal, err = mb.ReadValPairs(wk.rd, e.me, e.info.valUsed, e.lo, e.hi, wk.bytes, wk.pairDst[:0], wk.pairVal[:0])
	if err != nil {
		return errors.Wrapf(err, "rank: chunk %d", e.me)
	}
	e.op.FoldPairs(e.acc, e.lo, e.lo, e.hi, wk.pairDst, wk.pairVal)
	e.touched = append(e.touched, wk.pairDst...)
	if err := update.Reset(wk.ep, mb.Val[e.me]); err != nil {
		return err
	}
	return wk.ep.Flush()
}

// foldInboxWords reads the inbox words of the sorted vertices ids (READs
// merged across small gaps), folds them into the cache and writes the
// identity back over the spans read.
func (e *engine) foldInboxWords(wk *worker, ids []uint32) error {
	wk.sVal = grow(wk.sVal, len(ids))
	wk.bytes = grow(wk.bytes, 8*len(ids))
	for i, v := range ids {
		if err := wk.rd.Read(wk.bytes[8*i:8*i+8], e.st.InboxAddr(v)); err != nil {
			return err
		}
	}
	if err := wk.rd.Flush(); err != nil {
		return err
	}
	for i, v := range ids {
		x := v - e.lo
		e.acc[x] = e.op.Combine(e.acc[x], binary.LittleEndian.Uint64(wk.bytes[8*i:]))
	}
	gap := uint32(max(1, e.cfg.MergeGap/8))
	return spans(ids, gap, func(x, y uint32) error { return wk.io.fill(e.st, wk.ep, attrInbox, x, y, e.op.Identity()) })
}

// spans calls fn for runs [x, y) that cover the sorted ids, joining ids at
// most gap apart.
func spans(ids []uint32, gap uint32, fn func(x, y uint32) error) error {
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j]-ids[j-1] <= gap {
			j++
		}
		if err := fn(ids[i], ids[j-1]+1); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// applySparse updates only the touched vertices: each worker a contiguous
// part of e.touched, then worker 0 makes the next frontier list.
func (e *engine) applySparse(wk *worker, w int) error {
	t := e.touched
	n := len(e.wks)
	part := t[len(t)*w/n : len(t)*(w+1)/n]
	itc := &wk.itc
	*itc = algo.Iteration{Index: e.it.index, N: e.st.N(), Dangling: e.stats.prev.dangling}
	id := e.op.Identity()
	wk.changed = wk.changed[:0]
	for x := 0; x < len(part); x += chunkRange {
		ids := part[x:min(len(part), x+chunkRange)]
		wk.sAcc, wk.sVal, wk.sNext = grow(wk.sAcc, len(ids)), grow(wk.sVal, len(ids)), grow(wk.sNext, len(ids))
		for j, v := range ids {
			wk.sAcc[j], wk.sVal[j] = e.acc[v-e.lo], e.val[v-e.lo]
		}
		e.prog.Update(wk.sAcc, wk.sVal, wk.sNext, itc)
		for j, v := range ids {
			e.acc[v-e.lo] = id
			if wk.sNext[j] != wk.sVal[j] {
				e.val[v-e.lo] = wk.sNext[j]
				wk.changed = append(wk.changed, v)
			}
		}
	}
	if err := e.writeChanged(wk); err != nil {
		return err
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	if w != 0 {
		e.laneSums[w] = laneSum{}
		return nil
	}
	return e.nextSparseFrontier(wk)
}

// writeChanged writes the values the worker's part of a sparse apply
// changed to DM in large WRITEs (spans closer than the merge gap joined),
// unless nobody reads them before the run ends (valuesUnread).
//
// A kernel whose far words bound its values writes them as its
// contributions instead (a Relax kernel's contributions are its values),
// so that the contributions on DM stay current for the next refresh of
// the far words (plan.fresh) and the next value pull.
func (e *engine) writeChanged(wk *worker) error {
	attr := attrValue
	switch {
	case e.boundsValues():
		attr = attrContrib
	case e.valuesUnread():
		return nil
	}
	gap := uint32(max(1, e.cfg.MergeGap/8))
	return spans(wk.changed, gap, func(x, y uint32) error {
		return wk.io.write(e.st, wk.ep, attr, x, e.val[x-e.lo:y-e.lo])
	})
}

// nextSparseFrontier makes the changed vertices the next frontier (sorted:
// the workers' parts are in order) and keeps the contributions of exactly
// the frontier (of every vertex when they bound the values: bounded).
func (e *engine) nextSparseFrontier(wk *worker) error {
	id := e.op.Identity()
	if !e.vpl.bounded {
		for _, v := range e.oldFront {
			e.contrib[v-e.lo] = id
		}
	}
	list := e.front.list[:0]
	for _, x := range e.wks {
		list = append(list, x.changed...)
	}
	e.front.list, e.front.dense = list, false
	var s laneSum
	for x := 0; x < len(list); x += chunkRange {
		ids := list[x:min(len(list), x+chunkRange)]
		wk.sVal, wk.sNext = grow(wk.sVal, len(ids)), grow(wk.sNext, len(ids))
		wk.degs = grow(wk.degs, len(ids))
		for j, v := range ids {
			wk.sVal[j], wk.degs[j] = e.val[v-e.lo], e.deg[v-e.lo]
			s.activeE += uint64(e.deg[v-e.lo])
			if e.spec.Traversal {
				e.reached.set(v - e.lo)
			}
		}
		e.prog.Contributions(wk.sVal, wk.degs, wk.sNext)
		for j, v := range ids {
			e.contrib[v-e.lo] = wk.sNext[j]
		}
	}
	s.activeV = uint64(len(list))
	if e.spec.Dangling {
		for i, d := range e.deg {
			if d == 0 {
				s.dangling += math.Float64frombits(e.val[i])
			}
		}
	}
	e.laneSums[0] = s
	return nil
}
