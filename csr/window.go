package csr

import (
	"math"
	"runtime/debug"
	"slices"

	"github.com/dmg-hpc/dmg/hugemem"
)

// windowed is what a windowed share keeps to build its rows window by
// window: the pass over the input and the first pass's counts.
type windowed struct {
	bounds  []uint32 // Lo = bounds[0] < bounds[1] < ... = Hi
	pass    func(snk sink) (*header, error)
	spec    string
	o       Options
	in      []uint32 // in-degrees, when the in-rows are built
	wantIn  bool
	meta    *Meta
	counted bool // meta holds the dropped self-loops and duplicates; sym is known
	sym     bool // every window's in-rows are its out-rows
	kept    *builtWindow
	sweep   *stageRounds // a staged read's rounds, routed as the windows need them

	undirected, dropLoops, weighted bool
}

// windows cuts the share [lo, hi) into windows whose rows (out-rows by
// deg, in-rows by in when not nil, both the share's) fit so.RowBytes,
// or so.WindowBytes when it is smaller, each a whole number of so.Align
// vertices from lo (the last one excepted), and at least one such step.
// A row costs its entries and rowBytes of offsets and counts while it is
// built. A window is at most so.width vertices wide, if that is set. It
// returns nil when the whole share fits so.RowBytes (and so.width).
func windows(deg, in []uint32, lo, hi uint32, weighted bool, so ShareOptions) []uint32 {
	wide := so.width > 0 && hi-lo > so.width
	if so.RowBytes <= 0 && !wide {
		return nil
	}
	per := uint64(4)
	if weighted {
		per += 8
	}
	rows := uint64(rowBytes)
	if in != nil {
		rows *= 2
	}
	align := uint64(so.align())
	budget := uint64(so.cut())
	if so.RowBytes <= 0 {
		budget = math.MaxUint64
	}
	bounds := []uint32{lo}
	var used, total uint64
	start := uint64(lo) // the window's
	for a := uint64(lo); a < uint64(hi); {
		b := min(a+align, uint64(hi))
		var c uint64
		for i := a - uint64(lo); i < b-uint64(lo); i++ {
			c += uint64(deg[i])
			if in != nil {
				c += uint64(in[i])
			}
		}
		c = c*per + (b-a)*rows
		if used > 0 && (used+c > budget || so.width > 0 && b-start > uint64(so.width)) {
			bounds = append(bounds, uint32(a))
			used, start = 0, a
		}
		used, total = used+c, total+c
		a = b
	}
	if !wide && total <= uint64(so.RowBytes) {
		return nil
	}
	return append(bounds, hi)
}

// cut is the size windows are cut at: RowBytes, or WindowBytes if it is
// positive and smaller.
func (so ShareOptions) cut() int64 {
	if so.WindowBytes > 0 && so.WindowBytes < so.RowBytes {
		return so.WindowBytes
	}
	return so.RowBytes
}

// rowBytes is what a row costs beside its entries while a share builds
// it: its offset and fill position (newShareRows), and its count and new
// offset after de-duplication (finishRows), 8 bytes each.
const rowBytes = 32

// Rounds is how many rounds a staged read routed the share's edges in
// (ShareOptions.StageBytes): 1 for any other share.
func (s *Share) Rounds() int {
	if s.win == nil || s.win.sweep == nil {
		return 1
	}
	return s.win.sweep.r
}

// Windowed reports whether the share builds its rows window by window
// (ShareOptions.RowBytes): then Graph and In hold no rows, only the
// vertices (N, IDs, Directed), and Windows builds them.
func (s *Share) Windowed() bool { return s.win != nil }

// InDegrees are a windowed share's in-degrees, counted as Degrees are,
// when it builds in-rows (nil otherwise, and for a share built whole).
func (s *Share) InDegrees() []uint32 {
	if s.win == nil || !s.win.wantIn {
		return nil
	}
	return s.win.in
}

// Weighted reports whether the share's rows carry weights (a windowed
// share's Graph holds no rows to tell).
func (s *Share) Weighted() bool {
	if s.win != nil {
		return rowsWeighted(s.win.weighted, &s.win.o)
	}
	return s.Graph.Weights != nil
}

