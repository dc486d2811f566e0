package csr

import (
	"math"
	"math/bits"
	"slices"
	"sort"
)

// A staged read maps the external ids without any CN holding them all.
// The id space is cut into C slices of about |V|/C ids each; CN k
// gathers slice k of every CN's ids, and the dense ids of slice k follow
// the counts of the slices before it (ascending external order, as a
// whole-graph reader numbers them). The steps:
//
//   - step 1: each CN sketches its ids as it parses (idSketch: a uniform
//     sample of its distinct ids and an estimate of their number); the
//     sketches give every rank the same slices, even ranges of the id
//     space when a bitmap of it costs no more than a word per id, else
//     ranges between quantiles of the sampled ids (sparse ids).
//   - step 2: each CN collects its ids one slice at a time (a bitmap of
//     the slice, or its sorted distinct ids) and writes each to DM.
//   - step 3: CN k merges slice k of every CN's and writes it back, and
//     says how many ids it holds.
//
// Each CN then maps its edges' ids slice by slice, holding one slice's
// map at a time, in place: a dense id is never more than its external
// one (it counts the distinct ids below it), so slices mapped in
// ascending order never map an id twice. No CN holds more than a slice
// of the ids (1/C of the id space's bits, or of the ids) at any time.

// sketchSize is how many ids a CN's sketch keeps.
const sketchSize = 4096

// idSketch is a bottom-k sketch of a set of ids: the sketchSize ids of
// least hash. It is a uniform sample of the distinct ids whatever their
// multiplicity, the union of sketches is the sketch of the union, and
// the k-th least hash estimates how many ids there are.
type idSketch struct {
	Hash []uint64 `json:"-"` // ascending (a payload carries the ids alone: union adds them again)
	ID   []uint64 // the ids of the hashes
}

// mix is a 64-bit finaliser (splitmix64's): the sketch's hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// addSketch adds ids to s.
func addSketch[T uint32 | uint64](s *idSketch, ids []T) {
	for _, x := range ids {
		h := mix(uint64(x))
		if len(s.Hash) == sketchSize && h >= s.Hash[sketchSize-1] {
			continue
		}
		i, found := slices.BinarySearch(s.Hash, h)
		if found { // this id (mix is a bijection)
			continue
		}
		s.Hash, s.ID = slices.Insert(s.Hash, i, h), slices.Insert(s.ID, i, uint64(x))
		if len(s.Hash) > sketchSize {
			s.Hash, s.ID = s.Hash[:sketchSize], s.ID[:sketchSize]
		}
	}
}

// addBlock adds the ids of both endpoints of a block's edges.
func (s *idSketch) addBlock(b *edgeBlock) {
	addSketch(s, b.s32)
	addSketch(s, b.d32)
	addSketch(s, b.s64)
	addSketch(s, b.d64)
}

// union is the sketch of the union of every CN's ids: their ids added
// to one sketch.
func union(sk []idSketch) idSketch {
	var u idSketch
	for _, s := range sk {
		addSketch(&u, s.ID)
	}
	return u
}

// estimate is how many distinct ids the sketch stands for: exact when it
// kept them all.
func (s *idSketch) estimate() uint64 {
	if len(s.Hash) < sketchSize {
		return uint64(len(s.Hash))
	}
	frac := float64(s.Hash[sketchSize-1]) / math.Exp2(64)
	return uint64(float64(sketchSize-1) / max(frac, 1e-300))
}

// idSlices are the C slices of the id space: slice k holds the ids x
// with lo[k] ≤ x < lo[k+1] (the last, every id from lo[C-1] on). With
// bitmap, slice k is the 64·words ids from 64·words·k.
type idSlices struct {
	lo     []uint64
	bitmap bool
	words  uint64 // a slice's bitmap, in words
	// per is how many bitmap slices a CN holds at once (in a pass over
	// its edges): as many as |V|/C words hold, at least one.
	per int
}

// newIDSlices cuts the id space of ids up to maxID, sketched by sk, into
// cns slices.
func newIDSlices(sk idSketch, maxID uint64, cns int) idSlices {
	if maxID>>6+1 <= sk.estimate()+1<<17 {
		sl := bitmapSlices(maxID, cns)
		sl.per = int(max(1, min(uint64(cns), sk.estimate()/uint64(cns)/sl.words)))
		return sl
	}
	sl := idSlices{lo: make([]uint64, cns)}
	ids := slices.Sorted(slices.Values(sk.ID))
	for k := 1; k < cns && len(ids) > 0; k++ {
		sl.lo[k] = ids[k*len(ids)/cns] // ascending, as the ids are
	}
	return sl
}

