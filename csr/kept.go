package csr

import (
	"sync"

	"github.com/dmg-hpc/dmg/hugemem"
)

// DefaultKeepBytes is Options.KeepBytes when it is zero.
const DefaultKeepBytes = 1 << 30

// keptEdges are the edges of a text edge list that a reader keeps from
// its first pass, which parses the text (a staged read: its range of it)
// to collect the vertex ids, for the passes that follow (degrees, then the
// share's rows): they map the kept blocks to dense ids once (densify; a
// staged read a slice of the ids at a time) and read them from memory,
// instead of parsing the text again each time. A Graphalytics input's
// first pass keeps its edges, dense already, likewise (addRecs). The
// blocks are kept while they fit the budget (Options.KeepBytes); past it
// they are dropped, and the later passes parse the text again (a staged
// read spills its range's edges to the staging memory instead: spill). A
// nil *keptEdges keeps nothing.
//
// Memory: 8 bytes per edge (16 for ids past 32 bits until they are
// mapped), 8 more with weights; kron:20's 31.4 M edges keep 251 MB. The
// blocks are carved from slabs of huge pages (package hugemem), which
// free releases: fresh 4 KiB pages cost this VM 12 µs each to fault in,
// 0.7 s for kron:20's.
type keptEdges struct {
	budget, used int64
	blocks       []keptBlock
	over         bool
	mem          hugemem.Arena
	u32          []uint32
	u64          []uint64
	f64          []float64
}

// slabBytes is the size of the slabs the blocks are carved from.
const slabBytes = 64 << 20

// take carves n elements off the front of *slab, first refilling it with
// a fresh slab of alloc's when it holds fewer.
func take[T any](slab *[]T, n int, alloc func(int) []T) []T {
	if n == 0 {
		return nil
	}
	if len(*slab) < n {
		*slab = alloc(max(n, slabBytes/8))
	}
	x := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return x
}

// copyTo carves room for a off *slab and copies a there.
func copyTo[T any](slab *[]T, a []T, alloc func(int) []T) []T {
	x := take(slab, len(a), alloc)
	copy(x, a)
	return x
}

// keptBlock is one parsed block of the input, in input order: its
// endpoints' external ids (s, d when they fit 32 bits, else s64, d64)
// until mapped, then their dense ids in s, d.
type keptBlock struct {
	s, d     []uint32
	s64, d64 []uint64
	w        []float64
}

// newKeptEdges returns the store of a pass's blocks for budget bytes (≤ 0:
// nil, nothing kept).
func newKeptEdges(budget int64) *keptEdges {
	if budget <= 0 {
		return nil
	}
	return &keptEdges{budget: budget}
}

// keepBytes is Options.KeepBytes with its default.
func (o *Options) keepBytes() int64 {
	if o.KeepBytes == 0 {
		return DefaultKeepBytes
	}
	return o.KeepBytes
}

// add copies block b (its owner reuses it) while the budget allows; the
// first block past it drops everything kept.
func (k *keptEdges) add(b *edgeBlock) {
	if !k.reserve(int64(len(b.s32))*8 + int64(len(b.s64))*16 + int64(len(b.w))*8) {
		return
	}
	k.blocks = append(k.blocks, keptBlock{
		s: copyTo(&k.u32, b.s32, k.mem.Uint32s), d: copyTo(&k.u32, b.d32, k.mem.Uint32s),
		s64: copyTo(&k.u64, b.s64, k.mem.Words), d64: copyTo(&k.u64, b.d64, k.mem.Words),
		w: copyTo(&k.f64, b.w, k.mem.Float64s)})
}

// reserve counts n more bytes kept and says whether they fit the budget;
// the first that do not drop everything kept (nil or dropped: false).
func (k *keptEdges) reserve(n int64) bool {
	if !k.ok() {
		return false
	}
	if k.used+n > k.budget {
		k.free()
		return false
	}
	k.used += n
	return true
}

// addRecs copies a pass's edges, dense already (a reader that maps ids
// as it parses: Graphalytics), while the budget allows.
func (k *keptEdges) addRecs(recs []edgeRec) {
	if len(recs) == 0 || !k.reserve(int64(len(recs))*16) {
		return
	}
	b := keptBlock{s: take(&k.u32, len(recs), k.mem.Uint32s), d: take(&k.u32, len(recs), k.mem.Uint32s),
		w: take(&k.f64, len(recs), k.mem.Float64s)}
	for i, e := range recs {
		b.s[i], b.d[i], b.w[i] = uint32(e.s), uint32(e.d), e.w
	}
	k.blocks = append(k.blocks, b)
}

