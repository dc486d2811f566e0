// Package reduce holds the loops every edge of a DMG job goes through:
// the reduction of a kernel (sum or minimum, over float64 or uint64 value
// words) fused with its edge map (the candidate is the source's
// contribution, the contribution plus the edge weight, or, for a Custom
// edge map, a candidate the kernel computed per edge). OpOf makes a
// kernel's Op from its algo.Spec. The engine (package rank) runs these
// loops (Scatter, Gather, FoldPairs, ...) over whole runs of edges, so the
// choice of reduction and edge map is one switch per run, and the loop
// itself has no call, no map operation, no allocation and no atomic per
// edge — except the loops into values that other goroutines update at the
// same time (ScatterAtomic, ScatterAtomicBelow, KeepBelow, GatherRelaxed).
// The update coordinator (package update) uses Op's per-edge steps
// (EdgeCandidate, Combine, Better). A Multiset reduction (Op.IsBag)
// combines nothing: the engine keeps every candidate.
//
// Values are 64-bit words. Float reductions view them as float64 (the
// words are the IEEE bits); integer ones as uint64. The Min reduction on
// floats requires values that are not NaN.
package reduce

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/dmg-hpc/dmg/algo"
)

// kind is a reduction over a value type.
type kind uint8

const (
	sumF kind = iota
	sumU
	minF
	minU
	bag // algo.Multiset: nothing combines; the engine keeps every candidate
)

// Op is a kernel's reduction and edge map, with its identity.
type Op struct {
	k        kind
	weighted bool // the edge map adds the weight (algo.AddWeight)
	identity uint64
}

// OpOf is the Op of a kernel's spec. Custom edge maps reduce candidates
// the kernel computed (ScatterCands and friends), so they behave as Carry
// here.
func OpOf(s algo.Spec) Op {
	o := Op{identity: s.Identity, weighted: s.Edge == algo.AddWeight}
	switch {
	case s.Reduce == algo.Multiset:
		o.k = bag
	case s.Reduce == algo.Sum && s.Float:
		o.k = sumF
	case s.Reduce == algo.Sum:
		o.k = sumU
	case s.Float:
		o.k = minF
	default:
		o.k = minU
	}
	return o
}

// Identity is the neutral element of the reduction.
func (o Op) Identity() uint64 { return o.identity }

// IsIntSum tells an integer sum, which remote memory applies with FAA.
func (o Op) IsIntSum() bool { return o.k == sumU }

// IsBag tells a Multiset reduction: candidates are kept, never combined,
// so no loop of this package that reduces applies to it (Candidate and
// EdgeCandidate do).
func (o Op) IsBag() bool { return o.k == bag }

// IsMin tells a minimum from a sum.
func (o Op) IsMin() bool { return o.k == minF || o.k == minU }

// Combine reduces two candidates.
func (o Op) Combine(a, b uint64) uint64 {
	switch o.k {
	case sumF:
		return math.Float64bits(math.Float64frombits(a) + math.Float64frombits(b))
	case sumU:
		return a + b
	case minF:
		return math.Float64bits(min(math.Float64frombits(a), math.Float64frombits(b)))
	}
	return min(a, b)
}

// Better reports whether combining cand into old changes it (for minima:
// cand is smaller; for sums: cand is not the identity).
func (o Op) Better(cand, old uint64) bool {
	switch o.k {
	case minF:
		return math.Float64frombits(cand) < math.Float64frombits(old)
	case minU:
		return cand < old
	}
	return cand != o.identity
}

// Candidate is the edge map for one edge of weight w (ignored unless the
// map adds the weight).
func (o Op) Candidate(c uint64, w float32) uint64 {
	if o.weighted {
		return math.Float64bits(math.Float64frombits(c) + float64(w))
	}
	return c
}