// bitmapSlices cuts the ids 0..maxID into cns slices of bitmaps, a
// slice per pass (a generator's ids, which every CN knows without a
// sketch, are sliced so too).
func bitmapSlices(maxID uint64, cns int) idSlices {
	sl := idSlices{lo: make([]uint64, cns), bitmap: true, per: 1}
	sl.words = (maxID>>6 + uint64(cns)) / uint64(cns)
	for k := range sl.lo {
		sl.lo[k] = 64 * sl.words * uint64(k)
	}
	return sl
}

// span is slice k as a range: x is in it when x-lo ≤ span (unsigned);
// ok is false for an empty slice.
func (sl *idSlices) span(k int) (lo, span uint64, ok bool) { return sl.spanOf(k, k+1) }

// spanOf is the slices [a, b) as one range, as span's.
func (sl *idSlices) spanOf(a, b int) (lo, span uint64, ok bool) {
	lo = sl.lo[a]
	if b == len(sl.lo) {
		return lo, math.MaxUint64 - lo, true
	}
	if sl.lo[b] == lo {
		return 0, 0, false
	}
	return lo, sl.lo[b] - 1 - lo, true
}

// of is the slice that holds id x.
func (sl *idSlices) of(x uint64) int {
	return sort.Search(len(sl.lo)-1, func(k int) bool { return sl.lo[k+1] > x })
}

// idPiece is one slice's map: its range, its first dense id, and its
// ids as a bitmap (with a running count of set bits per word) or as a
// sorted list.
type idPiece struct {
	lo, span uint64
	base     uint32
	bits     []uint64
	rank     []uint32
	ids      []uint64
}

// newBitmapPiece is the piece of a slice's bitmap.
func newBitmapPiece(lo, span uint64, base uint32, bm []uint64) *idPiece {
	pc := &idPiece{lo: lo, span: span, base: base, bits: bm, rank: make([]uint32, len(bm))}
	c := base
	for i, w := range bm {
		pc.rank[i] = c
		c += uint32(bits.OnesCount64(w))
	}
	return pc
}

// has says whether x falls in the slice.
func (pc *idPiece) has(x uint64) bool { return x-pc.lo <= pc.span }

// dense returns the dense id of x (in the slice) and whether x is an id.
func (pc *idPiece) dense(x uint64) (uint32, bool) {
	if pc.bits == nil {
		i, ok := slices.BinarySearch(pc.ids, x)
		return pc.base + uint32(i), ok
	}
	j := x - pc.lo
	if j>>6 >= uint64(len(pc.bits)) { // past the ids (the last slice's span is open)
		return 0, false
	}
	w, b := pc.bits[j>>6], uint64(1)<<(j&63)
	return pc.rank[j>>6] + uint32(bits.OnesCount64(w&(b-1))), w&b != 0
}

// external returns the external id of dense id v (of the slice's).
func (pc *idPiece) external(v uint32) uint64 {
	if pc.bits == nil {
		return pc.ids[v-pc.base]
	}
	i, _ := slices.BinarySearch(pc.rank, v+1) // the word after v's
	i--
	w := pc.bits[i]
	for range v - pc.rank[i] {
		w &= w - 1
	}
	return pc.lo + uint64(i)<<6 + uint64(bits.TrailingZeros64(w))
}

// appendAll appends the slice's ids to out, ascending.
func (pc *idPiece) appendAll(out []uint64) []uint64 {
	if pc.bits == nil {
		return append(out, pc.ids...)
	}
	for i, w := range pc.bits {
		for w != 0 {
			out = append(out, pc.lo+uint64(i)<<6+uint64(bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return out
}

// mapPiece maps the ids of a that fall in the piece's slice to dense
// ones, in place.
func mapPiece[T uint32 | uint64](a []T, pc *idPiece) {
	lo, span := pc.lo, pc.span
	if pc.bits == nil {
		for i, x := range a {
			if u := uint64(x); u-lo <= span {
				j, _ := slices.BinarySearch(pc.ids, u)
				a[i] = T(pc.base + uint32(j))
			}
		}
		return
	}
	bm, rank := pc.bits, pc.rank
	for i, x := range a {
		// Every id of the slice is in the bitmap (the last slice's span
		// is open, but no id is past its bitmap).
		if j := uint64(x) - lo; j <= span && j>>6 < uint64(len(bm)) {
			a[i] = T(rank[j>>6] + uint32(bits.OnesCount64(bm[j>>6]&(1<<(j&63)-1))))
		}
	}
}

// mergeSorted merges two sorted lists of distinct ids into dst (reused),
// each id once.
func mergeSorted(dst, a, b []uint64) []uint64 {
	dst = dst[:0]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			dst = append(dst, a[i])
			i++
		case a[i] > b[j]:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, a[i])
			i, j = i+1, j+1
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}
