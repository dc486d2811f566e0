package rank

import (
	"encoding/binary"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/reduce"
)

// valuePulls is the value pull's state: whether the job may use it
// (every rank, on), every vertex's contribution (a CN; its own chunk's
// are contrib), and whether DM's copy of them is out of date (after a
// sparse iteration).
type valuePulls struct {
	on    bool
	far   []uint64
	stale bool
	// bounded: far's other chunks are upper bounds of their values (a
	// Relax kernel's contributions are its values, which only fall; they
	// are kept for idle vertices too, where other kernels' fall back to
	// the identity), so a run for another chunk is filtered against them
	// before it is sent (reduce.Op.KeepBelow).
	bounded bool
	// ids is far in 4 bytes (reduce.NarrowID) for a kernel whose values
	// are vertex ids (narrowsIDs): the relaxed value pull gathers from
	// it, loading half the bytes at random from a cache the fabric's
	// copies share, and stores a label it lowers in both. Each worker
	// narrows its share after reading the words (readContribs).
	ids []uint32
}

// The value pull (Config.NoValuePull turns it off): how a dense pull
// iteration with most edges active moves the candidates that cross chunks.
// The collaborative update ships them to the destination's owner as RefRD
// segments and ValRD pairs, which the owner reads back and scatters into its
// accumulators: every crossing edge is touched by two CNs and goes through
// mailboxes. Here nothing is sent. Each CN reads the other chunks'
// contributions from DM in one bulk READ per chunk (8 B per vertex of the
// graph, written by their owners after each dense apply) and pulls every
// own vertex's whole in-list, local and remote segments alike, in the same
// tight gather as the local pull: one fetch of the list, no mailbox, no
// apply-side drain, no atomic.
//
// It costs memory the collaborative update does not: the CN holds a word
// per vertex of the graph, not only of its chunk (Config.ValuePullMax bounds
// it; a larger graph takes the coordinator). It moves 8 B per remote vertex
// per iteration instead of the mailboxes' 12 B per pre-combined pair and
// 24 B per RefRD item, which pays while the chunks' vertices are fewer than
// the edges that cross them (see docs/design.md for the figures).
//
// The contributions on DM are current after a dense apply, which writes
// them with the values; a sparse apply changes a few and does not write
// them, so a value pull that follows a sparse iteration first has every CN
// write its chunk's whole array, behind a boundary of its own.

// sourceKind is where a mode's value pull finds the sources'
// contributions.
type sourceKind uint8

const (
	sourcesRead    sourceKind = iota // every vertex's, read from DM in bulk (the design)
	sourcesLocal                     // every vertex's, from a local copy of every value (FAM-Graph)
	sourcesPerEdge                   // none held: a READ per neighbour (the naive baseline)
)

// holdsSources says the CN keeps every vertex's contribution (engine.far)
// for the value pull.
func (e *engine) holdsSources() bool { return e.vpl.on && e.mode.sources() != sourcesPerEdge }

// boundsValues says the CN's far words bound the other chunks' values
// (valuePulls.bounded): a Relax kernel reducing by minimum, whose
// contributions are its values, read from DM. It implies several CNs
// (valuePulls: a minimum takes the value pull on several only), so the
// owners keep their contributions on DM (contribsOnDM). Every rank
// computes the same.
func (e *engine) boundsValues() bool {
	return e.holdsSources() && e.spec.Relax && e.op.IsMin() && e.mode.sources() == sourcesRead && !e.cfg.NoRelax
}

// narrowsIDs says the value pull gathers from a 4-byte copy of far
// (valuePulls.ids): a bounded value pull (boundsValues) of a kernel whose
// values are vertex ids, on a graph whose ids leave reduce.NoID free, with
// room for the copy within ValuePullMax.
func (e *engine) narrowsIDs() bool {
	n := uint64(e.st.N())
	return e.boundsValues() && e.spec.VertexIDs && !e.cfg.NoNarrow && n < reduce.NoID && 12*n <= e.cfg.ValuePullMax
}

// contribsOnDM says the owners keep their contributions on DM
// (attrContrib) because some CN reads them there: the design's value pull
// on several CNs, the naive one's on any number. Every rank computes the
// same.
func (e *engine) contribsOnDM() bool {
	switch e.mode.sources() {
	case sourcesRead:
		return e.vpl.on && e.w.Roles.CN > 1
	case sourcesPerEdge:
		return e.vpl.on
	}
	return false
}

