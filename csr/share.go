package csr

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/hugemem"
)

// sink receives a reader's edges in input order: dense ids for most
// formats, external ids for text edge lists (which have no vertex table).
type sink interface {
	edge(s, d uint64, w float64)
}

// edgesSink is a sink that also takes many edges at once, in order (the
// batcher): the block parsers of text inputs hand theirs over so.
type edgesSink interface {
	sink
	edges(es []edgeRec)
}

// header is what a pass over an input says of the graph besides its edges.
type header struct {
	n        uint32
	ids      []uint64 // nil: identity, or m holds them
	m        *idMap   // a text input's map (nil: ids says)
	directed bool
	weighted bool
	meta     *Meta
}

// Share is the part of a graph one compute node holds: the out-edges of
// the vertices [Lo, Hi), on the dense ids of the whole graph, and on
// request their in-edges.
type Share struct {
	// Graph has every vertex of the graph (N, IDs) but edges only for
	// [Lo, Hi): every other vertex has out-degree 0 in it.
	Graph *Graph
	// In, when ShareOptions.In asked for it and the graph is directed,
	// holds the in-edges of [Lo, Hi): the row of v lists every u with
	// u→v, sorted, as the rows of the transpose of the whole graph that
	// Open builds (the same self-loops and parallel edges, each edge with
	// the weight its source's out-row keeps). Like Graph it has every
	// vertex (N, IDs) and rows only for [Lo, Hi). It is nil otherwise: an
	// undirected graph's out-rows already hold both directions.
	//
	// When OpenShareWith finds by fingerprint that the in-edges are the
	// out-edges (a directed input listing every edge both ways with the
	// same weight, such as gapbs's symmetrised .bel files), In is Graph
	// itself: the in-rows were not built, and Symmetric is true.
	In     *Graph
	Lo, Hi uint32
	// Degrees are the out-degrees of the vertices [Lo, Hi) (Degrees[i] is
	// Lo+i's) as the input lists them, self-loops dropped by the policy
	// but parallel edges counted (the builder drops those per vertex):
	// what the partition saw. An undirected graph's count both directions
	// (a self-loop once). A share's vertex has fewer than 2^32 edges.
	Degrees []uint32
	// Top is the vertex of the whole graph with the most of those
	// degrees, the lowest on ties (0 for a graph without vertices): the
	// default source of the kernels that take one.
	Top uint32

	// free, if set, releases what the share's passes read (OpenStaged's
	// kept edges): Free.
	free func()

	// win, when the rows did not fit ShareOptions.RowBytes, builds them
	// a window of vertices at a time (Windows); Graph and In then hold
	// no rows.
	win *windowed

	// ids, for a staged share, is the map of the ids in the staging
	// memory (Graph holds no table of them): ExternalID, DenseID.
	ids *slicedIDs
}

// Free releases what the share keeps to build its rows (a staged
// share's kept edges, a windowed share's last window); Windows may not
// be called after it. The rows of a share built whole stay.
func (s *Share) Free() {
	if s != nil && s.free != nil {
		s.free()
		s.free = nil
	}
	if s != nil && s.win != nil { // the window kept for a next sweep
		s.win.kept.release()
		s.win.kept = nil
	}
}

// ExternalID returns the external id of dense id v. A staged share
// (OpenStaged) holds no table of the ids: it reads them from the staging
// memory, which must still be open.
func (s *Share) ExternalID(v uint32) (uint64, error) {
	if s.ids != nil {
		return s.ids.external(v)
	}
	return s.Graph.ExternalID(v), nil
}

// DenseID returns the dense id of external id x, and whether x is a
// vertex (a staged share's, read as ExternalID's).
func (s *Share) DenseID(x uint64) (uint32, bool, error) {
	if s.ids != nil {
		return s.ids.dense(x)
	}
	v, ok := s.Graph.DenseID(x)
	return v, ok, nil
}

// ExternalIDs returns the external ids by dense id (nil: identity), every
// vertex's (a staged share's, read as ExternalID's).
func (s *Share) ExternalIDs() ([]uint64, error) {
	if s.ids != nil {
		return s.ids.table()
	}
	return s.Graph.ExternalIDs(), nil
}

