package rank

import (
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// fetchKept is the fetch of a value pull's whole task once its CN keeps
// the task's entries (entrycache.go): the common task of every dense
// iteration of PageRank, WCC and SSSP, and of BFS's bottom-up steps. Each pulling
// vertex's whole list is read and gathered, so nothing of the general
// path's work per vertex is needed: no entry is copied, decoded into an
// Entry or described twice, no segment is looked at. The entries' headers
// give each list's kind, degree and address; in-place lists are viewed
// where the cache holds them, the others gathered into merged READs (one
// round trip) and pulled where they land.
//
// A traversal's bottom-up step takes it too: each unreached vertex's
// whole in-list is read, and scanned for a parent (parentOf).
//
// It reports false, having done nothing, for any other task: neither a
// value pull nor a bottom-up step, a hub's piece, an entry not kept yet,
// an overflow or packed entry.
func (f *dmgFetcher) fetchKept(t balance.Task) (bool, error) {
	e := f.wk.e
	if !e.it.vpull && !e.it.bottomUp || !t.Whole() {
		return false, nil
	}
	s := 0 // the side pulled: in-lists, or the out-lists that are the in-lists
	if f.in != nil && e.it.pullIn {
		s = 1
	}
	l, c := f.sides[s].l, f.cache[s]
	if l == nil || c == nil {
		return false, nil
	}
	sp := e.span(t)
	n := sp.n
	f.need = grow(f.need, n)
	for i := range n {
		v := sp.at(i)
		nd := e.need(v)
		f.need[i] = nd
		if nd == 0 {
			continue
		}
		b := c.get(v)
		if nd != needPull || b == nil {
			return false, nil
		}
		if k, _, _ := dmstore.PeekEntry(b); k != dmstore.InPlace && k != dmstore.OutOfPlace {
			return false, nil
		}
	}
	// The lists, gathered in vertex (so address) order.
	f.hs = f.hs[:0]
	f.kept = grow(f.kept, n)
	rec := uint64(f.rec)
	queued := false
	for i := range n {
		if f.need[i] == 0 {
			continue
		}
		v := sp.at(i)
		kind, deg, addr := dmstore.PeekEntry(c.get(v))
		if s == 0 && !e.foreign(v) && deg != e.deg[v-e.lo] {
			return true, errors.Errorf("rank: vertex %d has an index entry of degree %d, expected %d (corrupt store)", v, deg, e.deg[v-e.lo])
		}
		if kind == dmstore.InPlace || deg == 0 {
			continue
		}
		at := verbs.Addr(addr)
		if err := e.net.Check(at, int(uint64(deg)*rec)); err != nil {
			return true, errors.Wrapf(err, "rank: edge list of vertex %d", v)
		}
		p, err := f.gather(at, uint64(deg)*rec)
		if err != nil {
			return true, err
		}
		f.kept[i], queued = p, true
	}
	if queued {
		if err := f.issue(); err != nil {
			return true, err
		}
		if err := f.rd.Flush(); err != nil {
			return true, err
		}
	}
	// Each vertex pulled over its list.
	a := &f.a
	for i := range n {
		if f.need[i] == 0 {
			continue
		}
		v := sp.at(i)
		b := c.get(v)
		kind, deg, _ := dmstore.PeekEntry(b)
		*a = adj{v: v, deg: deg, kind: kind, in: s == 1, need: needPull, to: deg, all: true}
		switch {
		case kind == dmstore.OutOfPlace && deg > 0:
			f.records(f.bytes(f.kept[i]))
		case !f.weighted:
			a.dst, f.dst = update.Destinations(dmstore.InPlaceIDs(b, deg), f.dst)
		default: // weighted in place: its weights after the entry's ids
			if f.inPlace == nil {
				f.inPlace = &newEntries(l.Codec, 1)[0]
			}
			if err := l.Codec.Decode(b, f.inPlace); err != nil {
				return true, errors.Wrapf(err, "rank: index entry of vertex %d", v)
			}
			a.dst, a.w = f.inPlace.Dst, f.inPlace.Weights
		}
		if e.it.bottomUp {
			f.wk.parentOf(v, a.dst)
			continue
		}
		if err := f.wk.visit(a); err != nil {
			return true, err
		}
	}
	return true, nil
}
