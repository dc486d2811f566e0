package job

import (
	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/hugemem"
	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// recut lays a stored graph out anew for this job's compute nodes, from
// the pool alone: new stage-1 chunks from the stored degrees, each CN
// reading its new chunk's rows (and in-rows) from the graph's layouts,
// then laying them out and loading them as a load does, into extents of
// a view: a slot of the same name cut for this many CNs, which the job
// holds for its run and which later jobs of that count find ready.
//
// An entry's segment lengths, and so the overflow tables before its
// edge list, depend on the chunks: a new cut moves the lists, so it is a
// copy, not a rewrite of the entries in place (docs/design.md).
func recut(w *spmd.World, cfg *Config, alg algo.Algorithm, src *stored, srcAux pool.Extent, eps []verbs.Endpoint, pr *poolRun, agree func(error) error) (*stored, pool.Extent, error) {
	var none pool.Extent
	sh, chunks, err := readCut(w, cfg, src, srcAux, eps[0])
	if err := agree(err); err != nil {
		return nil, none, err
	}
	ep := eps[0]

	// As the load laid the graph out, for this many chunks.
	lc := *cfg
	lc.LoadOnly, lc.Csr = true, src.Csr
	oc := src.Layouts.Out.Config
	lc.Layout = dmstore.LayoutConfig{EntrySize: oc.EntrySize, BatchVertices: oc.BatchVertices, Granule: oc.Granule, NoInPlace: oc.NoInPlace}
	lc.Packed = src.Layouts.packed()
	var mem hugemem.Arena
	defer mem.Free()
	facts, err := measure(w, &lc, alg, sh, chunks, &mem)
	if err := agree(err); err != nil {
		return nil, none, err
	}
	most, weights, err := agreeChunks(w, &facts)
	if err != nil {
		return nil, none, agree(err)
	}
	shape := jobShape{Vertices: src.Vertices, Edges: src.Edges, MaxChunkEdges: most, Weights: weights}
	hasIn := src.Layouts.In != nil
	// The view's slot, which rank 0 claimed when it took the graph
	// (poolRun.cutOrWait); the other ranks' catalogue calls are no-ops.
	pl := pr.cut
	if pl == nil {
		pl = &poolLoad{p: pr.p, view: true}
	}
	defer pl.abandon()
	l, err := planLayouts(w, &lc, shape, &facts, hasIn, chunks, nil)
	if err := agree(err); err != nil {
		return nil, none, err
	}
	needed := make([]uint64, len(l.last().MN))
	for m, u := range l.last().MN {
		needed[m] = u.Needed
	}
	base, err := pl.place(w, needed)
	if err := agree(err); err != nil {
		return nil, none, err
	}
	l, err = planLayouts(w, &lc, shape, &facts, hasIn, chunks, base)
	if err := agree(err); err != nil {
		return nil, none, err
	}
	_, err = loadShare(sh, l, w.Index, eps, &facts, nil)
	if err := agree(err); err != nil {
		return nil, none, err
	}
	view := &stored{Graph: src.Graph, Csr: src.Csr, Layouts: l, Vertices: src.Vertices, Edges: src.Edges,
		MaxChunkEdges: shape.MaxChunkEdges, Symmetric: src.Symmetric, Top: src.Top, CNs: w.Roles.CN}
	out := &Outcome{Meta: &src.Meta}
	if w.Rank() == 0 {
		out.Graph, err = readIDs(ep, srcAux, src)
	}
	if err := agree(err); err != nil {
		return nil, none, err
	}
	aux, err := pl.store(w, ep, view, out, facts.degrees)
	if err := agree(err); err != nil {
		return nil, none, err
	}
	// The run holds the view from here, and lets the graph go.
	if w.Rank() == 0 {
		if err = pl.ready(src.Vertices, src.Edges); err == nil {
			err = pr.swap(pl)
		}
	}
	return view, aux, agree(err)
}

// readCut makes this CN's new chunk of a stored graph: the chunks from
// the stored out-degrees, and the chunk's rows (and in-rows) read from
// the graph's layouts.
func readCut(w *spmd.World, cfg *Config, src *stored, srcAux pool.Extent, ep verbs.Endpoint) (*csr.Share, []uint32, error) {
	n := uint32(src.Vertices)
	all, err := readDegrees(ep, srcAux, 0, n)
	if err != nil {
		return nil, nil, err
	}
	deg := make([]uint64, n)
	for v, d := range all {
		deg[v] = uint64(d)
	}
	alpha := cfg.Alpha
	if alpha == 0 {
		alpha = balance.DefaultAlpha(w.Roles.CN)
	}
	chunks, err := balance.Chunks(deg, w.Roles.CN, alpha)
	if err != nil {
		return nil, nil, err
	}
	lo, hi := chunks[w.Index], chunks[w.Index+1]
	g, err := src.Layouts.Out.ReadRows(ep, lo, hi)
	if err != nil {
		return nil, nil, err
	}
	g.Directed = src.Directed
	in := g
	if src.Layouts.In != nil {
		if in, err = src.Layouts.In.ReadRows(ep, lo, hi); err != nil {
			return nil, nil, err
		}
	}
	return &csr.Share{Graph: g, In: in, Lo: lo, Hi: hi, Degrees: all[lo:hi], Top: src.Top}, chunks, nil
}