// Symmetric reports whether the share needs no reverse adjacency besides
// its out-rows: the graph is undirected, or its in-edges are exactly its
// out-rows of [Lo, Hi) (destinations and weights), as for a directed
// input that lists every edge in both directions with the same weight
// (gapbs's symmetrised .bel files). It is false for a directed share
// without In. The whole graph is symmetric when every share is.
//
// When In was built, Symmetric compares it with the out-rows: the
// answer is exact. When In is Graph, OpenShareWith found the in-edges
// equal to the out-edges by fingerprint, which is wrong with probability
// about 2^-64 (see OpenShareWith), and Symmetric is true. A windowed
// share compares the rows of every window in its first complete
// Windows call, and is not symmetric before it.
func (s *Share) Symmetric() bool {
	g := s.Graph
	if !g.Directed {
		return true
	}
	if s.win != nil {
		return s.win.counted && s.win.sym
	}
	in := s.In
	if in == nil {
		return false
	}
	if in == g {
		return true
	}
	return SameRows(g, in, s.Lo, s.Hi)
}

// top is the vertex lo+i with the largest deg[i], the lowest on ties,
// and its degree.
func top(deg []uint64, lo uint32) (uint32, uint64) {
	var best int
	for i, d := range deg {
		if d > deg[best] {
			best = i
		}
	}
	if len(deg) == 0 {
		return lo, 0
	}
	return lo + uint32(best), deg[best]
}

// narrow is the degrees deg of the vertices from lo in 32 bits, as a
// share keeps them: a vertex with 2^32 edges or more is an error.
func narrow(spec string, deg []uint64, lo uint32) ([]uint32, error) {
	d := make([]uint32, len(deg))
	if err := narrowTo(spec, d, deg, lo, false); err != nil {
		return nil, err
	}
	return d, nil
}

// narrowTo puts the degrees deg of the vertices from lo into dst (added
// to what it holds, with add) in 32 bits, or returns the error of the
// first vertex with 2^32 edges or more.
func narrowTo(spec string, dst []uint32, deg []uint64, lo uint32, add bool) error {
	for i, x := range deg {
		if add {
			x += uint64(dst[i])
		}
		if x > math.MaxUint32 {
			return errors.Errorf("csr: %s: vertex %d (dense id) has %d edges; a share holds fewer than 2^32 a vertex", spec, lo+uint32(i), x)
		}
		dst[i] = uint32(x)
	}
	return nil
}

// SameRows reports whether g and in have the same rows [lo, hi):
// destinations, and weights or none.
func SameRows(g, in *Graph, lo, hi uint32) bool {
	for v := lo; v < hi; v++ {
		if !slices.Equal(g.Neighbors(v), in.Neighbors(v)) {
			return false
		}
	}
	if g.Weights == nil || in.Weights == nil {
		return (g.Weights == nil) == (in.Weights == nil)
	}
	return slices.Equal(g.Weights[g.Off(lo):g.Off(hi)], in.Weights[in.Off(lo):in.Off(hi)])
}

// ShareOptions say what OpenShareWith keeps besides a share's out-edges.
// The zero value keeps only those (OpenShare).
type ShareOptions struct {
	// In also keeps the in-edges of the share's vertices (Share.In) for
	// directed graphs; it is ignored for undirected ones.
	In bool
	// RowBytes, if positive, bounds the rows the share builds at once
	// (4 bytes per edge, 12 with weights, out- and in-rows together,
	// as the input counts them before parallel edges are dropped). A
	// share whose rows need more is windowed: OpenShareWith builds none
	// and Share.Windows builds them a window of vertices at a time,
	// each window in a pass over the input of its own.
	RowBytes int64
	// WindowBytes, if positive and below RowBytes, is what the windows of
	// a windowed share are cut at when each window's pass reads only its
	// own edges (a staged read's, when the CN keeps none of its own):
	// rows that fit the processor's cache take their edges from the
	// scatter and are sorted at the cache's speed, not memory's.
	// RowBytes still decides whether the share is windowed at all.
	// Windows that each pass over the whole input ignore it.
	WindowBytes int64
	// Progress, if set, is told how many bytes of its input this CN has
	// parsed, of how many, as OpenProgress's callback is (OpenStaged:
	// its byte range, on its first parse).
	Progress func(done, total int64)
	// Align is the granularity of the windows (default 1024): every
	// window starts at Lo plus a multiple of it, as the layout's loading
	// batches do (LayoutConfig.BatchVertices), so that a window holds
	// whole batches.
	Align uint32
	// StageBytes, if positive, bounds the edge records a staged read
	// (OpenStaged) holds in DM at once (6 bytes an edge with ids of up
	// to 27 bits, else 8, 16 with weights; twice with in-rows or
	// undirected): past it, the edges
	// meet their owners in rounds of that many bytes, the share is
	// windowed within them, and every CN routes each round anew in every
	// sweep of Share.Windows, all together.
	StageBytes int64
	// width, if positive, bounds the vertices of a window, and of a
	// share built whole: a staged read's 6-byte records address no more
	// (records.go).
	width uint32
}