// Windows calls f with the share's rows: a share built whole calls it
// once, with Graph, In and [Lo, Hi); a windowed one once per window
// [lo, hi), with graphs (of every vertex, as Graph and In) whose rows
// are those of the window only, built by a pass over the input each.
// The window a call builds last is kept for the next call, which passes
// it first and builds only the others: a job that sweeps the windows
// twice (to measure, then to load) pays 2W−1 passes for W windows, and
// holds one window's rows at a time. f gets each window's graphs while
// it runs; the kept window's are the same in the next call (f may alter
// them only in ways a second visit tolerates). A windowed share's in is
// nil when it has no in-rows (as Share.In), else they are built, never
// taken for the out-rows, so SameRows tells whether they are. The first
// complete call of a windowed share adds the self-loops and duplicates
// its builds drop to the Meta OpenShareWith returned. An error of f
// stops the windows and is returned.
//
// A staged read's share in rounds (ShareOptions.StageBytes) routes them
// as its windows need them, with every other CN: every CN must sweep its
// share's windows as often as the others, at the same time. Its sweeps go
// up and down the rounds in turn, and the windows with them: every other
// call passes them in reverse.
func (s *Share) Windows(f func(g, in *Graph, lo, hi uint32) error) error {
	w := s.win
	if w == nil {
		return f(s.Graph, s.In, s.Lo, s.Hi)
	}
	if w.sweep == nil {
		return w.windows(s, f)
	}
	w.sweep.begin()
	return w.sweep.end(w.windows(s, f))
}

// windows is Windows of a windowed share.
func (w *windowed) windows(s *Share, f func(g, in *Graph, lo, hi uint32) error) error {
	var todo []int // the windows to build, in order; the last is kept
	kept := w.kept
	w.kept = nil
	for i := range len(w.bounds) - 1 {
		if kept == nil || i != kept.i {
			todo = append(todo, i)
		}
	}
	if w.sweep != nil && w.sweep.down() { // the rounds' order (rounds.go)
		slices.Reverse(todo)
	}
	if kept != nil {
		err := f(kept.g, kept.in, w.bounds[kept.i], w.bounds[kept.i+1])
		kept.release()
		if err != nil {
			return err
		}
		debug.FreeOSMemory()
	}
	var loops, dups uint64
	sym := w.undirected || w.wantIn
	for j, i := range todo {
		lo, hi := w.bounds[i], w.bounds[i+1]
		if w.sweep != nil {
			if err := w.sweep.at(lo, hi); err != nil {
				return err
			}
		}
		b, l, d, err := w.build(s.Graph, s.Degrees[lo-s.Lo:hi-s.Lo], lo, hi, s.Lo)
		if err != nil {
			return err
		}
		b.i = i
		loops, dups = loops+l, dups+d
		sym = sym && (b.in == nil || SameRows(b.g, b.in, lo, hi))
		if err := f(b.g, b.in, lo, hi); err != nil {
			b.release()
			return err
		}
		if j == len(todo)-1 {
			w.kept = b
		} else {
			b.release()
		}
		// The window's rows are unmapped now (but for the kept one's);
		// the pass's garbage is collected and its pages given back
		// before the next window's are built, so that the process holds
		// one window's rows, not the GC's leeway of two.
		debug.FreeOSMemory()
	}
	if !w.counted {
		w.meta.DroppedSelfLoops += loops
		w.meta.DroppedDuplicates += dups
		w.counted, w.sym = true, sym
	}
	return nil
}

// builtWindow is a window's rows, kept from one Windows call for the
// next when built last. Their arrays are mapped (hugemem): a window's
// rows are hundreds of MB that every window would fault in anew, page
// by page, from the Go heap (8% of the CPU of a kron:24 load, most of
// it the virtual machine's fault handling).
type builtWindow struct {
	g, in *Graph
	i     int // the window's index
	mem   *hugemem.Arena
}

// release unmaps the window's rows: nothing may read them after it.
func (b *builtWindow) release() {
	if b != nil {
		b.mem.Free()
		b.g, b.in = nil, nil
	}
}

// build makes the rows of the window [lo, hi) of a share from first in
// one pass: the out-rows (counted by deg, the window's), and the in-rows
// when the share has them.
func (w *windowed) build(v *Graph, deg []uint32, lo, hi, first uint32) (b *builtWindow, loops, dups uint64, err error) {
	mem := new(hugemem.Arena)
	defer func() {
		if err != nil {
			mem.Free()
		}
	}()
	var inRows *shareRows
	if w.wantIn {
		inRows = newShareRows(w.in[lo-first:hi-first], lo, hi, w.weighted, mem)
	}
	out := newShareRows(deg, lo, hi, w.weighted, mem)
	rp := rowPass{lo: lo, hi: hi, undirected: w.undirected, dropLoops: w.dropLoops, weighted: w.weighted, out: out, in: inRows}
	if w.sweep != nil && w.sweep.s.directRows(&rp) {
		err = w.sweep.s.rows(&rp)
	} else {
		_, err = rp.run(w.pass)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	if err := changed(w.spec, out, inRows); err != nil {
		return nil, 0, 0, err
	}
	b = &builtWindow{mem: mem}
	b.g, dups = out.graph(v, v.Directed, &w.o)
	if inRows != nil {
		b.in, _ = inRows.graph(v, true, &w.o)
	}
	return b, rp.loops, dups, nil
}