// EdgeCandidate is the candidate along edge i of a run from a source with
// contribution c: the given per-edge candidate (cands non-nil, Custom edge
// maps), else the edge map of c and the edge's weight.
func (o Op) EdgeCandidate(i int, c uint64, w []float32, cands []uint64) uint64 {
	switch {
	case cands != nil:
		return cands[i]
	case o.weighted:
		return o.Candidate(c, w[i])
	}
	return c
}

// Weighted says the candidates depend on the edge weights.
func (o Op) Weighted() bool { return o.weighted }

// floats views words as float64 (the same 8 bytes).
func floats(w []uint64) []float64 {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&w[0])), len(w))
}

// Scatter reduces the candidates from a source with contribution c along
// the edges to dst (weights w, nil unless weighted) into acc[d-base]. The
// caller owns those accumulators: no other goroutine touches them.
func (o Op) Scatter(acc []uint64, base uint32, dst []uint32, w []float32, c uint64) {
	if o.weighted {
		a, x := floats(acc), math.Float64frombits(c)
		w = w[:len(dst)]
		switch o.k {
		case sumF:
			for i, d := range dst {
				a[d-base] += x + float64(w[i])
			}
		case minF:
			for i, d := range dst {
				a[d-base] = min(a[d-base], x+float64(w[i]))
			}
		default:
			for i, d := range dst {
				acc[d-base] = o.Combine(acc[d-base], o.Candidate(c, w[i]))
			}
		}
		return
	}
	switch o.k {
	case sumF:
		a, x := floats(acc), math.Float64frombits(c)
		for _, d := range dst {
			a[d-base] += x
		}
	case sumU:
		for _, d := range dst {
			acc[d-base] += c
		}
	case minF:
		a, x := floats(acc), math.Float64frombits(c)
		for _, d := range dst {
			a[d-base] = min(a[d-base], x)
		}
	case minU:
		for _, d := range dst {
			acc[d-base] = min(acc[d-base], c)
		}
	}
}

// ScatterCands reduces the given per-edge candidates into acc[d-base]
// (Custom edge maps).
func (o Op) ScatterCands(acc []uint64, base uint32, dst []uint32, cands []uint64) {
	cands = cands[:len(dst)]
	switch o.k {
	case sumF:
		a, cs := floats(acc), floats(cands)
		for i, d := range dst {
			a[d-base] += cs[i]
		}
	case sumU:
		for i, d := range dst {
			acc[d-base] += cands[i]
		}
	case minF:
		a, cs := floats(acc), floats(cands)
		for i, d := range dst {
			a[d-base] = min(a[d-base], cs[i])
		}
	case minU:
		for i, d := range dst {
			acc[d-base] = min(acc[d-base], cands[i])
		}
	}
}

// ScatterAtomic is Scatter into accumulators that other goroutines update
// at the same time (the sparse push, the baselines): a CAS per edge. A
// destination whose accumulator leaves the identity here for the first
// time is appended to touched, so each destination is reported by exactly
// one caller per reset (for minima; sums report at least once).
func (o Op) ScatterAtomic(acc []uint64, base uint32, dst []uint32, w []float32, c uint64, cands []uint64, touched []uint32) []uint32 {
	for i, d := range dst {
		cand := o.EdgeCandidate(i, c, w, cands)
		if o.casReduce(&acc[d-base], cand) {
			touched = append(touched, d)
		}
	}
	return touched
}

// ScatterAtomicBelow is ScatterAtomic for monotone kernels: a candidate
// not below the destination's current value vals[d-base] is dropped
// without an atomic.
func (o Op) ScatterAtomicBelow(acc, vals []uint64, base uint32, dst []uint32, w []float32, c uint64, cands []uint64, touched []uint32) ([]uint32, uint64) {
	var dropped uint64
	for i, d := range dst {
		cand := o.EdgeCandidate(i, c, w, cands)
		if !o.Better(cand, vals[d-base]) {
			dropped++
			continue
		}
		if o.casReduce(&acc[d-base], cand) {
			touched = append(touched, d)
		}
	}
	return touched, dropped
}