// align is the windows' granularity: Align, or 1024.
func (so ShareOptions) align() uint32 {
	if so.Align == 0 {
		return 1024
	}
	return so.Align
}

// OpenShare reads or generates the graph named by spec like Open, but
// keeps only one part of it: after a first pass that counts every vertex's
// out-degree, part chooses the vertex range [lo, hi) to keep (the caller's
// partitioning, identical on every rank), and a second pass keeps the
// out-edges of those vertices (both directions of an undirected edge).
// Peak memory is O(|V|) plus the share's edges, not the whole graph's,
// or, with ShareOptions.RowBytes, plus one window's (Share.Windows).
// Text edge lists, which name vertices by arbitrary ids, take one more
// pass to collect the ids first. Self-loops and parallel edges follow
// Options as in Open; Meta's dropped counts are this share's.
//
// It is OpenShareWith with the zero ShareOptions.
func OpenShare(spec string, opts Options, part func(deg []uint64) (lo, hi uint32, err error)) (*Share, *Meta, error) {
	return OpenShareWith(spec, opts, ShareOptions{}, part)
}

// OpenShareWith is OpenShare keeping what so asks for as well.
//
// With so.In on a directed graph, the first pass counts in-degrees too.
// When some vertex of [lo, hi) has another in- than out-degree in the
// input (self-loops dropped by the policy, parallel edges counted), the
// share is not symmetric: the in-degrees size its in-rows, the second
// pass scatters every edge that ends in [lo, hi) into them, and they are
// sorted and de-duplicated like the out-rows, so peak memory is O(|V|)
// plus the share's out- and in-edges.
//
// When all those degrees agree, the share may be symmetric, and the
// second pass builds only the out-rows: it sums a 64-bit fingerprint of
// every in-edge v←u it sees (v in [lo, hi), u and the weight's bits,
// through two SplitMix64 rounds), and after it the same sum over the
// out-edges v→u (before de-duplication) is compared with it. If they
// agree, the in-edges are the out-edges and Share.In is the share's
// Graph itself. That costs a hash per in- and per out-edge (the latter
// in parallel) and no random access or memory besides the in-degrees
// kept meanwhile (8 bytes per vertex): about 0.1 s for a share of 16 M
// edges, where scattering and sorting its in-rows takes 0.9 s (2.4 s
// before the passes were batched). If the sums differ, a third pass over
// the input builds the in-rows as above; that happens only to a share
// whose degrees agree but whose edges do not (or whose parallel edges
// are listed more often in one direction than in the other: Symmetric
// then tells, exactly).
//
// The fingerprint compares multisets of edges (v, u, weight bits) by a
// sum of hashes that distinct edges never share: two different
// multisets have the same sum with probability about 2^-64, as for a
// random function (2^-63 if each edge that tells them apart is listed
// an even number of times more in one than in the other), so a share
// that is not symmetric is taken for one (In = Graph, lacking some of
// its in-edges) with that probability. A built In is never wrong.
//
// Meta's dropped counts stay those of the out-rows.
func OpenShareWith(spec string, opts Options, so ShareOptions, part func(deg []uint64) (lo, hi uint32, err error)) (*Share, *Meta, error) {
	return openShare(spec, opts, so, part, nil)
}

