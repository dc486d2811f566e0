package csr

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pkg/errors"
)

// sink receives a reader's edges in input order: dense ids for most
// formats, external ids for text edge lists (which have no vertex table).
type sink interface {
	edge(s, d uint64, w float64)
}

// sinkFunc adapts a function to a sink.
type sinkFunc func(s, d uint64, w float64)

func (f sinkFunc) edge(s, d uint64, w float64) { f(s, d, w) }

// header is what a pass over an input says of the graph besides its edges.
type header struct {
	n        uint32
	ids      []uint64 // nil: identity
	directed bool
	weighted bool
	meta     *Meta
}

// Share is the part of a graph one compute node holds: the out-edges of
// the vertices [Lo, Hi), on the dense ids of the whole graph.
type Share struct {
	// Graph has every vertex of the graph (N, IDs) but edges only for
	// [Lo, Hi): every other vertex has out-degree 0 in it.
	Graph  *Graph
	Lo, Hi uint32
	// Degrees are the out-degrees of every vertex of the whole graph as the
	// input lists them, self-loops dropped by the policy but parallel edges
	// counted (the builder drops those per vertex, in its share): what the
	// partition saw.
	Degrees []uint64
}

// OpenShare reads or generates the graph named by spec like Open, but
// keeps only one part of it: after a first pass that counts every vertex's
// out-degree, part chooses the vertex range [lo, hi) to keep (the caller's
// partitioning, identical on every rank), and a second pass keeps the
// out-edges of those vertices (both directions of an undirected edge).
// Peak memory is O(|V|) plus the share's edges, not the whole graph's.
// Text edge lists, which name vertices by arbitrary ids, take one more
// pass to collect the ids first. Self-loops and parallel edges follow
// Options as in Open; Meta's dropped counts are this share's.
func OpenShare(spec string, opts Options, part func(deg []uint64) (lo, hi uint32, err error)) (*Share, *Meta, error) {
	o := opts
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	o.EnsureDefaults()
	pass, err := passes(spec, &o)
	if err != nil {
		return nil, nil, err
	}
	// Pass 1: out- and in-degrees (the slices grow with the ids seen; the
	// readers check every id against the vertex count they declare). An
	// undirected graph's degree is their sum; self-loops count once.
	var deg, in []uint64
	dropLoops := o.SelfLoops == DropSelfLoops
	grow := func(a []uint64, v uint64) []uint64 {
		if v >= uint64(len(a)) {
			a = append(a, make([]uint64, int(v)+1-len(a))...)
		}
		return a
	}
	h, err := pass(sinkFunc(func(s, d uint64, _ float64) {
		deg, in = grow(deg, s), grow(in, d)
		if s != d {
			deg[s]++
			in[d]++
		} else if !dropLoops {
			deg[s]++
		}
	}))
	if err != nil {
		return nil, nil, err
	}
	undirected := !h.directed || o.Undirected
	n := uint64(h.n)
	if m := uint64(max(len(deg), len(in))); m > n {
		return nil, nil, errors.Errorf("csr: %s: an edge names vertex %d, but the graph has %d", spec, m-1, n)
	}
	deg = append(deg, make([]uint64, n-uint64(len(deg)))...)
	if undirected {
		for v, x := range in {
			deg[v] += x
		}
	}
	in = nil
	lo, hi, err := part(deg)
	if err != nil {
		return nil, nil, err
	}
	if lo > hi || uint64(hi) > n {
		return nil, nil, errors.Errorf("csr: share [%d, %d) of a graph of %d vertices", lo, hi, n)
	}
	// Pass 2: the share's edges, scattered straight into its rows (sized
	// by the degrees of pass 1), then sorted and de-duplicated per row as
	// the builder does.
	off := make([]uint64, n+1)
	for v := uint64(lo); v < uint64(hi); v++ {
		off[v+1] = off[v] + deg[v]
	}
	for v := uint64(hi); v < n; v++ {
		off[v+1] = off[v]
	}
	pos := slices.Clone(off[lo:hi])
	total := off[n]
	dst := make([]uint32, total)
	var ws []float64
	if h.weighted && !o.Unweighted {
		ws = make([]float64, total)
	}
	var loops uint64
	changed := false
	add := func(s, d uint64, w float64) {
		k := pos[s-uint64(lo)]
		if k == off[s+1] { // more edges than the first pass counted
			changed = true
			return
		}
		pos[s-uint64(lo)]++
		dst[k] = uint32(d)
		if ws != nil {
			ws[k] = w
		}
	}
	mine := func(v uint64) bool { return v >= uint64(lo) && v < uint64(hi) }
	h, err = pass(sinkFunc(func(s, d uint64, w float64) {
		if s == d {
			if mine(s) {
				if dropLoops {
					loops++
				} else {
					add(s, d, w)
				}
			}
			return
		}
		if mine(s) {
			add(s, d, w)
		}
		if undirected && mine(d) {
			add(d, s, w)
		}
	}))
	if err != nil {
		return nil, nil, err
	}
	for i, p := range pos {
		if changed || p != off[uint64(lo)+uint64(i)+1] {
			return nil, nil, errors.Errorf("csr: %s changed while it was read (vertex %d's edges differ between two passes)", spec, uint64(lo)+uint64(i))
		}
	}
	off, dst, ws, dups := finishRows(off, dst, ws, &o)
	g := &Graph{N: h.n, Offsets: off, Dst: dst, Weights: ws, IDs: h.ids, Directed: !undirected}
	meta := h.meta
	meta.Directed, meta.Weighted = g.Directed, g.Weights != nil
	meta.DroppedSelfLoops, meta.DroppedDuplicates = loops, dups
	return &Share{Graph: g, Lo: lo, Hi: hi, Degrees: deg}, meta, nil
}

