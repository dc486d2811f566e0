package rank

import (
	"encoding/binary"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// famState is what FAM-Graph's CN keeps: the whole index, and every
// vertex's value and partial accumulator.
type famState struct {
	idx      []uint64
	val, acc []uint64
}

// famMode is the FAM-Graph baseline (DESIGN.md §8): every CN holds the
// whole index and every vertex's value and accumulator locally (O(|V|) per
// CN); edges are fetched from DM one list per READ. Every update is local;
// after the push, each CN writes its partial accumulators of every other
// chunk to that chunk's slot region on DM (large WRITEs), the owner folds
// them in, and every CN re-reads all values.
type famMode struct{}

func (famMode) String() string                      { return ModeFAMGraph }
func (famMode) plain() bool                         { return true }
func (famMode) pulls(*Config, algo.Spec) bool       { return false }
func (famMode) remote(*Config, bool) remotePath     { return viaLocalCopy }
func (famMode) perOpDirect() bool                   { return false }
func (famMode) logDirect() bool                     { return false }
func (famMode) fetcher(wk *worker) (fetcher, error) { return &famFetcher{naiveFetcher{wk: wk}}, nil }

// famRegions are the partial-accumulator slots: for chunk k, one slot of
// |V_k| words per sending CN, on the MN that holds chunk k.
type famRegions struct {
	base   []verbs.Addr
	bounds []uint32
}

func (famMode) reserve(c StoreConfig, cm []int) uint64 {
	k := len(c.Bounds) - 1
	per := make([]uint64, c.NumMN)
	for i, m := range cm {
		per[m] += uint64(k) * 8 * uint64(c.Bounds[i+1]-c.Bounds[i])
	}
	var mx uint64
	for _, b := range per {
		mx = max(mx, b)
	}
	if c.Triangles {
		mx += triReserve(c, cm)
	}
	return mx
}

func (famMode) place(st *Store, c StoreConfig, start []uint64) error {
	b := c.Bounds
	k := len(b) - 1
	f := &famRegions{base: make([]verbs.Addr, k), bounds: b}
	used := append([]uint64(nil), start...)
	for i := 0; i < k; i++ {
		m := st.Out.ChunkMN[i]
		a, err := verbs.MakeAddr(m, used[m])
		if err != nil {
			return err
		}
		f.base[i] = a
		used[m] += uint64(k) * 8 * uint64(b[i+1]-b[i])
	}
	st.fam = f
	if c.Triangles {
		return placeTriangles(st, c, used)
	}
	return nil
}

func (f *famRegions) slot(k, sender int) verbs.Addr {
	return f.base[k].Add(uint64(sender) * 8 * uint64(f.bounds[k+1]-f.bounds[k]))
}

// setup reads the whole plain-CSR index (every chunk's offset words and
// its end word) and sets up the full value and accumulator arrays; the
// engine's own arrays become views of the own chunk.
func (famMode) setup(e *engine) error {
	st, ep := e.st, e.wks[0].ep
	b := st.Out.Config.Bounds
	n := st.N()
	e.fam.idx = make([]uint64, 0, int(n)+len(b)-1)
	for k := 0; k+1 < len(b); k++ {
		words := make([]byte, 8*(b[k+1]-b[k]+1))
		if err := verbs.ReadBulk(ep, words, st.Out.EntryAddr(b[k])); err != nil {
			return err
		}
		for i := 0; i < len(words); i += 8 {
			e.fam.idx = append(e.fam.idx, binary.LittleEndian.Uint64(words[i:]))
		}
	}
	e.fam.val, e.fam.acc = make([]uint64, n), make([]uint64, n)
	if e.spec.Continue {
		copy(e.fam.val, e.prev)
	}
	e.prog.Init(0, n, e.fam.val, make([]bool, n)) // every vertex's value, as its owner starts
	if e.startAll != nil {                        // a resumed run: as the owners continue
		copy(e.fam.val, e.startAll)
	}
	for v := range e.fam.acc {
		e.fam.acc[v] = e.op.Identity()
	}
	e.val, e.acc = e.fam.val[e.lo:e.hi], e.fam.acc[e.lo:e.hi]
	return nil
}

func (famMode) exchanges() bool { return true }

// exchange writes this CN's partial accumulators of every other chunk to
// its slot there and resets them.
func (famMode) exchange(e *engine) error {
	if !e.cn || e.it.vpull { // a value pull sends nothing
		return nil
	}
	b := e.st.Out.Config.Bounds
	for k := 0; k+1 < len(b); k++ {
		if k == e.me {
			continue
		}
		part := e.fam.acc[b[k]:b[k+1]]
		if err := verbs.WriteBulk(e.wks[0].ep, e.st.fam.slot(k, e.me), update.WordBytes(part, &e.io.buf)); err != nil {
			return err
		}
		for i := range part {
			part[i] = e.op.Identity()
		}
	}
	return nil
}

// collect folds the other CNs' partial accumulators of the lane into the
// cache.
func (famMode) collect(e *engine, wk *worker, lo, hi uint32) error {
	k := e.me
	n := hi - lo
	wk.sVal = grow(wk.sVal, int(n))
	for s := range e.w.Roles.CN {
		if s == k {
			continue
		}
		if err := readWords(wk.ep, wk.sVal, e.st.fam.slot(k, s).Add(8*uint64(lo-e.lo)), &wk.bytes); err != nil {
			return err
		}
		e.op.FoldWords(e.acc[lo-e.lo:hi-e.lo], wk.sVal)
	}
	return nil
}

// refresh re-reads every vertex's value after the owners wrote theirs.
func (famMode) refresh(e *engine) error {
	if !e.cn {
		return nil
	}
	return e.io.read(e.st, e.wks[0].ep, attrValue, 0, e.fam.val)
}

func (famMode) sources() sourceKind { return sourcesLocal }

// pullSources computes every vertex's contribution from FAM-Graph's copy
// of every value (a multiset kernel's value pull), each worker a share.
func (famMode) pullSources(e *engine, wk *worker, w int) error {
	lo, hi := e.vertexShare(w)
	rec := uint64(e.st.Out.Codec.RecordBytes())
	for x := lo; x < hi; x += chunkRange {
		y := min(hi, x+chunkRange)
		wk.degs = grow(wk.degs, int(y-x))
		for v := x; v < y; v++ {
			p := int(v) + e.st.ChunkOf(v)
			wk.degs[v-x] = uint32((e.fam.idx[p+1] - e.fam.idx[p]) / rec)
		}
		e.prog.Contributions(e.fam.val[x:y], wk.degs, e.vpl.far[x:y])
	}
	return nil
}

func (famMode) cacheBytes(e *engine) uint64 {
	return 8*uint64(len(e.fam.idx)) + 16*uint64(len(e.fam.val))
}

// famFetcher reads one list per active vertex with one READ, its bounds
// taken from the local index.
type famFetcher struct{ naiveFetcher }

func (f *famFetcher) fetch(t balance.Task) error {
	e := f.wk.e
	return f.lists(t, func(v uint32) (verbs.Addr, verbs.Addr, error) {
		p := int(v) + e.st.ChunkOf(v)
		return verbs.Addr(e.fam.idx[p]), verbs.Addr(e.fam.idx[p+1]), nil
	})
}