// openShare is OpenShareWith with a read configuration (tests cut the
// inputs' blocks anywhere).
func openShare(spec string, opts Options, so ShareOptions, part func(deg []uint64) (lo, hi uint32, err error), rc *readConfig) (*Share, *Meta, error) {
	o := opts
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	o.EnsureDefaults()
	pass, free, err := passes(spec, &o, rc)
	if err != nil {
		return nil, nil, err
	}
	defer free()
	// Pass 1: out- and in-degrees (the slices grow with the ids seen; the
	// readers check every id against the vertex count they declare).
	dc := &degreeCounter{dropLoops: o.SelfLoops == DropSelfLoops, loops: so.In}
	h, err := batches(pass, dc.add)
	if err != nil {
		return nil, nil, err
	}
	undirected := !h.directed || o.Undirected
	n := uint64(h.n)
	if m := uint64(max(len(dc.deg), len(dc.in))); m > n {
		return nil, nil, errors.Errorf("csr: %s: an edge names vertex %d, but the graph has %d", spec, m-1, n)
	}
	wantIn := so.In && !undirected
	deg, in := dc.shape(n, undirected, wantIn)
	lo, hi, err := part(deg)
	if err != nil {
		return nil, nil, err
	}
	if lo > hi || uint64(hi) > n {
		return nil, nil, errors.Errorf("csr: share [%d, %d) of a graph of %d vertices", lo, hi, n)
	}
	t, _ := top(deg, 0)
	// The share keeps its own vertices' degrees only, in 32 bits.
	d32, err := narrow(spec, deg[lo:hi], lo)
	var in32 []uint32
	if err == nil && in != nil {
		in32, err = narrow(spec, in[lo:hi], lo)
	}
	if err != nil {
		return nil, nil, err
	}
	so.WindowBytes = 0 // every window is a pass over the input
	wins := windows(d32, in32, lo, hi, rowsWeighted(h.weighted, &o), so)
	return finishShare(spec, &o, so, pass, h, d32, in32, wins, lo, hi, t, undirected, wantIn)
}

// rowsWeighted says whether a share's rows carry weights: an input's
// (weighted) unless Options.Unweighted drops them, or the synthetic ones
// finishRows adds (Options.Weighted).
func rowsWeighted(weighted bool, o *Options) bool {
	return (weighted && !o.Unweighted) || o.Weighted
}

// degreeCounter counts the degrees of a pass's edges: out- and
// in-degrees, and with loops the kept self-loops apart (whether the
// graph is directed may be known only after the pass, and they belong
// to a directed graph's in-degrees, not to an undirected one's second
// direction). The slices grow with the ids seen.
type degreeCounter struct {
	deg, in, loopDeg []uint64
	dropped          uint64 // self-loops the policy drops
	dropLoops, loops bool
}

func growTo(a []uint64, v uint64) []uint64 {
	if v >= uint64(len(a)) {
		a = append(a, make([]uint64, int(v)+1-len(a))...)
	}
	return a
}

// add counts a batch of edges.
func (c *degreeCounter) add(es []edgeRec) {
	// Grown once per batch, the slices stay in registers in the loop
	// (assigning them for every edge would store them, and bound how
	// many cache misses the loop gets in flight).
	var ms, md uint64
	for _, e := range es {
		ms, md = max(ms, e.s), max(md, e.d)
	}
	c.deg, c.in = growTo(c.deg, ms), growTo(c.in, md)
	dg, ig := c.deg, c.in
	for _, e := range es {
		s, d := e.s, e.d
		if s != d {
			dg[s]++
			ig[d]++
		} else if !c.dropLoops {
			dg[s]++
			if c.loops {
				c.loopDeg = growTo(c.loopDeg, s)
				c.loopDeg[s]++
			}
		} else {
			c.dropped++
		}
	}
}

// shape turns the counts into the partition's degrees of n vertices (an
// undirected graph's are the sum of the out- and in-degrees, self-loops
// counted once) and, with wantIn, the in-degrees of n vertices
// (self-loops included).
func (c *degreeCounter) shape(n uint64, undirected, wantIn bool) (deg, in []uint64) {
	deg, in = c.deg, c.in
	deg = append(deg, make([]uint64, n-uint64(len(deg)))...)
	if undirected {
		for v, x := range in {
			deg[v] += x
		}
	} else if wantIn {
		for v, x := range c.loopDeg { // len(loopDeg) ≤ len(in): a loop's d is counted in in
			in[v] += x
		}
	}
	c.deg, c.in, c.loopDeg = nil, nil, nil
	if !wantIn {
		return deg, nil
	}
	return deg, append(in, make([]uint64, n-uint64(len(in)))...)
}

