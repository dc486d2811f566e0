package rank

import (
	"sync/atomic"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
)

// multiset is a Multiset kernel's state: its UpdateBag and, on a CN, the
// bags that take the place of the accumulators.
type multiset struct {
	upd algo.BagUpdater
	bag *bag
}

// bag is the accumulator of a Multiset kernel (algo.Multiset): every
// candidate sent to each vertex of the chunk in one iteration, kept whole
// for the kernel's UpdateBag. Vertex i's candidates are
// slot[off[i] : off[i]+n[i]]. Its room is its degree: Multiset kernels are
// symmetric, so each edge carries one candidate to each end and a vertex
// receives exactly its degree in candidates. The slots are laid out once
// per job, so an iteration allocates nothing. Vertex i's candidates so far
// are slot[off[i]:end[i]]; adding one touches end[i], off[i+1] (its
// bound) and the slot.
//
// A vertex's slots are written by the worker that owns it: in the push by
// the task that pulls its local in-neighbours, in the apply by the lane
// that folds the RefRD segments and ValRD pairs for it. Hub pieces pulled
// by several tasks, and the sparse push of --no-pull, reserve their range
// with one atomic add.
type bag struct {
	off  []uint64 // len n+1: vertex i's room is [off[i], off[i+1])
	end  []uint64 // len n
	slot []uint64
}

func newBag(deg []uint32) *bag {
	b := &bag{}
	b.reset(deg)
	return b
}

// reset lays the bag out, empty, for vertices of degrees deg, reusing its
// arrays.
func (b *bag) reset(deg []uint32) {
	b.off, b.end = grow(b.off, len(deg)+1), grow(b.end, len(deg))
	b.off[0] = 0
	for i, d := range deg {
		b.off[i+1] = b.off[i] + uint64(d)
	}
	copy(b.end, b.off)
	b.slot = grow(b.slot, int(b.off[len(deg)]))
}

// bytes is the bag's size in the CN's cache.
func (b *bag) bytes() uint64 { return 8 * uint64(len(b.off)+len(b.end)+len(b.slot)) }

// reserve takes room for m candidates of vertex i, atomically when shared.
func (b *bag) reserve(i uint32, m int, shared bool) (uint64, error) {
	var at uint64
	if shared {
		at = atomic.AddUint64(&b.end[i], uint64(m)) - uint64(m)
	} else {
		at = b.end[i]
		b.end[i] += uint64(m)
	}
	if at+uint64(m) > b.off[i+1] {
		return 0, b.overflow(i)
	}
	return at, nil
}

func (b *bag) overflow(i uint32) error {
	return errors.Errorf("rank: own vertex %d received more than its %d candidates (a multiset kernel needs a symmetric store)", i, b.off[i+1]-b.off[i])
}

// gather adds vertex i's candidates from its in-neighbours src, the
// contributions of the chunk's vertices (from base on).
func (b *bag) gather(i uint32, contrib []uint64, base uint32, src []uint32, shared bool) error {
	at, err := b.reserve(i, len(src), shared)
	if err != nil {
		return err
	}
	s := b.slot[at : at+uint64(len(src))]
	for j, u := range src {
		s[j] = contrib[u-base]
	}
	return nil
}

// put adds vertex i's candidates vals (not shared).
func (b *bag) put(i uint32, vals []uint64) error {
	at, err := b.reserve(i, len(vals), false)
	if err != nil {
		return err
	}
	copy(b.slot[at:], vals)
	return nil
}

// scatter adds candidate c to every destination of dst (own vertices,
// from base on).
func (b *bag) scatter(base uint32, dst []uint32, c uint64, shared bool) error {
	if shared {
		for _, v := range dst {
			at, err := b.reserve(v-base, 1, true)
			if err != nil {
				return err
			}
			b.slot[at] = c
		}
		return nil
	}
	end, off, slot := b.end, b.off, b.slot
	for _, v := range dst {
		i := v - base
		at := end[i]
		if at >= off[i+1] {
			return b.overflow(i)
		}
		slot[at] = c
		end[i] = at + 1
	}
	return nil
}

// pairs adds the pairs whose destination is in [lo, hi).
func (b *bag) pairs(base, lo, hi uint32, dst []uint32, val []uint64) error {
	end, off, slot := b.end, b.off, b.slot
	val = val[:len(dst)]
	for j, v := range dst {
		if v < lo || v >= hi {
			continue
		}
		i := v - base
		at := end[i]
		if at >= off[i+1] {
			return b.overflow(i)
		}
		slot[at] = val[j]
		end[i] = at + 1
	}
	return nil
}

// update sets next from the bags of vertices [x, y) (lo+x, ... in the
// graph) and empties them.
func (b *bag) update(u algo.BagUpdater, lo, x, y uint32, old, next []uint64, it *algo.Iteration) {
	u.UpdateBags(lo+x, algo.Bags{Start: b.off[x:y], End: b.end[x:y], Slots: b.slot[:b.off[y]]}, old, next, it)
	copy(b.end[x:y], b.off[x:y])
}

// checkBag is the engine's check of a Multiset kernel's program.
func checkBag(s algo.Spec, p algo.Program) (algo.BagUpdater, error) {
	u, ok := algo.BagUpdaterOf(p)
	switch {
	case !ok:
		return nil, errors.New("rank: the program has a multiset reduction but no UpdateBag")
	case !s.AllActive || !s.Symmetric:
		return nil, errors.New("rank: a multiset kernel must be AllActive and Symmetric")
	case s.Edge == algo.Custom:
		return nil, errors.New("rank: a multiset kernel cannot have a custom edge map")
	}
	return u, nil
}

// checkKernel tells whether configuration c runs a kernel with spec s in
// mode m (NeedsOf): a Multiset kernel in the design's mode needs the
// collaborative update's mailboxes, applied by the owner, where the value
// pull does not serve it, since no word on DM (an inbox, a partial
// accumulator) holds a multiset (the baselines pull it). Every mode runs
// a Triangles kernel (the baselines read whole lists through their plain
// CSR's offset words).
func checkKernel(m mode, c Config, s algo.Spec) error {
	if s.Reduce != algo.Multiset || m.plain() { // the baselines pull the labels (valuepull.go)
		return nil
	}
	if m.remote(&c, true) != viaMailboxes || c.NoValRD || c.ValRDApply == "mn" {
		return paramErrorf("a kernel with a multiset reduction (every candidate kept, as CDLP's labels) runs in --mode %s only without --no-collab, --no-valrd or --valrd-apply mn: the value pull may not serve it (--no-value-pull, or a graph beyond its bound) and then only the collaborative update's mailboxes carry every candidate to its owner", ModeDMG)
	}
	return nil
}