// KeepBelow filters a run for another chunk against bound, an upper bound
// of every destination's value (indexed by vertex id) that other
// goroutines lower concurrently: a minimum's candidate not below its
// destination's bound changes nothing and is dropped before it is sent.
// The candidates kept are appended, with their destinations, to dst and
// cands, and each lowers its destination's bound, since it will be
// applied before the iteration ends (a lost race keeps a higher bound,
// which is still one). It returns the appended slices and the count
// dropped.
func (o Op) KeepBelow(bound []uint64, run []uint32, w []float32, c uint64, given []uint64, dst []uint32, cands []uint64) ([]uint32, []uint64, uint64) {
	var dropped uint64
	for i, d := range run {
		cand := o.EdgeCandidate(i, c, w, given)
		if !o.Better(cand, atomic.LoadUint64(&bound[d])) {
			dropped++
			continue
		}
		atomic.StoreUint64(&bound[d], cand)
		dst, cands = append(dst, d), append(cands, cand)
	}
	return dst, cands, dropped
}

// casReduce folds cand into *a atomically and reports whether *a was the
// identity before.
func (o Op) casReduce(a *uint64, cand uint64) bool {
	for {
		old := atomic.LoadUint64(a)
		if !o.Better(cand, old) {
			return false
		}
		if atomic.CompareAndSwapUint64(a, old, o.Combine(old, cand)) {
			return old == o.identity
		}
	}
}

// FoldAtomic folds one value into a shared accumulator (a partial result of
// a split hub, a RefRD edge applied by the puller).
func (o Op) FoldAtomic(a *uint64, v uint64) { o.casReduce(a, v) }

// Gather is the pull: it reduces, into acc, the candidates from the
// sources src (contributions contrib[u-base], weights w along u→v) of one
// destination. Inactive sources hold the identity, which the reduction
// ignores. With first (traversals), it stops at the first source whose
// contribution is not the identity, all candidates being equal.
//
// active, when not nil, is the bitmap of the active sources (bit u-base):
// the inactive ones are skipped before their contribution is loaded. The
// bitmap is 64 times smaller than the contributions and stays in cache,
// where a chunk's contributions do not: on a kron:20 chunk the load of
// contrib[u-base] is nine tenths of the loop's time.
func (o Op) Gather(acc uint64, contrib []uint64, active []uint64, base uint32, src []uint32, w []float32, first bool) uint64 {
	if active != nil {
		return o.gatherActive(acc, contrib, active, base, src, w, first)
	}
	if first {
		for i, u := range src {
			if c := contrib[u-base]; c != o.identity {
				if o.weighted {
					return o.Combine(acc, o.Candidate(c, w[i]))
				}
				return o.Combine(acc, c)
			}
		}
		return acc
	}
	if o.weighted {
		w = w[:len(src)]
		switch o.k {
		case sumF:
			s, cf := math.Float64frombits(acc), floats(contrib)
			for i, u := range src {
				s += cf[u-base] + float64(w[i])
			}
			return math.Float64bits(s)
		case minF:
			s, cf := math.Float64frombits(acc), floats(contrib)
			for i, u := range src {
				s = min(s, cf[u-base]+float64(w[i]))
			}
			return math.Float64bits(s)
		}
		for i, u := range src {
			acc = o.Combine(acc, o.Candidate(contrib[u-base], w[i]))
		}
		return acc
	}
	switch o.k {
	case sumF:
		s, cf := math.Float64frombits(acc), floats(contrib)
		for _, u := range src {
			s += cf[u-base]
		}
		return math.Float64bits(s)
	case sumU:
		for _, u := range src {
			acc += contrib[u-base]
		}
	case minF:
		s, cf := math.Float64frombits(acc), floats(contrib)
		for _, u := range src {
			s = min(s, cf[u-base])
		}
		return math.Float64bits(s)
	case minU:
		for _, u := range src {
			acc = min(acc, contrib[u-base])
		}
	}
	return acc
}