// finishShare builds the share [lo, hi) of the graph whose passes pass
// makes, with the degrees of the first one: deg (and in, nil unless
// wantIn) are those of [lo, hi), t the vertex Share.Top (h is what the
// first pass said), wins its windows (windows; nil: it is built whole).
func finishShare(spec string, o *Options, so ShareOptions, pass func(snk sink) (*header, error), h *header, deg, in []uint32, wins []uint32, lo, hi, t uint32, undirected, wantIn bool) (*Share, *Meta, error) {
	dropLoops := o.SelfLoops == DropSelfLoops
	if lo > hi || hi > h.n || uint64(len(deg)) != uint64(hi-lo) || (wantIn && uint64(len(in)) != uint64(hi-lo)) {
		return nil, nil, errors.Errorf("csr: share [%d, %d) of a graph of %d vertices", lo, hi, h.n)
	}
	weighted := h.weighted && !o.Unweighted
	v := &Graph{N: h.n, Lo: lo, Offsets: []uint64{0}, IDs: h.ids, idm: h.m, Directed: !undirected} // the vertices, no rows
	if wins != nil {
		// The rows do not fit ShareOptions.RowBytes: Share.Windows
		// builds them a window at a time, each in a pass of its own.
		// The kept edges cannot fit either (they hold every edge of
		// the graph at 8 bytes or more, the rows this share's at 4 or
		// more): later passes parse the input (free has run).
		meta := h.meta
		meta.Directed, meta.Weighted = !undirected, rowsWeighted(h.weighted, o)
		sh := &Share{Graph: v, Lo: lo, Hi: hi, Degrees: deg, Top: t, win: &windowed{
			bounds: wins, pass: pass, spec: spec, o: *o, in: in, wantIn: wantIn,
			undirected: undirected, dropLoops: dropLoops, weighted: weighted, meta: meta,
		}}
		return sh, meta, nil
	}
	// Pass 2: the share's edges (and with In the edges into it, each
	// self-loop in both rows of its vertex), scattered straight into
	// their rows (sized by the degrees of pass 1), then sorted and
	// de-duplicated per row as the builder does: the in-row of v gets
	// every copy of u→v that the out-row of u gets, so it keeps the same
	// copies, and the same weight. A share whose in-degrees are its
	// out-degrees sums its in-edges' fingerprints instead (inSum), and
	// keeps the in-degrees until the sum is compared with its out-rows'.
	var inRows *shareRows
	fingerprint := wantIn && slices.Equal(deg, in)
	if wantIn && !fingerprint {
		inRows = newShareRows(in, lo, hi, weighted, nil)
	}
	out := newShareRows(deg, lo, hi, weighted, nil)
	rp := rowPass{lo: lo, hi: hi, undirected: undirected, dropLoops: dropLoops, fingerprint: fingerprint, weighted: weighted, out: out, in: inRows}
	if _, err := rp.run(pass); err != nil {
		return nil, nil, err
	}
	loops, inSum := rp.loops, rp.inSum
	if err := changed(spec, out, inRows); err != nil {
		return nil, nil, err
	}
	symmetric := fingerprint && inSum == outPrint(out, weighted, o.Workers)
	if fingerprint && !symmetric {
		// Pass 3: the in-rows after all.
		rows := newShareRows(in, lo, hi, weighted, nil)
		p3 := rowPass{lo: lo, hi: hi, dropLoops: dropLoops, in: rows}
		if _, err := p3.run(pass); err != nil {
			return nil, nil, err
		}
		if err := changed(spec, rows); err != nil {
			return nil, nil, err
		}
		inRows = rows
	}
	g, dups := out.graph(v, !undirected, o)
	sh := &Share{Graph: g, Lo: lo, Hi: hi, Degrees: deg, Top: t}
	if symmetric {
		sh.In = g
	} else if inRows != nil {
		sh.In, _ = inRows.graph(v, true, o)
	}
	meta := h.meta
	meta.Directed, meta.Weighted = g.Directed, g.Weights != nil
	meta.DroppedSelfLoops, meta.DroppedDuplicates = loops, dups
	return sh, meta, nil
}

// rowPass is a pass that scatters the edges of the vertices [lo, hi)
// into their rows: the out-edges into out (both directions of an
// undirected edge; nil: none), the in-edges of a directed graph into in
// (each self-loop in both rows of its vertex) or, with fingerprint, into
// the sum inSum of their edgePrints. It counts the dropped self-loops of
// [lo, hi) in loops.
type rowPass struct {
	lo, hi                                       uint32
	undirected, dropLoops, fingerprint, weighted bool
	out, in                                      *shareRows
	loops, inSum                                 uint64
}

