package rank

import (
	"iter"
	"slices"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/dmstore"
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
func (dmgMode) sources() sourceKind       { return sourcesRead }

func (dmgMode) pullSources(e *engine, wk *worker, w int) error { return e.readContribs(wk, w) }

func (dmgMode) setup(*engine) error { return nil }

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
// trips per task, each one doorbell batch per MN.
//
// The entries of the own chunk come from the engine's entry caches once
// read (entrycache.go): a task whose entries are all there makes one round
// trip, for its lists.
//
// Entries and lists are decoded where the READs land: views of its own
// merger's buffer (verbs.ReadMerger.ReadView), never copied. The ranges a
// task needs come in address order, so the fetcher gathers them itself,
// joining each range to the previous one across at most the merge gap,
// and queues one view per gathered run, not one per entry or segment.
type dmgFetcher struct {
	wk       *worker
	rd       *verbs.ReadMerger // its own: views live until its next Flush
	gap      int64             // gather across at most this (-1: nothing)
	out, in  *dmstore.Layout
	rec      int
	weighted bool
	sides    [2]side // out, in
	cache    [2]*entryCache
	need     []uint8
	dst      []uint32
	w        []float32
	a        adj
	run      gatherRun
	hs       []int // the merger's handle of each gathered run
	join     []byte
	kept     []part         // fetchKept's list of each vertex
	inPlace  *dmstore.Entry // fetchKept's decoded weighted in-place entry
}

// side is the buffers of one adjacency (out or in) for a task.
type side struct {
	l    *dmstore.Layout
	ent  []part // the vertex's index entry (p < 0: not read)
	dec  []dmstore.Entry
	list []listParts // the vertex's fetched list: parts[first:first+n]
	rg   []part
}

// part is n bytes at off in gathered run p.
type part struct{ p, off, n int }

// An entry's part is notRead (the task does not need it) or fromCache
// (the entry cache has it) instead of a gathered run.
const (
	notRead   = -1
	fromCache = -2
)

// listParts is a vertex's parts, [first, first+n) of side.rg.
type listParts struct{ first, n int }

// gatherRun is the run being gathered: [start, end) on one MN.
type gatherRun struct {
	start, end verbs.Addr
	open       bool
}

func newDMGFetcher(wk *worker) (*dmgFetcher, error) {
	st, e := wk.e.st, wk.e
	rd, err := e.newReader(wk.ep)
	if err != nil {
		return nil, err
	}
	f := &dmgFetcher{wk: wk, rd: rd, gap: int64(e.cfg.MergeGap), out: st.Out, in: st.In, rec: st.Out.Codec.RecordBytes(), weighted: st.Out.Weighted}
	if e.cfg.NoMerge {
		f.gap = -1
	}
	f.sides[0].l, f.sides[1].l = st.Out, st.In
	f.cache = e.entryCaches()
	return f, nil
}

// gather adds n bytes at src to the run being gathered, or queues that run
// and starts another, and returns where the bytes will be.
func (f *dmgFetcher) gather(src verbs.Addr, n uint64) (part, error) {
	r := &f.run
	if !r.open || src < r.end || src.MN() != r.end.MN() || int64(src-r.end) > f.gap || uint64(src-r.start)+n > maxMergedRead {
		if err := f.issue(); err != nil {
			return part{}, err
		}
		r.start, r.open = src, true
	}
	r.end = src.Add(n)
	return part{p: len(f.hs), off: int(src - r.start), n: int(n)}, nil
}

// issue queues the run being gathered as one view.
func (f *dmgFetcher) issue() error {
	r := &f.run
	if !r.open {
		return nil
	}
	r.open = false
	h, err := f.rd.ReadView(r.start, int(r.end-r.start))
	if err != nil {
		return err
	}
	f.hs = append(f.hs, h)
	return nil
}

// bytes is a part's data, after the Flush that read it.
func (f *dmgFetcher) bytes(p part) []byte {
	return f.rd.View(f.hs[p.p])[p.off : p.off+p.n]
}

func (f *dmgFetcher) fetch(t balance.Task) error {
	if done, err := f.fetchKept(t); done || err != nil {
		return err
	}
	e := f.wk.e
	sp := e.span(t)
	n := sp.n
	f.need = grow(f.need, n)
	f.hs = f.hs[:0]
	for s := range f.sides {
		if f.sides[s].l != nil {
			f.sides[s].prepare(n)
		}
	}
	rd := f.rd
	any, queued := false, false
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
		size := uint64(sd.l.Codec.Size)
		for i := range n {
			sd.ent[i] = part{p: notRead}
			if nd := f.need[i]; nd == 0 || !f.wants(s, nd) {
				continue
			}
			v := sp.at(i)
			any = true
			if f.cache[s].get(v) != nil {
				sd.ent[i].p = fromCache
				continue
			}
			at := sd.l.EntryAddr(v)
			if err := e.net.Check(at, int(size)); err != nil {
				return errors.Wrapf(err, "rank: index entry of vertex %d", v)
			}
			var err error
			if sd.ent[i], err = f.gather(at, size); err != nil {
				return err
			}
			queued = true
		}
		if err := f.issue(); err != nil {
			return err
		}
		rd.Separate()
	}
	if !any {
		return nil
	}
	if queued {
		if err := rd.Flush(); err != nil {
			return err
		}
	}
	from, to := uint32(0), ^uint32(0)
	if !t.Whole() {
		from, to = uint32(t.EdgeLo), uint32(t.EdgeHi)
	}
	// Decode the entries and gather the list reads.
	for s := range f.sides {
		sd := &f.sides[s]
		if sd.l == nil {
			continue
		}
		sd.rg = sd.rg[:0]
		for i := range n {
			sd.list[i] = listParts{}
			if sd.ent[i].p == notRead {
				continue
			}
			v := sp.at(i)
			ent := &sd.dec[i]
			if err := sd.l.Codec.Decode(f.entryBytes(s, sd.ent[i], v, t.Whole()), ent); err != nil {
				return errors.Wrapf(err, "rank: index entry of vertex %d", v)
			}
			if s == 0 && !e.foreign(v) && ent.Degree != e.deg[v-e.lo] {
				return errors.Errorf("rank: vertex %d has an index entry of degree %d, expected %d (corrupt store)", v, ent.Degree, e.deg[v-e.lo])
			}
			f.setAdj(ent, v, s == 1, f.need[i], from, to)
			sd.list[i].first = len(sd.rg)
			if err := f.queueList(ent, sd); err != nil {
				return err
			}
			sd.list[i].n = len(sd.rg) - sd.list[i].first
		}
		if err := f.issue(); err != nil {
			return err
		}
		rd.Separate()
	}
	if err := rd.Flush(); err != nil {
		return err
	}
	for i := range n {
		for s := range f.sides {
			sd := &f.sides[s]
			if sd.l == nil || sd.ent[i].p == notRead {
				continue
			}
			ent := &sd.dec[i]
			f.setAdj(ent, sp.at(i), s == 1, f.need[i], from, to)
			if err := f.deliver(sd.l, ent, f.listBytes(sd, sd.list[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryBytes is the bytes of v's entry of side s, from the entry cache or
// from its READ; a whole task's READ goes into the cache.
func (f *dmgFetcher) entryBytes(s int, p part, v uint32, whole bool) []byte {
	if p.p == fromCache {
		return f.cache[s].get(v)
	}
	b := f.bytes(p)
	if whole {
		f.cache[s].put(v, b)
	}
	return b
}

// listBytes is a vertex's fetched list bytes: its one part, or its parts
// joined.
func (f *dmgFetcher) listBytes(sd *side, lv listParts) []byte {
	switch lv.n {
	case 0:
		return nil
	case 1:
		return f.bytes(sd.rg[lv.first])
	}
	f.join = f.join[:0]
	for _, p := range sd.rg[lv.first : lv.first+lv.n] {
		f.join = append(f.join, f.bytes(p)...)
	}
	return f.join
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
func newEntries(c dmstore.EntryCodec, n int) []dmstore.Entry {
	k, segs := c.InPlaceCap(), c.Chunks
	dst, seg := make([]uint32, n*k), make([]uint32, n*segs)
	var wts []float32
	if c.Weighted {
		wts = make([]float32, n*k)
	}
	ents := make([]dmstore.Entry, n)
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
func (f *dmgFetcher) setAdj(ent *dmstore.Entry, v uint32, in bool, nd uint8, from, to uint32) {
	a := &f.a
	*a = adj{v: v, deg: ent.Degree, kind: ent.Kind, addr: verbs.Addr(ent.Addr), segs: ent.Segments, in: in, need: nd,
		from: from, to: min(to, ent.Degree)}
	if in && from > 0 {
		a.need = 0 // a split hub's in-list is pulled whole by its first piece
	}
	if in {
		a.from, a.to = 0, ent.Degree
	}
	if ent.Kind != dmstore.OutOfPlace {
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

// queueList gathers the reads of the current vertex's list that the
// iteration fetches, as parts appended to sd.rg: the segments fetchSeg
// chooses (out of place), the table and the piece (overflow), nothing (in
// place).
func (f *dmgFetcher) queueList(ent *dmstore.Entry, sd *side) error {
	a := &f.a
	rec := uint64(f.rec)
	add := func(src verbs.Addr, n uint64) error {
		if err := f.wk.e.net.Check(src, int(n)); err != nil {
			return errors.Wrapf(err, "rank: edge list of vertex %d", a.v)
		}
		p, err := f.gather(src, n)
		sd.rg = append(sd.rg, p)
		return err
	}
	switch ent.Kind {
	case dmstore.InPlace:
		return nil
	case dmstore.Packed: // read whole, a hub's piece included
		if a.need == 0 {
			return nil
		}
		return add(a.addr, uint64(ent.Bytes))
	case dmstore.Overflow:
		if a.need == 0 {
			return nil
		}
		t := uint64(ent.TableBytes)
		if a.from == 0 { // the table and the piece are adjacent
			return add(verbs.Addr(uint64(a.addr)-t), t+uint64(a.to)*rec)
		}
		if err := add(verbs.Addr(uint64(a.addr)-t), t); err != nil {
			return err
		}
		return add(a.addr.Add(uint64(a.from)*rec), uint64(a.to-a.from)*rec)
	}
	for lo, hi := range f.fetchedSegs() {
		if err := add(a.addr.Add(uint64(lo)*rec), uint64(hi-lo)*rec); err != nil {
			return err
		}
	}
	return nil
}

// deliver decodes the current vertex's fetched bytes b and visits it.
func (f *dmgFetcher) deliver(l *dmstore.Layout, ent *dmstore.Entry, b []byte) error {
	a := &f.a
	if a.need == 0 {
		return nil
	}
	switch ent.Kind {
	case dmstore.InPlace:
		a.dst, a.all = ent.Dst[a.from:a.to], true
		if f.weighted {
			a.w = ent.Weights[a.from:a.to]
		}
		return f.wk.visit(a)
	case dmstore.Packed:
		var err error
		if f.dst, f.w, err = l.Codec.UnpackList(b, ent.Degree, f.dst[:0], f.w[:0]); err != nil {
			return errors.Wrapf(err, "rank: packed list of vertex %d", a.v)
		}
		a.dst, a.all = f.dst[a.from:a.to], true
		if f.weighted {
			a.w = f.w[a.from:a.to]
		}
		return f.wk.visit(a)
	case dmstore.Overflow:
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