// GatherRelaxed is Gather for a minimum (IsMin) over contributions that
// other goroutines may lower while it reads them (a relaxed iteration:
// algo.Spec.Relax): every load is atomic, which on amd64 and arm64 is
// the plain load Gather makes.
func (o Op) GatherRelaxed(acc uint64, contrib []uint64, base uint32, src []uint32, w []float32) uint64 {
	if o.k == minF {
		s := math.Float64frombits(acc)
		if o.weighted {
			w = w[:len(src)]
			for i, u := range src {
				s = min(s, math.Float64frombits(atomic.LoadUint64(&contrib[u-base]))+float64(w[i]))
			}
			return math.Float64bits(s)
		}
		for _, u := range src {
			s = min(s, math.Float64frombits(atomic.LoadUint64(&contrib[u-base])))
		}
		return math.Float64bits(s)
	}
	if o.weighted {
		w = w[:len(src)]
		for i, u := range src {
			acc = o.Combine(acc, o.Candidate(atomic.LoadUint64(&contrib[u-base]), w[i]))
		}
		return acc
	}
	for _, u := range src {
		acc = min(acc, atomic.LoadUint64(&contrib[u-base]))
	}
	return acc
}

// NoID is the 4-byte word of a minimum over vertex ids that holds no id:
// the identity's (NarrowID).
const NoID = math.MaxUint32

// NarrowID is a word of a minimum over vertex ids (algo.Spec.VertexIDs) in
// 4 bytes: the id, or NoID for the identity. Every id of a graph of fewer
// than NoID vertices fits.
func NarrowID(x uint64) uint32 { return uint32(min(x, NoID)) }

// WidenID is NarrowID's inverse: id x's word, or the identity for NoID.
func WidenID(x uint32) uint64 {
	if x == NoID {
		return math.MaxUint64
	}
	return uint64(x)
}

// MinIDsRelaxed is GatherRelaxed for a minimum over vertex ids held in 4
// bytes (NarrowID): the least of acc and the sources' ids[u], half the
// bytes loaded at random.
func MinIDsRelaxed(acc uint32, ids []uint32, src []uint32) uint32 {
	for _, u := range src {
		acc = min(acc, atomic.LoadUint32(&ids[u]))
	}
	return acc
}

func (o Op) gatherActive(acc uint64, contrib []uint64, active []uint64, base uint32, src []uint32, w []float32, first bool) uint64 {
	for i, u := range src {
		j := u - base
		if active[j>>6]&(1<<(j&63)) == 0 {
			continue
		}
		c := contrib[j]
		if o.weighted {
			c = o.Candidate(c, w[i])
		}
		acc = o.Combine(acc, c)
		if first {
			return acc
		}
	}
	return acc
}

// FoldPairs reduces (destination, candidate) pairs (ValRD, already mapped
// by the edge) into acc[d-base] for the destinations in [lo, hi),
// skipping the others (each lane of the owner takes its own).
func (o Op) FoldPairs(acc []uint64, base, lo, hi uint32, dst []uint32, vals []uint64) {
	vals = vals[:len(dst)]
	switch o.k {
	case sumF:
		a, v := floats(acc), floats(vals)
		for i, d := range dst {
			if d-lo < hi-lo {
				a[d-base] += v[i]
			}
		}
	case minU:
		for i, d := range dst {
			if d-lo < hi-lo {
				acc[d-base] = min(acc[d-base], vals[i])
			}
		}
	default:
		for i, d := range dst {
			if d-lo < hi-lo {
				acc[d-base] = o.Combine(acc[d-base], vals[i])
			}
		}
	}
}

// FoldWords reduces vals[i] into acc[i] (an inbox range into the cache).
func (o Op) FoldWords(acc, vals []uint64) {
	vals = vals[:len(acc)]
	switch o.k {
	case sumF:
		a, v := floats(acc), floats(vals)
		for i := range a {
			a[i] += v[i]
		}
	case sumU:
		for i := range acc {
			acc[i] += vals[i]
		}
	default:
		for i := range acc {
			acc[i] = o.Combine(acc[i], vals[i])
		}
	}
}