func (r *rowPass) run(pass func(snk sink) (*header, error)) (*header, error) {
	lo, hi := uint64(r.lo), uint64(r.hi)
	out, rows := r.out, r.in
	h, err := batches(pass, func(es []edgeRec) {
		var sum uint64
		for _, e := range es {
			s, d, w := e.s, e.d, e.w
			if s == d && r.dropLoops {
				if s >= lo && s < hi {
					r.loops++
				}
				continue
			}
			if out != nil && s >= lo && s < hi {
				out.add(s, d, w)
			}
			if d < lo || d >= hi {
				continue
			}
			switch {
			case r.undirected:
				if s != d && out != nil { // a self-loop is stored once
					out.add(d, s, w)
				}
			case rows != nil:
				rows.add(d, s, w)
			case r.fingerprint:
				sum += edgePrint(d, s, w, r.weighted)
			}
		}
		r.inSum += sum
	})
	for _, x := range []*shareRows{out, rows} {
		if x != nil {
			x.flush()
		}
	}
	return h, err
}

// outPrint is the fingerprint of the out-rows r of a share, not yet
// de-duplicated: the sum (mod 2^64) of edgePrint over their edges v→u,
// which does not depend on their order. The second pass of
// OpenShareWith sums edgePrint over the share's in-edges v←u: the sums
// are equal when the multiset of in-edges (v, u, weight) is that of the
// out-edges, that is when every vertex's in-edges are its out-edges,
// and otherwise only if the fingerprints collide.
func outPrint(r *shareRows, weighted bool, workers int) uint64 {
	var sum atomic.Uint64
	runRanges(workers, splitByEdges(r.off, workers*4), func(a, b uint32) {
		var x uint64
		for v := a; v < b; v++ {
			for k := r.off[v]; k < r.off[v+1]; k++ {
				w := 0.0
				if r.ws != nil {
					w = r.ws[k]
				}
				x += edgePrint(r.lo+uint64(v), uint64(r.dst[k]), w, weighted)
			}
		}
		sum.Add(x)
	})
	return sum.Load()
}

// edgePrint is the fingerprint of an edge between v (in the share) and u
// of weight w (ignored when unweighted), for outPrint's sum: two
// SplitMix64 rounds, the first over (v, u), the second over its output
// with the weight's bits mixed in, so distinct triples never collide
// and their sums collide as for a random function.
func edgePrint(v, u uint64, w float64, weighted bool) uint64 {
	var b uint64
	if weighted {
		b = math.Float64bits(w)
	}
	return splitmix64(splitmix64(v<<32|u) ^ b)
}

// shareRows are the rows of the vertices [lo, hi) that the second pass of
// OpenShareWith fills, laid out by the first pass's counts: off[i] is
// where vertex lo+i's row starts.
type shareRows struct {
	lo  uint64
	off []uint64 // hi-lo+1 offsets
	pos []uint64 // the next free slot of each row
	dst []uint32
	ws  []float64 // nil: unweighted
	buf *scatter  // nil: edges are added at once (scatter.go)
}

// newShareRows lays out the rows [lo, hi), row lo+i holding count[i]
// edges, their arrays from mem (nil: the Go heap).
func newShareRows(count []uint32, lo, hi uint32, weighted bool, mem *hugemem.Arena) *shareRows {
	words, ids, floats := func(n int) []uint64 { return make([]uint64, n) }, func(n int) []uint32 { return make([]uint32, n) }, func(n int) []float64 { return make([]float64, n) }
	if mem != nil {
		words, ids, floats = mem.Words, mem.Uint32s, mem.Float64s
	}
	n := uint64(hi - lo)
	off := words(int(n + 1))
	for i, c := range count[:n] {
		off[i+1] = off[i] + uint64(c)
	}
	m := off[n]
	r := &shareRows{lo: uint64(lo), off: off, pos: words(int(n)), dst: ids(int(m))}
	copy(r.pos, off[:n])
	if weighted {
		r.ws = floats(int(m))
	}
	r.buf = newScatter(uint64(hi-lo), m, weighted)
	return r
}

// graph is the rows, sorted and de-duplicated as o says (finishRows),
// as a graph like v (its vertices), and the duplicates dropped.
func (r *shareRows) graph(v *Graph, directed bool, o *Options) (*Graph, uint64) {
	off, dst, ws, dups := finishRows(r.off, r.dst, r.ws, uint32(r.lo), o)
	return &Graph{N: v.N, Lo: uint32(r.lo), Offsets: off, Dst: dst, Weights: ws, IDs: v.IDs, idm: v.idm, Directed: directed}, dups
}

