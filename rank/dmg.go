package rank

import (
	"iter"
	"slices"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// dmgMode is the design: the adaptive index (in-place edges, segment
// lengths per chunk), merged and doorbell-batched reads, the pull in dense
// iterations, collaborative update (RefRD, ValRD) in dense ones and direct
// update with touched logs in sparse ones.
type dmgMode struct{}

func (dmgMode) String() string { return ModeDMG }
func (dmgMode) plain() bool    { return false }

func (dmgMode) reserve(c StoreConfig, cm []int) uint64 {
	valCap, refCap := c.mailboxSizes()
	r := update.Reserve(c.Bounds, cm, c.NumMN, valCap, refCap, update.ValBlocks(valCap, c.Senders))
	per := make([]uint64, c.NumMN)
	for k, m := range cm {
		per[m] += bitmapBytes(c.Bounds[k+1] - c.Bounds[k])
	}
	if c.Triangles {
		r += triReserve(c, cm)
	}
	return r + slices.Max(per)
}

func (dmgMode) place(st *Store, c StoreConfig, start []uint64) error {
	valCap, refCap := c.mailboxSizes()
	mb, end, err := update.PlanMailboxes(c.Bounds, st.Out.ChunkMN, start, valCap, refCap, update.ValBlocks(valCap, c.Senders))
	if err != nil {
		return err
	}
	st.mb = mb
	// Each chunk's frontier bitmap, for the bottom-up step of traversals.
	st.bits = make([]verbs.Addr, len(st.Out.ChunkMN))
	for k, m := range st.Out.ChunkMN {
		if st.bits[k], err = verbs.MakeAddr(m, end[m]); err != nil {
			return err
		}
		end[m] += bitmapBytes(c.Bounds[k+1] - c.Bounds[k])
	}
	if c.Triangles {
		return placeTriangles(st, c, end)
	}
	return nil
}

// bitmapBytes is the size of a frontier bitmap of n vertices on DM.
func bitmapBytes(n uint32) uint64 { return 8 * ((uint64(n) + 63) / 64) }

func (dmgMode) fetcher(wk *worker) (fetcher, error) { return newDMGFetcher(wk) }

// pulls: the pull gathers every in-neighbour, inactive ones holding the
// identity as their contribution; that must change nothing, which holds
// for the edge maps of the minima and for carried sums, not for sums that
// add weights to the identity (unless every vertex is active). Custom edge
// maps are computed per source: they push.
func (dmgMode) pulls(c *Config, s algo.Spec) bool {
	return !c.NoPull && s.Edge != algo.Custom && (s.Edge == algo.Carry || s.Reduce == algo.Min || s.AllActive)
}

func (dmgMode) remote(c *Config, dense bool) remotePath {
	if dense && !c.NoCollab && !(c.NoRefRD && c.NoValRD) {
		return viaMailboxes
	}
	return viaDirect
}

func (dmgMode) perOpDirect() bool         { return false }
func (dmgMode) logDirect() bool           { return true }
func (dmgMode) exchanges() bool           { return false }
func (dmgMode) exchange(*engine) error    { return nil }
func (dmgMode) refresh(*engine) error     { return nil }
func (dmgMode) cacheBytes(*engine) uint64 { return 0 }

// setup empties the triangle operator's heaps (CN 0, before anyone
// reserves room in them).
func (dmgMode) setup(e *engine) error {
	if e.st.tri == nil || e.me != 0 {
		return nil
	}
	return e.st.tri.resetHeaps(e.wks[0].ep)
}

func (dmgMode) collect(e *engine, wk *worker, lo, hi uint32) error {
	if !e.info.inboxDirty {
		return nil
	}
	return e.collectInbox(wk, lo, hi)
}

// dmgFetcher reads a task's adjacency through the adaptive index: one
// merged READ of the index entries the iteration needs (out-entries of
// active vertices, in-entries of pulling ones on directed graphs), then one
// merged READ of the list segments it fetches (RefRD segments are not
// fetched; in-place entries have their edges already): two dependent round
// trips per task, each one doorbell batch per MN. Both are read as views
// (verbs.ReadMerger.ReadView) of its own merger's buffer, where the READs
// land: entries and lists are decoded where they arrived, not copied.
type dmgFetcher struct {
	wk       *worker
	rd       *verbs.ReadMerger // its own: views live until its next Flush
	out, in  *csr.Layout
	rec      int
	weighted bool
	sides    [2]side // out, in
	need     []uint8
	dst      []uint32
	w        []float32
	a        adj
}

// side is the buffers of one adjacency (out or in) for a task.
type side struct {
	l    *csr.Layout
	ent  []int // view of the vertex's index entry, -1 none
	dec  []csr.Entry
	list []listViews
	join []byte // lists that arrived in several views, joined
}

// listViews are the views [first, first+n) that hold a vertex's fetched
// list bytes, in order.
type listViews struct{ first, n int }

func newDMGFetcher(wk *worker) (*dmgFetcher, error) {
	st, e := wk.e.st, wk.e
	rd, err := e.newReader(wk.ep)
	if err != nil {
		return nil, err
	}
	f := &dmgFetcher{wk: wk, rd: rd, out: st.Out, in: st.In, rec: st.Out.Codec.RecordBytes(), weighted: st.Out.Weighted}
	f.sides[0].l, f.sides[1].l = st.Out, st.In
	return f, nil
}

func (f *dmgFetcher) fetch(t balance.Task) error {
	e := f.wk.e
	sp := e.span(t)
	n := sp.n
	f.need = grow(f.need, n)
	for s := range f.sides {
		if f.sides[s].l != nil {
			f.sides[s].prepare(n)
		}
	}
	rd := f.rd
	any := false
	for i := range n {
		f.need[i] = e.need(sp.at(i))
	}
	// The out- and in-entries lie in different layouts: their reads are
	// kept apart, so no merged READ spans the regions between them.
	for s := range f.sides {
		sd := &f.sides[s]
		if sd.l == nil {
			continue
		}
		size := sd.l.Codec.Size
		for i := range n {
			sd.ent[i] = -1
			if nd := f.need[i]; nd == 0 || !f.wants(s, nd) {
				continue
			}
			h, err := rd.ReadView(sd.l.EntryAddr(sp.at(i)), size)
			if err != nil {
				return err
			}
			sd.ent[i], any = h, true
		}
		rd.Separate()
	}
	if !any {
		return nil
	}
	if err := rd.Flush(); err != nil {
		return err
	}
	from, to := uint32(0), ^uint32(0)
	if !t.Whole() {
		from, to = uint32(t.EdgeLo), uint32(t.EdgeHi)
	}
	// Decode the entries and queue the list reads.
	for s := range f.sides {
		sd := &f.sides[s]
		if sd.l == nil {
			continue
		}
		for i := range n {
			sd.list[i] = listViews{}
			if sd.ent[i] < 0 {
				continue
			}
			v := sp.at(i)
			ent := &sd.dec[i]
			if err := sd.l.Codec.Decode(rd.View(sd.ent[i]), ent); err != nil {
				return errors.Wrapf(err, "rank: index entry of vertex %d", v)
			}
			if s == 0 && !e.foreign(v) && ent.Degree != e.deg[v-e.lo] {
				return errors.Errorf("rank: vertex %d has an index entry of degree %d, expected %d (corrupt store)", v, ent.Degree, e.deg[v-e.lo])
			}
			f.setAdj(ent, v, s == 1, f.need[i], from, to)
			if err := f.queueList(ent, &sd.list[i]); err != nil {
				return err
			}
		}
		rd.Separate()
	}
	if err := rd.Flush(); err != nil {
		return err
	}
	for i := range n {
		for s := range f.sides {
			sd := &f.sides[s]
			if sd.l == nil || sd.ent[i] < 0 {
				continue
			}
			ent := &sd.dec[i]
			f.setAdj(ent, sp.at(i), s == 1, f.need[i], from, to)
			if err := f.deliver(sd.l, ent, sd.bytes(rd, sd.list[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// bytes is a vertex's fetched list bytes: its one view, or its views
// joined.
func (sd *side) bytes(rd *verbs.ReadMerger, lv listViews) []byte {
	switch lv.n {
	case 0:
		return nil
	case 1:
		return rd.View(lv.first)
	}
	sd.join = sd.join[:0]
	for h := lv.first; h < lv.first+lv.n; h++ {
		sd.join = append(sd.join, rd.View(h)...)
	}
	return sd.join
}

// wants says whether side s (0 out, 1 in) of a vertex with need nd is read.
func (f *dmgFetcher) wants(s int, nd uint8) bool {
	it := &f.wk.e.it
	if s == 1 {
		return f.in != nil && it.pullIn && nd&needPull != 0
	}
	return nd&needPush != 0 || (nd&needPull != 0 && !it.pullIn)
}

func (sd *side) prepare(n int) {
	sd.ent = grow(sd.ent, n)
	if cap(sd.dec) < n {
		sd.dec = newEntries(sd.l.Codec, max(n, 2*cap(sd.dec)))
	}
	sd.dec = sd.dec[:n]
	sd.list = grow(sd.list, n)
}

// newEntries makes n entries whose slices already hold the most any entry
// of codec c decodes into (its in-place lists, its segment lengths), carved
// from three arrays: decoding never allocates, whichever kinds of entry a
// slot sees from one task to the next.
func newEntries(c csr.EntryCodec, n int) []csr.Entry {
	k, segs := c.InPlaceCap(), c.Chunks
	dst, seg := make([]uint32, n*k), make([]uint32, n*segs)
	var wts []float32
	if c.Weighted {
		wts = make([]float32, n*k)
	}
	ents := make([]csr.Entry, n)
	for i := range ents {
		ents[i].Dst = dst[i*k : i*k : (i+1)*k]
		ents[i].Segments = seg[i*segs : i*segs : (i+1)*segs]
		if wts != nil {
			ents[i].Weights = wts[i*k : i*k : (i+1)*k]
		}
	}
	return ents
}

// setAdj describes the vertex's list to the visitor (and to fetchSeg).
func (f *dmgFetcher) setAdj(ent *csr.Entry, v uint32, in bool, nd uint8, from, to uint32) {
	a := &f.a
	*a = adj{v: v, deg: ent.Degree, kind: ent.Kind, addr: verbs.Addr(ent.Addr), segs: ent.Segments, in: in, need: nd,
		from: from, to: min(to, ent.Degree)}
	if in && from > 0 {
		a.need = 0 // a split hub's in-list is pulled whole by its first piece
	}
	if in {
		a.from, a.to = 0, ent.Degree
	}
	if ent.Kind != csr.OutOfPlace {
		a.segs = nil
	}
}

// fetchedSegs yields the edge ranges [lo, hi) of the current out-of-place
// list, within its piece [from, to), that fetchSeg chooses to read, in
// order, adjacent ones joined: what queueList reads.
func (f *dmgFetcher) fetchedSegs() iter.Seq2[uint32, uint32] {
	return func(yield func(lo, hi uint32) bool) {
		a := &f.a
		var s0, rlo, rhi uint32
		for k, n := range a.segs {
			lo, hi := max(s0, a.from), min(s0+n, a.to)
			s0 += n
			if lo >= hi {
				continue
			}
			if fetch, _ := f.wk.fetchSeg(a, k, hi-lo); !fetch {
				continue
			}
			if rhi > rlo && lo == rhi {
				rhi = hi
				continue
			}
			if rhi > rlo && !yield(rlo, rhi) {
				return
			}
			rlo, rhi = lo, hi
		}
		if rhi > rlo {
			yield(rlo, rhi)
		}
	}
}

// queueList queues, as views lv, the reads of the current vertex's list
// that the iteration fetches: the segments fetchSeg chooses (out of
// place), the table and the piece (overflow), nothing (in place).
func (f *dmgFetcher) queueList(ent *csr.Entry, lv *listViews) error {
	a := &f.a
	rd := f.rd
	rec := uint64(f.rec)
	view := func(src verbs.Addr, n uint64) error {
		h, err := rd.ReadView(src, int(n))
		if err != nil {
			return errors.Wrapf(err, "rank: edge list of vertex %d", a.v)
		}
		if lv.n == 0 {
			lv.first = h
		}
		lv.n++
		return nil
	}
	switch ent.Kind {
	case csr.InPlace:
		return nil
	case csr.Overflow:
		if a.need == 0 {
			return nil
		}
		t := uint64(ent.TableBytes)
		if a.from == 0 { // the table and the piece are adjacent
			return view(verbs.Addr(uint64(a.addr)-t), t+uint64(a.to)*rec)
		}
		if err := view(verbs.Addr(uint64(a.addr)-t), t); err != nil {
			return err
		}
		return view(a.addr.Add(uint64(a.from)*rec), uint64(a.to-a.from)*rec)
	}
	for lo, hi := range f.fetchedSegs() {
		if err := view(a.addr.Add(uint64(lo)*rec), uint64(hi-lo)*rec); err != nil {
			return err
		}
	}
	return nil
}

// deliver decodes the current vertex's fetched bytes b and visits it.
func (f *dmgFetcher) deliver(l *csr.Layout, ent *csr.Entry, b []byte) error {
	a := &f.a
	if a.need == 0 {
		return nil
	}
	switch ent.Kind {
	case csr.InPlace:
		a.dst, a.all = ent.Dst[a.from:a.to], true
		if f.weighted {
			a.w = ent.Weights[a.from:a.to]
		}
		return f.wk.visit(a)
	case csr.Overflow:
		t := int(ent.TableBytes)
		if err := l.Codec.DecodeTable(b[:t], ent); err != nil {
			return errors.Wrapf(err, "rank: overflow table of vertex %d", a.v)
		}
		a.segs, a.all = ent.Segments, true
		b = b[t:]
	}
	f.records(b)
	return f.wk.visit(a)
}

// records sets the current adjacency's edges from packed records.
func (f *dmgFetcher) records(b []byte) {
	a := &f.a
	if f.weighted {
		f.dst, f.w = update.DecodeRecords(b, f.rec, true, f.dst[:0], f.w[:0])
		a.dst, a.w = f.dst, f.w
		return
	}
	a.dst, f.dst = update.Destinations(b, f.dst)
}
