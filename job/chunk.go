package job

import (
	"fmt"
	"math"
	"slices"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/hugemem"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// MinRowBytes is the least Config.RowBytes the command line sets
// (--load-mem 0 included): a window costs a pass over the input, two
// when the job measures its rows before the load (fromDegrees), so
// tiny windows would take a pass for every few batches.
const MinRowBytes = 1 << 20

// WindowBytes is the size the command line cuts a staged read's windows
// at once its share is windowed (Config.WindowBytes): a window reads
// only its own records, so small windows cost no pass more, and rows
// about the size of a processor's last-level cache (32 MiB on this
// project's EPYC test machine) are built a fifth faster than windows
// of --load-mem's 512 MiB (docs/results.md, stop 59).
const WindowBytes = 32 << 20

// chunkFacts is what a CN learns of its chunk's rows before it lays
// them out: one sweep of the share's windows (Share.Windows), which for
// a share built whole is a look at the rows it holds.
type chunkFacts struct {
	edges   uint64   // the chunk's out-edges
	degrees []uint32 // out-degree of each vertex of the chunk
	// out and in are the chunk's sizes in the layouts of the out-rows
	// and of the in-rows (none when the share has no in-rows), by the
	// code the layouts store weights in: measured for every code up to
	// weights (the graph's code, which the CNs agree on, is one of them).
	out, in  [len(dmstore.WeightCodes)]dmstore.ChunkSizes
	weighted bool
	// weights is the narrowest code that holds the chunk's weights
	// (dmstore.NarrowestWeights; WeightFloat32 for an unweighted graph).
	weights dmstore.WeightCode
	// rooms says the sizes are rooms, planned from the share's degrees
	// (roomFacts): edges is then a bound, and the load fills degrees.
	rooms bool
	// loaded is what the load wrote (loadShare).
	loaded loadedFacts
}

// loadedFacts is what a CN's load found of its chunk: its out-edges, and
// its vertices whose out-rows and in-rows it stored in place or with an
// overflow table.
type loadedFacts struct {
	edges   uint64
	out, in struct{ inPlace, overflow uint64 }
}

// layoutConfigs are the configurations of the out-rows' layout and of
// the in-rows' (without the reserve, which planLayouts adds).
func layoutConfigs(w *spmd.World, cfg *Config, chunks []uint32) (out, in dmstore.LayoutConfig) {
	out = cfg.Layout
	out.NumMN, out.Bounds, out.AttrBytes = cfg.numMN(w), chunks, rank.AttrBytes()
	out.Naive, out.Packed = cfg.needs.Plain, cfg.Packed && !cfg.needs.Plain
	in = out
	in.AttrBytes, in.Naive, in.Packed = nil, false, cfg.Packed
	return out, in
}

// eachWindow is sh.Windows with every window's weights rounded as the
// layout stores them (roundWeights) before f sees them: a windowed
// share builds its rows anew in every sweep (rounding a share built
// whole, or a kept window, again changes nothing).
func eachWindow(sh *csr.Share, f func(g, in *csr.Graph, lo, hi uint32) error) error {
	return sh.Windows(func(g, in *csr.Graph, lo, hi uint32) error {
		roundWeights(g)
		if in != g {
			roundWeights(in)
		}
		return f(g, in, lo, hi)
	})
}

// measure sweeps CN k's share: edges, degrees (in mem, which the caller
// frees once it is done with them: they are the engine's through the
// run, off the collected heap), layout sizes, and the check of the
// algorithm's weights.
func measure(w *spmd.World, cfg *Config, alg algo.Algorithm, sh *csr.Share, chunks []uint32, mem *hugemem.Arena) (chunkFacts, error) {
	k := w.Index
	lo, hi := chunks[k], chunks[k+1]
	ocfg, icfg := layoutConfigs(w, cfg, chunks)
	f := chunkFacts{degrees: mem.Uint32s(int(hi - lo)), weights: dmstore.WeightUint8}
	err := eachWindow(sh, func(g, in *csr.Graph, a, b uint32) error {
		f.weighted = g.Weights != nil
		if f.weighted {
			f.weights = windowWeights(f.weights, g, a, b)
			if in != nil && in != g {
				f.weights = windowWeights(f.weights, in, a, b)
			}
		}
		if alg.NonNegativeWeights {
			if err := nonNegative(g, a, b, alg.Name, cfg.Graph); err != nil {
				return err
			}
		}
		for v := a; v < b; v++ {
			d := g.Degree(v)
			f.degrees[v-lo] = uint32(d)
			f.edges += d
		}
		// The sizes for every code the graph may take: the CNs agree on
		// the code only once each has seen all its weights (an unweighted
		// layout has one size, whatever the code).
		last := f.weights
		if !f.weighted {
			last = dmstore.WeightFloat32
		}
		for c := dmstore.WeightFloat32; c <= last; c++ {
			ocfg.Weights, icfg.Weights = c, c
			s, err := dmstore.SizeRange(g, ocfg, k, a, b)
			if err != nil {
				return err
			}
			f.out[c].Add(s)
			if in != nil && in != g {
				if s, err = dmstore.SizeRange(in, icfg, k, a, b); err != nil {
					return err
				}
				f.in[c].Add(s)
			}
		}
		return nil
	})
	if !f.weighted {
		f.weights = dmstore.WeightFloat32
	}
	return f, err
}

// fromDegrees reports whether a CN lays its chunk out from its share's
// degrees (roomFacts) rather than from its rows (measure): a windowed
// share, whose measuring sweep would build every window once more than
// the load does, of unweighted rows, in a layout of unpacked lists
// addressed by their entries (not the baselines' plain CSR), for a job
// that computes (a pool's load reports the degrees before it lays
// out). A share with in-rows qualifies when its degrees show it is not
// symmetric (a vertex with more in- than out-edges, or fewer): the
// measuring sweep would find no more, where a symmetric graph needs no
// in-layout. The rooms cost DM the parallel edges and self-loops the
// rows drop (1.3% of the lists at kron:26).
func fromDegrees(cfg *Config, sh *csr.Share) bool {
	if !sh.Windowed() || sh.Weighted() || cfg.Packed || cfg.needs.Plain || cfg.LoadOnly {
		return false
	}
	in := sh.InDegrees()
	return in == nil || !slices.Equal(in, sh.Degrees)
}

// roomFacts is measure for a share laid out from its degrees
// (fromDegrees): each vertex gets room for the edges its Degrees count
// (dmstore.RoomRange), the chunk's edges are their sum, and the load
// fills in the degrees of the rows it builds (loadShare).
func roomFacts(w *spmd.World, cfg *Config, sh *csr.Share, chunks []uint32, mem *hugemem.Arena) (chunkFacts, error) {
	k := w.Index
	lo, hi := chunks[k], chunks[k+1]
	ocfg, icfg := layoutConfigs(w, cfg, chunks)
	ocfg.Weights, icfg.Weights = dmstore.WeightFloat32, dmstore.WeightFloat32
	f := chunkFacts{degrees: mem.Uint32s(int(hi - lo)), weights: dmstore.WeightFloat32, rooms: true}
	for _, d := range sh.Degrees {
		f.edges += uint64(d)
	}
	var err error
	f.out[dmstore.WeightFloat32], err = dmstore.RoomRange(sh.Degrees, sh.Lo, sh.Graph.N, false, ocfg, k, lo, hi)
	if in := sh.InDegrees(); in != nil && err == nil {
		f.in[dmstore.WeightFloat32], err = dmstore.RoomRange(in, sh.Lo, sh.Graph.N, false, icfg, k, lo, hi)
	}
	return f, err
}

// windowWeights narrows code to hold the weights of g's rows [lo, hi).
func windowWeights(code dmstore.WeightCode, g *csr.Graph, lo, hi uint32) dmstore.WeightCode {
	return dmstore.NarrowestWeights(code, g.Weights[g.Off(lo):g.Off(hi)])
}

// agreeChunks is what every rank learns of the CNs' chunks from their
// facts: the most out-edges of one chunk, and the code the graph's
// weights are stored in, the least of the chunks' (collective; an MN
// gives nothing).
func agreeChunks(w *spmd.World, f *chunkFacts) (maxEdges uint64, weights dmstore.WeightCode, err error) {
	most := []int64{0, 0}
	if w.Role == spmd.CN {
		most = []int64{int64(f.edges), int64(dmstore.WeightUint8 - f.weights)}
	}
	if err := w.Comm.AllReduceInt64(most, spmd.Max); err != nil {
		return 0, 0, err
	}
	return uint64(most[0]), dmstore.WeightUint8 - dmstore.WeightCode(most[1]), nil
}

// nonNegative checks the weights of g's rows [lo, hi).
func nonNegative(g *csr.Graph, lo, hi uint32, name, graph string) error {
	if g.Weights == nil {
		return nil
	}
	for v := lo; v < hi; v++ {
		a, b := g.Row(v)
		for i, wt := range g.Weights[a:b] {
			if wt < 0 || math.IsNaN(wt) {
				return &rank.ParamError{Msg: fmt.Sprintf("%s needs non-negative weights; edge %d→%d of %s has weight %g", name, g.ExternalID(v), g.ExternalID(g.Dst[a+uint64(i)]), graph, wt)}
			}
		}
	}
	return nil
}

// loadShare writes CN k's share through eps: its out-rows in the layout
// l.Out and, when there is one, its in-rows in l.In, window by window.
func loadShare(sh *csr.Share, l layouts, k int, eps []verbs.Endpoint, f *chunkFacts, progress func(dmstore.LoadProgress)) (*dmstore.LoadReport, error) {
	var rep *dmstore.LoadReport
	add := func(r *dmstore.LoadReport) {
		if rep == nil {
			rep = r
			return
		}
		secs := rep.Seconds + r.Seconds // one after the other
		rep.Merge(r)
		rep.Seconds = secs
	}
	var done dmstore.LoadProgress // what the out-rows' windows wrote
	windows := 0
	err := eachWindow(sh, func(g, in *csr.Graph, a, b uint32) error {
		windows++
		o := dmstore.LoadOptions{Progress: progress}
		if sh.Windowed() {
			o.Lo, o.Hi, o.Done, o.ChunkEdges = a, b, done, f.edges
		}
		o.Rooms = f.rooms
		r, err := l.Out.Load(g, k, eps, o)
		if err != nil {
			return err
		}
		f.loaded.edges += r.Edges
		f.loaded.out.inPlace += r.InPlace
		f.loaded.out.overflow += r.Overflow
		if f.rooms {
			for v := a; v < b; v++ {
				f.degrees[v-sh.Lo] = uint32(g.Degree(v))
			}
		}
		done.Vertices, done.Edges, done.Bytes = done.Vertices+r.Vertices, done.Edges+r.Edges, done.Bytes+r.Bytes
		add(r)
		if l.In == nil {
			return nil
		}
		o.Progress = nil
		if r, err = l.In.Load(in, k, eps, o); err != nil {
			return err
		}
		f.loaded.in.inPlace += r.InPlace
		f.loaded.in.overflow += r.Overflow
		add(r)
		return nil
	})
	if rep != nil {
		rep.Windows = windows
	}
	return rep, err
}