// add puts edge s→d (weight w) in row s, which must be in [lo, hi). A
// row that gets more edges than counted spills into the next one (past
// the last, the edge is dropped): only the count matters then, for
// changed, as the rows are thrown away. Not checking the row's end on
// every edge saves loading its offset, a cache miss for in-rows.
func (r *shareRows) add(s, d uint64, w float64) {
	if r.buf == nil {
		r.put(s-r.lo, d, w)
	} else if r.buf.put(s-r.lo, d, w) {
		r.flush()
	}
}

// addIf adds the unweighted edge lo+i→d if ok; with a buffer, without a
// branch on ok (scatter.putIf).
func (r *shareRows) addIf(ok bool, i, d uint32) {
	if r.buf == nil {
		if ok {
			r.put(uint64(i), uint64(d), 0)
		}
	} else if r.buf.putIf(ok, i, d) {
		r.flush()
	}
}

// flush adds the buffered edges, a bucket of rows at a time: every pass
// that adds edges flushes them at its end.
func (r *shareRows) flush() {
	x := r.buf
	if x == nil {
		return
	}
	n := x.sorted()
	for j, i := range x.srow[:n] {
		w := 0.0
		if x.ws != nil {
			w = x.sws[j]
		}
		r.put(uint64(i), uint64(x.sdst[j]), w)
	}
}

// put puts edge lo+i→d (weight w) in its row.
func (r *shareRows) put(i, d uint64, w float64) {
	k := r.pos[i]
	r.pos[i] = k + 1
	if k >= uint64(len(r.dst)) {
		return
	}
	r.dst[k] = uint32(d)
	if r.ws != nil {
		r.ws[k] = w
	}
}

// changed returns an error naming a vertex whose row in rows did not
// receive exactly the edges the first pass counted (the input changed
// between the passes), if any. Nil rows have none.
func changed(spec string, rows ...*shareRows) error {
	for _, r := range rows {
		if r == nil {
			continue
		}
		for i, p := range r.pos {
			if p != r.off[i+1] {
				return errors.Errorf("csr: %s changed while it was read (vertex %d's edges differ between two passes)", spec, r.lo+uint64(i))
			}
		}
	}
	return nil
}

// edgeRec is an edge of a pass: endpoints and weight.
type edgeRec struct {
	s, d uint64
	w    float64
}

// batchEdges is how many edges batches hands over at a time: a few
// hundred, so that a batch stays in the L1 cache.
const batchEdges = 512

// batches makes a pass that hands the edges to f in batches, in the
// order the pass sends them, the last one when the pass ends (not if it
// fails). f's loop over
// a batch counts or scatters edges into arrays of O(|V|) entries, a cache
// miss per edge on large graphs; a tight loop without the reader's work
// in between gets many of them in flight at once.
func batches(pass func(snk sink) (*header, error), f func(es []edgeRec)) (*header, error) {
	b := &batcher{buf: make([]edgeRec, batchEdges), f: f}
	h, err := pass(b)
	if err == nil && b.n > 0 {
		f(b.buf[:b.n])
	}
	return h, err
}

// batcher is the sink of batches.
type batcher struct {
	buf []edgeRec
	n   int // edges in buf
	f   func(es []edgeRec)
}

func (b *batcher) edge(s, d uint64, w float64) {
	b.buf[b.n] = edgeRec{s, d, w}
	if b.n++; b.n == len(b.buf) {
		b.f(b.buf)
		b.n = 0
	}
}

// edges hands es on in batches after the edges buffered before them;
// whole batches of es go to f without a copy.
func (b *batcher) edges(es []edgeRec) {
	for b.n > 0 && len(es) > 0 {
		k := copy(b.buf[b.n:], es)
		es = es[k:]
		if b.n += k; b.n == len(b.buf) {
			b.f(b.buf)
			b.n = 0
		}
	}
	if len(es) == 0 {
		return
	}
	for len(es) >= len(b.buf) {
		b.f(es[:len(b.buf)])
		es = es[len(b.buf):]
	}
	b.n = copy(b.buf, es)
}