// passes returns a function that makes one pass over the input named by
// spec, sending its edges (dense ids) to snk.
func passes(spec string, o *Options) (func(snk sink) (*header, error), error) {
	if IsGeneratorSpec(spec) {
		gs, err := ParseGenSpec(spec)
		if err != nil {
			return nil, err
		}
		return func(snk sink) (*header, error) {
			h := &header{n: uint32(gs.N), directed: true,
				meta: &Meta{Name: spec, Path: spec, Format: gs.Kind, DeclaredVertices: gs.N, InputEdges: gs.M}}
			// Blocks are generated in parallel and fed to the sink one at
			// a time, in any order: the passes count degrees and fill rows
			// that the builder sorts, so the order does not show.
			var mu sync.Mutex
			gs.eachBlock(o.Seed, o.Workers, func(_ uint64, src, dst []uint32) {
				mu.Lock()
				defer mu.Unlock()
				for i := range src {
					snk.edge(uint64(src[i]), uint64(dst[i]), 1)
				}
			})
			return h, nil
		}, nil
	}
	path, format, err := resolve(spec, o)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatGraphalytics:
		return func(snk sink) (*header, error) {
			el, meta, err := readGraphalytics(path, o, snk)
			if err != nil {
				return nil, err
			}
			return &header{n: el.N, ids: el.IDs, directed: el.Directed, weighted: el.Weights != nil, meta: meta}, nil
		}, nil
	case FormatMTX, FormatBinary:
		return func(snk sink) (*header, error) {
			f, err := openFile(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			meta := &Meta{Name: datasetName(path), Path: path, Format: format}
			var el *EdgeList
			if format == FormatMTX {
				el, err = readMTX(f, path, o, meta, snk)
			} else {
				el, err = readBinary(f, path, o, meta, snk)
			}
			if err != nil {
				return nil, err
			}
			return &header{n: el.N, ids: el.IDs, directed: el.Directed, weighted: el.Weights != nil, meta: meta}, nil
		}, nil
	case FormatSNAP, FormatEL, FormatWEL:
		return textPasses(path, format, o)
	}
	return nil, errors.Errorf("csr: %s: unknown format %q", path, format)
}

// textPasses reads a text edge list once to collect its vertex ids (sorted,
// distinct), then maps every later pass's ids to dense ones.
func textPasses(path, format string, o *Options) (func(snk sink) (*header, error), error) {
	weighted := format == FormatWEL
	scan := func(snk sink) (uint64, error) {
		f, err := openFile(path)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		var count uint64
		_, _, _, err = readEdgeText(f, path, weighted, o, sinkFunc(func(s, d uint64, w float64) {
			count++
			snk.edge(s, d, w)
		}))
		return count, err
	}
	// The distinct ids, compacted whenever the buffer doubles.
	var ids []uint64
	distinct := 0
	compact := func() {
		parallelSort(ids, o.Workers)
		ids = slices.Compact(ids)
		distinct = len(ids)
	}
	count, err := scan(sinkFunc(func(s, d uint64, _ float64) {
		ids = append(ids, s, d)
		if len(ids) >= 2*distinct+1<<20 {
			compact()
		}
	}))
	if err != nil {
		return nil, err
	}
	compact()
	if uint64(len(ids)) > MaxVertices {
		return nil, fileErr(path, "more than %d vertices (%d distinct ids); dense ids are 32-bit", uint64(MaxVertices), len(ids))
	}
	ids = slices.Clip(ids)
	n := uint32(len(ids))
	identity := n == 0 || ids[n-1] == uint64(n-1)
	if identity {
		ids = nil
	}
	dense := func(x uint64) uint64 {
		if identity {
			return x
		}
		i, _ := slices.BinarySearch(ids, x)
		return uint64(i)
	}
	return func(snk sink) (*header, error) {
		meta := &Meta{Name: datasetName(path), Path: path, Format: format, InputEdges: count}
		h := &header{n: n, ids: ids, directed: true, weighted: weighted, meta: meta}
		_, err := scan(sinkFunc(func(s, d uint64, w float64) { snk.edge(dense(s), dense(d), w) }))
		return h, err
	}, nil
}

// datasetName is a file's name without directories and extensions.
func datasetName(path string) string {
	name := filepath.Base(strings.TrimSuffix(path, ".gz"))
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return name
}
