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

func (dmgMode) fetcher(wk *worker) (fetcher, error) { return newDMGFetcher(wk), nil }

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
// trips per task, each one doorbell batch per MN.
type dmgFetcher struct {
	wk       *worker
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
	ents []byte
	dec  []csr.Entry
	used []bool // entry read
	list []byte
	at   []int // offset of the vertex's fetched bytes in list, -1 none
	size []int
}

func newDMGFetcher(wk *worker) *dmgFetcher {
	st := wk.e.st
	f := &dmgFetcher{wk: wk, out: st.Out, in: st.In, rec: st.Out.Codec.RecordBytes(), weighted: st.Out.Weighted}
	f.sides[0].l, f.sides[1].l = st.Out, st.In
	return f
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
	rd := f.wk.rd
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
			if nd := f.need[i]; nd == 0 || !f.wants(s, nd) {
				continue
			}
			if err := rd.Read(sd.ents[i*size:(i+1)*size], sd.l.EntryAddr(sp.at(i))); err != nil {
				return err
			}
			sd.used[i], any = true, true
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
	// Decode, size and queue the list reads.
	for s := range f.sides {
		sd := &f.sides[s]
		if sd.l == nil {
			continue
		}
		total := 0
		for i := range n {
			sd.at[i], sd.size[i] = -1, 0
			if !sd.used[i] {
				continue
			}
			v := sp.at(i)
			ent := &sd.dec[i]
			size := sd.l.Codec.Size
			if err := sd.l.Codec.Decode(sd.ents[i*size:(i+1)*size], ent); err != nil {
				return errors.Wrapf(err, "rank: index entry of vertex %d", v)
			}
			if s == 0 && !e.foreign(v) && ent.Degree != e.deg[v-e.lo] {
				return errors.Errorf("rank: vertex %d has an index entry of degree %d, expected %d (corrupt store)", v, ent.Degree, e.deg[v-e.lo])
			}
			f.setAdj(ent, v, s == 1, f.need[i], from, to)
			b := f.listBytes(ent)
			if b > 0 {
				sd.at[i], sd.size[i] = total, b
				total += b
			}
		}
		sd.list = grow(sd.list, total)
		for i := range n {
			if sd.at[i] < 0 {
				continue
			}
			ent := &sd.dec[i]
			f.setAdj(ent, sp.at(i), s == 1, f.need[i], from, to)
			if err := f.queueList(ent, sd.list[sd.at[i]:sd.at[i]+sd.size[i]]); err != nil {
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
			if sd.l == nil || !sd.used[i] {
				continue
			}
			ent := &sd.dec[i]
			f.setAdj(ent, sp.at(i), s == 1, f.need[i], from, to)
			var b []byte
			if sd.at[i] >= 0 {
				b = sd.list[sd.at[i] : sd.at[i]+sd.size[i]]
			}
			if err := f.deliver(sd.l, ent, b); err != nil {
				return err
			}
		}
	}
	return nil
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
	size := sd.l.Codec.Size
	sd.ents = grow(sd.ents, n*size)
	if cap(sd.dec) < n {
		sd.dec = newEntries(sd.l.Codec, max(n, 2*cap(sd.dec)))
	}
	sd.dec = sd.dec[:n]
	sd.used = grow(sd.used, n)
	clear(sd.used)
	sd.at = grow(sd.at, n)
	sd.size = grow(sd.size, n)
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

// listBytes is how many bytes the vertex's fetch reads: the segments
// fetchSeg chooses (out of place), the table and the piece (overflow),
// nothing (in place).
func (f *dmgFetcher) listBytes(ent *csr.Entry) int {
	a := &f.a
	switch ent.Kind {
	case csr.InPlace:
		return 0
	case csr.Overflow:
		if a.need == 0 {
			return 0
		}
		return int(ent.TableBytes) + int(a.to-a.from)*f.rec
	}
	total := 0
	for lo, hi := range f.fetchedSegs() {
		total += int(hi-lo) * f.rec
	}
	return total
}

// fetchedSegs yields the edge ranges [lo, hi) of the current out-of-place
// list, within its piece [from, to), that fetchSeg chooses to read, in
// order: what listBytes sizes and queueList reads.
func (f *dmgFetcher) fetchedSegs() iter.Seq2[uint32, uint32] {
	return func(yield func(lo, hi uint32) bool) {
		a := &f.a
		var s0 uint32
		for k, n := range a.segs {
			lo, hi := max(s0, a.from), min(s0+n, a.to)
			s0 += n
			if lo >= hi {
				continue
			}
			if fetch, _ := f.wk.fetchSeg(a, k, hi-lo); fetch && !yield(lo, hi) {
				return
			}
		}
	}
}

// queueList queues the reads of the current vertex's list into b.
func (f *dmgFetcher) queueList(ent *csr.Entry, b []byte) error {
	a := &f.a
	rd := f.wk.rd
	rec := uint64(f.rec)
	if ent.Kind == csr.Overflow {
		t := int(ent.TableBytes)
		if err := rd.Read(b[:t], verbs.Addr(uint64(a.addr)-uint64(t))); err != nil {
			return errors.Wrapf(err, "rank: overflow table of vertex %d", a.v)
		}
		if err := rd.Read(b[t:], a.addr.Add(uint64(a.from)*rec)); err != nil {
			return errors.Wrapf(err, "rank: edge list of vertex %d", a.v)
		}
		return nil
	}
	off := 0
	for lo, hi := range f.fetchedSegs() {
		m := int(hi-lo) * f.rec
		if err := rd.Read(b[off:off+m], a.addr.Add(uint64(lo)*rec)); err != nil {
			return errors.Wrapf(err, "rank: edge list of vertex %d", a.v)
		}
		off += m
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
