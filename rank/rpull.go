package rank

import (
	"github.com/dmg-hpc/dmg/balance"
)

// remotePull is the remote pull's state: the other chunks' tasks,
// planned once, and the partials of the chunk being pulled for, from
// vertex partLo.
type remotePull struct {
	ftasks [][]balance.Task
	part   []uint64
	partLo uint32
}

// The remote pull (Config.RemotePull, --remote-pull): how a dense pull
// iteration can move candidates between chunks when most of the graph is
// active. Instead of pushing its vertices' segments for other chunks to the
// update coordinator (RefRD, ValRD), each CN pulls for the other chunks'
// vertices too: for a vertex v of chunk k it reads only the segment of v's
// in-list that lies in its own chunk (the index entry gives its length)
// and gathers its own sources' contributions, exactly as the local pull
// does, into one partial word per vertex of chunk k. That is Gemini's
// dense mode on disaggregated memory: a partial is one word per vertex
// with no destination id, reduced by a sequential loop, and its sources
// are the CN's own cache, so no candidate crosses the fabric one by one.
//
// The chunks are taken in rounds: in round r = 1..C-1, CN j pulls for
// chunk (j+r) mod C, so in every round each chunk has exactly one writer.
// The partials go into chunk k's inbox words on DM (round 1 writes them,
// later rounds read, combine and write, after a barrier of the CNs between
// rounds); the owner folds its inbox in the apply, as it does after direct
// updates. A CN holds one chunk's partials at a time: |V|/C words.

// vertexCost is the stage-2 cost of a task of another chunk, whose
// degrees this CN does not keep.
func (e *engine) vertexCost(t balance.Task) uint64 { return uint64(t.Hi-t.Lo) * 8 }

// foreignTasks are chunk k's tasks for the remote pull: its task spans
// cut to Config.Batch vertices, planned once.
func (e *engine) foreignTasks(k int) []balance.Task {
	if e.rp.ftasks == nil {
		e.rp.ftasks = make([][]balance.Task, len(e.st.Out.Config.Bounds)-1)
	}
	if e.rp.ftasks[k] == nil {
		ts := []balance.Task{}
		for _, sp := range taskSpans(e.st.Out.ChunkBatches(k), e.cfg.Batch) {
			for x := sp.Lo; x < sp.Hi; x += uint32(e.cfg.Batch) {
				ts = append(ts, balance.Task{Lo: x, Hi: min(sp.Hi, x+uint32(e.cfg.Batch))})
			}
		}
		e.rp.ftasks[k] = ts
	}
	return e.rp.ftasks[k]
}

// foreign reports whether v belongs to another chunk (a remote-pull
// destination).
func (e *engine) foreign(v uint32) bool { return v < e.lo || v >= e.hi }

// pullRemote is worker w's part of the remote pull, after its own chunk's
// tasks: every round's tasks, then its share of the partials' WRITEs.
// Worker 0 meets the other CNs between rounds whatever happened, so that
// no CN waits for one that failed; the push's boundary reports the error.
func (e *engine) pullRemote(w int) error {
	c := len(e.st.Out.Config.Bounds) - 1
	var first error
	for r := 1; r < c; r++ {
		if first == nil {
			first = e.pullRound(w, (e.me+r)%c, r > 1)
		}
		if r == c-1 {
			break
		}
		// The next round reads what this one wrote, on every CN.
		if first == nil {
			first = e.gang.barrier()
		}
		if w == 0 {
			if err := e.w.Group.Barrier(); err != nil && first == nil {
				first = err
			}
		}
		if first == nil {
			first = e.gang.barrier()
		}
	}
	return first
}

// pullRound pulls for chunk k: the partials start at the identity, the
// workers take k's tasks, then each writes a share of the partials into
// k's inbox words (combined with what they hold when fold is set).
func (e *engine) pullRound(w, k int, fold bool) error {
	b := e.st.Out.Config.Bounds
	lo, hi := b[k], b[k+1]
	if err := e.gang.barrier(); err != nil { // the previous tasks are done
		return err
	}
	if w == 0 {
		e.rp.partLo = lo
		e.rp.part = grow(e.rp.part, int(hi-lo))
		e.queue.Reset(e.foreignTasks(k), e.vertexCost, !e.cfg.NoSteal)
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	n, nw := hi-lo, uint32(len(e.wks))
	x, y := lo+n*uint32(w)/nw, lo+n*uint32(w+1)/nw
	id := e.op.Identity()
	part := e.rp.part[x-lo : y-lo]
	for i := range part {
		part[i] = id
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	wk := e.wks[w]
	for {
		t, ok := e.queue.Next(w)
		if !ok {
			break
		}
		if err := wk.f.fetch(t); err != nil {
			return err
		}
	}
	if err := e.gang.barrier(); err != nil {
		return err
	}
	if y <= x {
		return nil
	}
	if fold {
		wk.sVal = grow(wk.sVal, int(y-x))
		if err := wk.io.read(e.st, wk.ep, attrInbox, x, wk.sVal); err != nil {
			return err
		}
		e.op.FoldWords(part, wk.sVal)
	}
	return wk.io.write(e.st, wk.ep, attrInbox, x, part)
}
