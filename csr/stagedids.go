package csr

import (
	"encoding/json"
	"math/bits"
	"slices"

	"github.com/pkg/errors"
)

// A staged read's steps 2 and 3: the id map, a slice per CN (idslices.go
// says how). The ids' region of the staging memory (the first Open) holds,
// from idBase: with bitmaps, every CN's bitmap of every slice (CN c's of
// slice k at (c·C+k)·words words in) and then, at mergeBase, the merged
// bitmaps (slice k's at k·words); with lists, every CN's sorted ids slice
// after slice (CN c's from localOff[c], room for 2·edges_c), and at
// mergeBase the merged slices (slice k's after the CNs' slices before k).
// The spilled edges follow, from spillBase.

// endpoints calls f with the ids of this CN's edges' endpoints: its kept
// blocks' or its spill's (external until mapped).
func (s *staged) endpoints(f func(a32 []uint32, a64 []uint64)) error {
	in := s.in
	switch {
	case in.kept.ok():
		for _, b := range in.kept.blocks {
			f(b.s, b.s64)
			f(b.d, b.d64)
		}
	case in.spill != nil:
		return in.spill.endpoints(f)
	}
	return nil
}

// writeSlices is step 2's work on this CN: its ids collected and written
// one slice at a time. With lists it returns where each slice starts in
// its region (the step's payload), the end last.
func (s *staged) writeSlices() ([]byte, error) {
	p, sl := s.p, &s.p.slices
	if p.dense > 0 {
		return nil, nil // a generator's ids: the identity
	}
	if sl.bitmap { // sl.per slices a pass
		buf := make([]uint64, sl.words*uint64(sl.per))
		for _, g := range s.groups(nil) {
			bm := buf[:sl.words*uint64(g[1]-g[0])]
			clear(bm)
			lo, span, _ := sl.spanOf(g[0], g[1])
			err := s.endpoints(func(a32 []uint32, a64 []uint64) {
				setBits(bm, a32, lo, span)
				setBits(bm, a64, lo, span)
			})
			if err == nil {
				err = writeWords(s.ids, p.idBase+8*sl.words*uint64(s.cn*p.cns+g[0]), bm)
			}
			if err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	pos := make([]uint64, p.cns+1)
	room := p.localOff[s.cn+1] - p.localOff[s.cn]
	set := &idSet{listMode: true, workers: s.in.o.Workers} // a slice's ids, compacted as they double
	for k := range p.cns {
		set.list, set.distinct = set.list[:0], 0
		if lo, span, ok := sl.span(k); ok {
			err := s.endpoints(func(a32 []uint32, a64 []uint64) {
				set.list = appendIn(appendIn(set.list, a32, lo, span), a64, lo, span)
				set.compactIfFull()
			})
			if err != nil {
				return nil, err
			}
			set.compact()
		}
		list := set.list
		pos[k+1] = pos[k] + uint64(len(list))
		if pos[k+1] > room {
			return nil, errors.Errorf("csr: %s changed while it was read (more ids than endpoints)", s.spec)
		}
		if err := writeWords(s.ids, p.idBase+8*(p.localOff[s.cn]+pos[k]), list); err != nil {
			return nil, err
		}
	}
	return json.Marshal(pos)
}

// setBits sets the bits of the ids of a that fall in the slice (lo,
// span) in its bitmap bm.
func setBits[T uint32 | uint64](bm []uint64, a []T, lo, span uint64) {
	for _, x := range a {
		if j := uint64(x) - lo; j <= span {
			bm[j>>6] |= 1 << (j & 63)
		}
	}
}

// appendIn appends the ids of a that fall in the slice (lo, span).
func appendIn[T uint32 | uint64](list []uint64, a []T, lo, span uint64) []uint64 {
	for _, x := range a {
		if uint64(x)-lo <= span {
			list = append(list, uint64(x))
		}
	}
	return list
}

// decodePositions decodes step 2's payloads with lists: where each CN's
// slices start in its region (nil with bitmaps).
func (p *stagePlan) decodePositions(all [][]byte) ([][]uint64, error) {
	if p.slices.bitmap {
		return nil, nil
	}
	pos, err := decodeAll[[]uint64](all, "id slices")
	if err != nil {
		return nil, err
	}
	for c, x := range pos {
		if len(x) != p.cns+1 || !slices.IsSorted(x) || x[0] != 0 || x[p.cns] > p.localOff[c+1]-p.localOff[c] {
			return nil, errors.Errorf("csr: CN %d's id slices are not %d positions in its room", c, p.cns+1)
		}
	}
	return pos, nil
}

// mergedAt is where the merged slice k starts, in words from mergeBase:
// after the room of the slices before it.
func (p *stagePlan) mergedAt(pos [][]uint64, k int) uint64 {
	if p.slices.bitmap {
		return p.slices.words * uint64(k)
	}
	var at uint64
	for c := range p.cns {
		at += pos[c][k]
	}
	return at
}

// mergeSlice is step 3's work on this CN: its slice of every CN's ids,
// merged and written back; it returns how many ids the slice has.
func (s *staged) mergeSlice(pos [][]uint64) (uint64, error) {
	p, k := s.p, s.cn
	if p.dense > 0 { // every id of the slice's below dense
		lo, span, ok := p.slices.span(k)
		if !ok || lo >= p.dense {
			return 0, nil
		}
		return min(span, p.dense-1-lo) + 1, nil
	}
	at := p.mergeBase + 8*p.mergedAt(pos, k)
	if p.slices.bitmap {
		bm := make([]uint64, p.slices.words)
		or := func(a, b uint64) uint64 { return a | b }
		for c := range p.cns {
			if err := readWords(s.ids, bm, p.idBase+8*p.slices.words*uint64(c*p.cns+k), or); err != nil {
				return 0, err
			}
		}
		var n uint64
		for _, w := range bm {
			n += uint64(bits.OnesCount64(w))
		}
		return n, writeWords(s.ids, at, bm)
	}
	var run, part, tmp []uint64
	for c := range p.cns {
		part = slices.Grow(part[:0], int(pos[c][k+1]-pos[c][k]))[:pos[c][k+1]-pos[c][k]]
		if err := readWords(s.ids, part, p.idBase+8*(p.localOff[c]+pos[c][k]), nil); err != nil {
			return 0, err
		}
		tmp = mergeSorted(tmp, run, part)
		run, tmp = tmp, run
	}
	return uint64(len(run)), writeWords(s.ids, at, run)
}

// slicedIDs is a staged read's map of the ids, in the staging memory: a
// slice at a time (piece), or an id at a time.
type slicedIDs struct {
	mem      Staging
	p        *stagePlan
	base     []uint32 // slice k's dense ids are [base[k], base[k+1])
	at       []uint64 // slice k's merged ids or bitmap, from mergeBase
	identity bool     // the ids are 0..n-1
}

// newSlicedIDs is the map from step 3's counts, or the error of more
// than MaxVertices ids.
func (s *staged) newSlicedIDs(pos [][]uint64, all [][]byte) (*slicedIDs, error) {
	p := s.p
	counts, n, err := p.vertices(all)
	if err != nil {
		return nil, err
	}
	m := &slicedIDs{mem: s.ids, p: p, base: make([]uint32, p.cns+1), at: make([]uint64, p.cns)}
	for k, c := range counts {
		m.at[k] = p.mergedAt(pos, k)
		m.base[k+1] = m.base[k] + uint32(c)
	}
	m.identity = n == 0 || uint64(n) == p.maxID+1
	return m, nil
}

func (m *slicedIDs) n() uint32 { return m.base[len(m.base)-1] }

// piece reads slice k's map (nil: an empty slice).
func (m *slicedIDs) piece(k int) (*idPiece, error) { return m.pieceOf(k, k+1) }

// pieceOf reads the map of the slices [a, b) as one (nil: no ids).
func (m *slicedIDs) pieceOf(a, b int) (*idPiece, error) {
	sl := &m.p.slices
	lo, span, ok := sl.spanOf(a, b)
	if !ok || m.base[b] == m.base[a] {
		return nil, nil
	}
	if sl.bitmap { // the merged bitmaps are in slice order, back to back
		bm := make([]uint64, sl.words*uint64(b-a))
		if err := readWords(m.mem, bm, m.p.mergeBase+8*m.at[a], nil); err != nil {
			return nil, err
		}
		return newBitmapPiece(lo, span, m.base[a], bm), nil
	}
	ids := make([]uint64, m.base[b]-m.base[a])
	for k := a; k < b; k++ {
		if err := readWords(m.mem, ids[m.base[k]-m.base[a]:m.base[k+1]-m.base[a]], m.p.mergeBase+8*m.at[k], nil); err != nil {
			return nil, err
		}
	}
	return &idPiece{lo: lo, span: span, base: m.base[a], ids: ids}, nil
}

// groups cuts the slices into runs a CN holds at once: sl.per slices
// with bitmaps; with lists, as many as hold |V|/C of m's ids, at least
// one (m is not read with bitmaps).
func (s *staged) groups(m *slicedIDs) [][2]int {
	p := s.p
	var gs [][2]int
	switch {
	case p.slices.bitmap:
		for a := 0; a < p.cns; a += p.slices.per {
			gs = append(gs, [2]int{a, min(p.cns, a+p.slices.per)})
		}
	default:
		limit := max(1, m.n()/uint32(p.cns))
		for a := 0; a < p.cns; {
			b := a + 1
			for b < p.cns && m.base[b+1]-m.base[a] <= limit {
				b++
			}
			gs = append(gs, [2]int{a, b})
			a = b
		}
	}
	return gs
}

// external returns the external id of dense id v (< n).
func (m *slicedIDs) external(v uint32) (uint64, error) {
	if m.identity {
		return uint64(v), nil
	}
	k, _ := slices.BinarySearch(m.base, v+1) // the slice after v's
	pc, err := m.piece(k - 1)
	if err != nil {
		return 0, err
	}
	return pc.external(v), nil
}

// dense returns the dense id of x and whether x is an id of the map.
func (m *slicedIDs) dense(x uint64) (uint32, bool, error) {
	if m.identity {
		return uint32(x), x < uint64(m.n()), nil
	}
	pc, err := m.piece(m.p.slices.of(x))
	if err != nil || pc == nil {
		return 0, false, err
	}
	d, ok := pc.dense(x)
	return d, ok, nil
}

// table returns the external ids by dense id (nil: identity), read a
// slice at a time.
func (m *slicedIDs) table() ([]uint64, error) {
	if m.identity {
		return nil, nil
	}
	ids := make([]uint64, 0, m.n())
	for k := range m.p.cns {
		pc, err := m.piece(k)
		if err != nil {
			return nil, err
		}
		if pc != nil {
			ids = pc.appendAll(ids)
		}
	}
	return ids, nil
}

// mapEdges maps this CN's edges' ids to dense ones, a group of slices at
// a time and in ascending order (kept blocks in memory, or the spill in
// DM).
func (s *staged) mapEdges(m *slicedIDs) error {
	if m.identity {
		return nil // 0..n-1: dense already, and 32-bit
	}
	in := s.in
	for _, g := range s.groups(m) {
		pc, err := m.pieceOf(g[0], g[1])
		if err != nil {
			return err
		}
		if pc == nil {
			continue
		}
		switch {
		case in.kept.ok():
			in.kept.eachBlock(in.o.Workers, func(b *keptBlock) {
				mapPiece(b.s, pc)
				mapPiece(b.d, pc)
				mapPiece(b.s64, pc)
				mapPiece(b.d64, pc)
			})
		case in.spill != nil:
			if err := in.spill.mapPiece(pc); err != nil {
				return err
			}
		}
	}
	if in.kept.ok() {
		in.kept.narrow()
	}
	return nil
}

// stageIDs opens bytes of staging memory (the ids' region, and room for
// what follows) and takes steps 2 and 3: every CN's ids written a slice
// at a time (a CN that spills first writes its edges), and each slice
// merged by its CN. It returns the staged read, without the rows'
// region, and the map.
func stageIDs(st Stage, bytes uint64, p *stagePlan, in *stagedInput, cn int, spec string, r *stageRange) (*staged, *slicedIDs, error) {
	ids, err := st.Open(bytes)
	if err != nil {
		return nil, nil, err
	}
	s := &staged{p: p, ids: ids, cn: cn, in: in, spec: spec}
	if r.Spill {
		in.spill = &spill{mem: ids, off: p.spillBase + p.spillOff[cn], n: r.Edges, weighted: in.weighted}
		err = in.spill.write(in)
	}
	var payload []byte
	if err == nil {
		payload, err = s.writeSlices()
	}
	all, err := st.Step(err, payload)
	if err != nil {
		return nil, nil, err
	}
	pos, err := p.decodePositions(all)
	var count []byte
	if err == nil {
		var c uint64
		if c, err = s.mergeSlice(pos); err == nil {
			count, err = json.Marshal(c)
		}
	}
	if all, err = st.Step(err, count); err != nil {
		return nil, nil, err
	}
	m, err := s.newSlicedIDs(pos, all)
	if err != nil {
		return nil, nil, err
	}
	return s, m, nil
}