// keepingSink passes a reader's dense edges on to a pass's sink and keeps
// them for the passes that follow (none with a nil kept).
type keepingSink struct {
	snk  sink
	kept *keptEdges
	buf  []edgeRec
}

func (s *keepingSink) edge(u, v uint64, w float64) {
	s.snk.edge(u, v, w)
	if !s.kept.ok() {
		return // nothing kept (any more)
	}
	if s.buf = append(s.buf, edgeRec{u, v, w}); len(s.buf) == batchEdges {
		s.flush()
	}
}

func (s *keepingSink) edges(es []edgeRec) {
	sendEdges(s.snk, es)
	s.flush()
	s.kept.addRecs(es)
}

func (s *keepingSink) flush() {
	s.kept.addRecs(s.buf)
	s.buf = s.buf[:0]
}

// free releases the kept blocks (nil: nothing to release); a pass after
// it parses the text.
func (k *keptEdges) free() {
	if k == nil {
		return
	}
	k.blocks, k.u32, k.u64, k.f64, k.over = nil, nil, nil, nil, true
	k.mem.Free()
}

// bytes is what the kept blocks hold (none once dropped).
func (k *keptEdges) bytes() int64 {
	if !k.ok() {
		return 0
	}
	return k.used
}

// ok says the later passes can read the kept blocks.
func (k *keptEdges) ok() bool { return k != nil && !k.over }

// densify maps every kept block's ids to dense ones by m (which holds
// them all: m was made from these blocks), workers blocks at a time.
func (k *keptEdges) densify(m *idMap, workers int) {
	for i := range k.blocks { // room for the dense ids of 64-bit ones
		if b := &k.blocks[i]; len(b.s64) > 0 {
			b.s, b.d = take(&k.u32, len(b.s64), k.mem.Uint32s), take(&k.u32, len(b.d64), k.mem.Uint32s)
		}
	}
	k.eachBlock(workers, func(b *keptBlock) { b.densify(m) })
}

func (b *keptBlock) densify(m *idMap) {
	if m.identity {
		return // 32-bit ids 0..n-1 are dense already
	}
	if len(b.s64) > 0 {
		for i := range b.s64 {
			b.s[i], _ = m.dense(b.s64[i])
			b.d[i], _ = m.dense(b.d64[i])
		}
		b.s64, b.d64 = nil, nil
		return
	}
	for i := range b.s {
		b.s[i], _ = m.dense(uint64(b.s[i]))
		b.d[i], _ = m.dense(uint64(b.d[i]))
	}
}

// eachBlock runs f on every kept block, workers at a time.
func (k *keptEdges) eachBlock(workers int, f func(b *keptBlock)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(&k.blocks[i])
			}
		}()
	}
	for i := range k.blocks {
		next <- i
	}
	close(next)
	wg.Wait()
}

// narrow moves the dense ids of the blocks that held 64-bit ids, mapped
// in place, to s and d.
func (k *keptEdges) narrow() {
	for i := range k.blocks {
		b := &k.blocks[i]
		if len(b.s64) == 0 {
			continue
		}
		b.s, b.d = take(&k.u32, len(b.s64), k.mem.Uint32s), take(&k.u32, len(b.d64), k.mem.Uint32s)
		for j := range b.s64 {
			b.s[j], b.d[j] = uint32(b.s64[j]), uint32(b.d64[j])
		}
		b.s64, b.d64 = nil, nil
	}
}

// send hands every kept edge to snk in input order, batchEdges at a time.
func (k *keptEdges) send(snk sink) {
	k.each(func(es []edgeRec) { sendEdges(snk, es) })
}

// each hands every kept edge to f in input order, batchEdges at a time
// (f may not keep es).
func (k *keptEdges) each(f func(es []edgeRec)) {
	recs := make([]edgeRec, 0, batchEdges)
	for _, b := range k.blocks {
		for i := range b.s {
			w := 1.0
			if b.w != nil {
				w = b.w[i]
			}
			recs = append(recs, edgeRec{uint64(b.s[i]), uint64(b.d[i]), w})
			if len(recs) == cap(recs) {
				f(recs)
				recs = recs[:0]
			}
		}
	}
	if len(recs) > 0 {
		f(recs)
	}
}