// passes returns a function that makes one pass over the input named by
// spec, sending its edges (dense ids) to snk, and one that releases what
// the passes kept (call it after the last pass).
func passes(spec string, o *Options, rc *readConfig) (func(snk sink) (*header, error), func(), error) {
	if IsGeneratorSpec(spec) {
		gs, err := o.parseGen(spec)
		if err != nil {
			return nil, nil, err
		}
		return func(snk sink) (*header, error) {
			h := &header{n: uint32(gs.N), directed: true,
				meta: &Meta{Name: spec, Path: spec, Format: gs.Kind, DeclaredVertices: gs.N, InputEdges: gs.M}}
			// Blocks are generated in parallel and fed to the sink one at
			// a time, in any order: the passes count degrees and fill rows
			// that the builder sorts, so the order does not show.
			var mu sync.Mutex
			gs.eachBlock(o.Seed, o.Workers, 0, gs.blocks(), func(_ uint64, src, dst []uint32) {
				mu.Lock()
				defer mu.Unlock()
				for i := range src {
					snk.edge(uint64(src[i]), uint64(dst[i]), 1)
				}
			})
			return h, nil
		}, nop, nil
	}
	path, format, err := resolve(spec, o)
	if err != nil {
		return nil, nil, err
	}
	switch format {
	case FormatGraphalytics:
		// The first pass keeps the edges it reads (dense already) for the
		// later ones, as the text edge lists' do.
		kept := newKeptEdges(o.keepBytes())
		var first *header
		return func(snk sink) (*header, error) {
			if first != nil && kept.ok() {
				kept.send(snk)
				return first, nil
			}
			ks := &keepingSink{snk: snk, kept: kept}
			if first != nil {
				ks.kept = nil // the edges did not fit: nothing more to keep
			}
			el, meta, err := readGraphalytics(path, o, ks, rc)
			if err != nil {
				return nil, err
			}
			ks.flush()
			h := &header{n: el.N, ids: el.IDs, directed: el.Directed, weighted: el.Weights != nil, meta: meta}
			if first == nil {
				first = h
			}
			return h, nil
		}, kept.free, nil
	case FormatMTX, FormatBinary:
		return func(snk sink) (*header, error) {
			f, err := openFile(path, nil)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			meta := &Meta{Name: datasetName(path), Path: path, Format: format}
			var el *EdgeList
			if format == FormatMTX {
				el, err = readMTX(f, path, o, meta, snk, rc)
			} else {
				el, err = readBinary(f, path, o, meta, snk)
			}
			if err != nil {
				return nil, err
			}
			return &header{n: el.N, ids: el.IDs, directed: el.Directed, weighted: el.Weights != nil, meta: meta}, nil
		}, nop, nil
	case FormatSNAP, FormatEL, FormatWEL:
		return textPasses(path, format, o, rc)
	}
	return nil, nil, errors.Errorf("csr: %s: unknown format %q", path, format)
}

func nop() {}

// textPasses reads a text edge list once to collect its vertex ids (sorted,
// distinct), then maps every later pass's ids to dense ones. The first
// pass keeps the parsed edges while they fit Options.KeepBytes
// (keptEdges), and the later passes then read those instead of the text.
func textPasses(path, format string, o *Options, rc *readConfig) (func(snk sink) (*header, error), func(), error) {
	weighted := format == FormatWEL
	lines := edgeListLines(weighted, o, rc)
	scan := func(mode int, m *idMap, use func(p *parsedEdges) uint64) (uint64, error) {
		f, err := openFile(path, nil)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		var count uint64
		_, err = parseText(f, path, o.Workers, rc, edgeParser(lines, mode, m), func(p parsedEdges, line0 int64) error {
			count += use(&p)
			return p.err(path, line0)
		})
		return count, err
	}
	ids := &idSet{workers: o.Workers}
	kept := newKeptEdges(o.keepBytes())
	count, err := scan(reuseBlocks, nil, func(p *parsedEdges) uint64 {
		b := p.blk
		ids.addBlock(b)
		kept.add(b)
		return uint64(b.len())
	})
	if err != nil {
		kept.free()
		return nil, nil, err
	}
	m, err := ids.idMap(path)
	if err != nil {
		kept.free()
		return nil, nil, err
	}
	if kept.ok() {
		kept.densify(m, o.Workers)
	}
	return func(snk sink) (*header, error) {
		meta := &Meta{Name: datasetName(path), Path: path, Format: format, InputEdges: count}
		h := &header{n: m.n, ids: m.ids, m: m, directed: true, weighted: weighted, meta: meta}
		if kept.ok() {
			kept.send(snk)
			return h, nil
		}
		_, err := scan(denseEdges, m, func(p *parsedEdges) uint64 {
			sendEdges(snk, p.recs)
			return 0
		})
		return h, err
	}, kept.free, nil
}

// datasetName is a file's name without directories and extensions.
func datasetName(path string) string {
	name := filepath.Base(strings.TrimSuffix(path, ".gz"))
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return name
}