// vertexShare is worker w's share of the graph's vertices.
func (e *engine) vertexShare(w int) (lo, hi uint32) {
	n, k := uint64(e.st.N()), uint64(len(e.wks))
	return uint32(n * uint64(w) / k), uint32(n * uint64(w+1) / k)
}

// valuePulls says whether the job may use the value pull: the design's
// mode, a kernel whose dense iterations pull and whose candidates are the
// sources' contributions (no custom edge map, no triangles), more than one
// CN (or a multiset kernel, below), no bottom-up step that already serves
// a traversal, and a graph whose words fit ValuePullMax. Every rank
// computes the same.
//
// A multiset kernel (CDLP) gets its bound on memory from it: a vertex's
// whole in-list arrives in one visit, so its candidates are gathered into
// a bag of the task's vertices only (worker.tbag; tasks are then whole
// vertices, hubs unsplit) and the kernel's UpdateBag runs as soon as the
// task is read. The CN holds a word per vertex and a bag of the largest
// task's edges, where the chunk's bag held every edge end of the chunk
// (O(|E|/C)); on one CN too, where that bag would hold the whole graph.
// The baselines run multiset kernels only this way, their sources where
// their design keeps values (mode.pullSources): FAM-Graph's copy of every
// value, a READ per neighbour for the naive one.
func (e *engine) valuePulls() bool {
	c := &e.cfg
	if e.multi.upd != nil && e.mode.plain() {
		return true // the baselines' only way to a multiset (checkKernel)
	}
	return !c.NoValuePull && e.st.mb != nil && e.mode.pulls(c, e.spec) && e.edgr == nil &&
		!e.spec.Triangles && (e.w.Roles.CN > 1 || e.multi.upd != nil) && !(e.spec.Traversal && !c.NoBottomUp) &&
		8*uint64(e.st.N()) <= c.ValuePullMax
}

// bagTask is the value pull of a multiset kernel for one task (whole
// vertices [t.Lo, t.Hi)): the task's bag is laid out from their degrees,
// the task is read, and the kernel's UpdateBag turns the bag into their
// next values, which the accumulators keep until the apply.
func (wk *worker) bagTask(t balance.Task) error {
	e := wk.e
	i0, i1 := t.Lo-e.lo, t.Hi-e.lo
	wk.tbag.reset(e.deg[i0:i1])
	wk.tlo = t.Lo
	if err := wk.f.fetch(t); err != nil {
		return err
	}
	wk.pitc = algo.Iteration{Index: e.it.index, N: e.st.N()}
	wk.tbag.update(e.multi.upd, t.Lo, 0, i1-i0, e.val[i0:i1], e.acc[i0:i1], &wk.pitc)
	return nil
}

// shareContribs writes the own chunk's contributions to DM (a CN; nothing
// on an MN).
func (e *engine) shareContribs() error {
	if !e.cn {
		return nil
	}
	return e.io.write(e.st, e.wks[0].ep, attrContrib, e.lo, e.contrib)
}

// readContribs reads every other chunk's contributions from DM into e.vpl.far,
// whose own chunk is e.contrib itself. The workers read a share each, and
// narrow it into e.vpl.ids for a value pull that gathers from them.
func (e *engine) readContribs(wk *worker, w int) error {
	lo, hi := e.vertexShare(w)
	read := func(x, y uint32) error {
		if x >= y {
			return nil
		}
		if err := wk.io.read(e.st, wk.ep, attrContrib, x, e.vpl.far[x:y]); err != nil {
			return errors.Wrapf(err, "rank: contributions of vertices [%d, %d)", x, y)
		}
		return nil
	}
	if err := read(lo, min(hi, e.lo)); err != nil {
		return err
	}
	if err := read(max(lo, e.hi), hi); err != nil {
		return err
	}
	if e.vpl.ids != nil && e.it.vpull {
		for v, x := range e.vpl.far[lo:hi] {
			e.vpl.ids[lo+uint32(v)] = reduce.NarrowID(x)
		}
	}
	return nil
}

// readSources reads the contributions of the vertices src from DM, a READ
// and a round trip each: the naive baseline's value pull.
func (wk *worker) readSources(src []uint32) ([]uint64, error) {
	e := wk.e
	wk.srcs = grow(wk.srcs, len(src))
	wk.bytes = grow(wk.bytes, 8)
	for j, u := range src {
		if err := wk.ep.Read(wk.bytes[:8], e.st.Out.AttrAddr(attrContrib, u)); err != nil {
			return nil, err
		}
		if err := wk.ep.Flush(); err != nil {
			return nil, err
		}
		wk.srcs[j] = binary.LittleEndian.Uint64(wk.bytes)
	}
	return wk.srcs, nil
}
