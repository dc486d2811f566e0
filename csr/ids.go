package csr

import (
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// Text inputs name vertices by external 64-bit ids, and dense ids follow
// their ascending order. When the ids are small enough, their set is a
// bitmap with a running count of set bits per word, and an id's dense id
// is a lookup and a popcount instead of a binary search over the sorted
// ids (which cost the text readers more than parsing). Sparse id spaces
// (hashes, say) keep the sorted ids.

// bitmapFits reports whether a bitmap of the ids up to maxID costs no more
// than the edge lists that name them: at most 16 bytes per endpoint, plus
// 64 MiB.
func bitmapFits(maxID, endpoints uint64) bool {
	return maxID>>3 <= 16*endpoints+1<<26
}

// idMap maps external ids to dense ones, and back.
type idMap struct {
	n        uint32
	identity bool     // the ids are 0..n-1
	ids      []uint64 // sorted distinct ids; nil when identity, or with a bitmap alone
	// pc, when the ids fit a bitmap, is the bitmap of them with a running
	// count of set bits per word: a piece of one slice, the whole id
	// space (idslices.go). An id's dense id is a lookup and a popcount;
	// without ids, a dense id's external id is a select over the ranks,
	// and the map holds no table of the ids (a word per vertex).
	pc *idPiece
}

// external returns the external id of dense id v (< n).
func (m *idMap) external(v uint32) uint64 {
	switch {
	case m.identity:
		return uint64(v)
	case m.ids != nil:
		return m.ids[v]
	}
	return m.pc.external(v)
}

// table returns the external ids by dense id (nil: identity).
func (m *idMap) table() []uint64 {
	if m.identity || m.ids != nil {
		return m.ids
	}
	return m.pc.appendAll(make([]uint64, 0, m.n))
}

// dense returns the dense id of x and whether x is an id of the map.
func (m *idMap) dense(x uint64) (uint32, bool) {
	switch {
	case m.identity:
		return uint32(x), x < uint64(m.n)
	case m.pc != nil:
		return m.pc.dense(x)
	}
	i, ok := slices.BinarySearch(m.ids, x)
	return uint32(i), ok
}

// newIDMapBits makes the map of the ids set in a bitmap, or an error if
// they are more than MaxVertices.
func newIDMapBits(file string, bm []uint64) (*idMap, error) {
	var c uint64
	for _, w := range bm {
		c += uint64(bits.OnesCount64(w))
	}
	if c > MaxVertices {
		return nil, fileErr(file, "more than %d vertices (%d distinct ids); dense ids are 32-bit", uint64(MaxVertices), c)
	}
	m := &idMap{n: uint32(c)}
	if c == 0 {
		m.identity = true
		return m, nil
	}
	last := len(bm) - 1
	for bm[last] == 0 {
		last--
	}
	maxID := uint64(last)<<6 + 63 - uint64(bits.LeadingZeros64(bm[last]))
	if maxID == c-1 {
		m.identity = true
		return m, nil
	}
	m.pc = newBitmapPiece(0, maxID, 0, bm[:last+1])
	return m, nil
}

// newIDMapSorted makes the map of sorted distinct ids (at most
// MaxVertices), with a bitmap when it fits.
func newIDMapSorted(ids []uint64) *idMap {
	n := len(ids)
	if n == 0 || ids[n-1] == uint64(n-1) {
		return &idMap{n: uint32(n), identity: true}
	}
	m := &idMap{n: uint32(n), ids: ids}
	if maxID := ids[n-1]; bitmapFits(maxID, uint64(n)) {
		bm := make([]uint64, maxID>>6+1)
		setBits(bm, ids, 0, maxID)
		m.pc = newBitmapPiece(0, maxID, 0, bm)
	}
	return m
}

// idSet collects the distinct ids of a stream of edges: in a bitmap while
// the ids are small enough, else as a list compacted whenever it doubles.
type idSet struct {
	bits      []uint64
	list      []uint64
	listMode  bool
	distinct  int // of list after its last compaction
	endpoints uint64
	workers   int
}

func (s *idSet) add32(ids []uint32, maxID uint64) { addIDs(s, ids, maxID) }
func (s *idSet) add64(ids []uint64, maxID uint64) { addIDs(s, ids, maxID) }

// addBlock adds the ids of both endpoints of a block's edges to s.
func (s *idSet) addBlock(b *edgeBlock) {
	s.add32(b.s32, b.maxID)
	s.add32(b.d32, b.maxID)
	s.add64(b.s64, b.maxID)
	s.add64(b.d64, b.maxID)
}

// addIDs adds ids (all at most maxID) to s.
func addIDs[T uint32 | uint64](s *idSet, ids []T, maxID uint64) {
	s.grow(maxID, len(ids))
	if !s.listMode {
		bm := s.bits
		for _, x := range ids {
			bm[x>>6] |= 1 << (x & 63)
		}
		return
	}
	for _, x := range ids {
		s.list = append(s.list, uint64(x))
	}
	s.compactIfFull()
}

// grow makes room for ids up to maxID, switching to a list when the
// bitmap would no longer fit.
func (s *idSet) grow(maxID uint64, n int) {
	s.endpoints += uint64(n)
	if s.listMode {
		return
	}
	if !bitmapFits(maxID, s.endpoints) {
		s.listMode = true
		for i, w := range s.bits {
			for w != 0 {
				s.list = append(s.list, uint64(i)<<6+uint64(bits.TrailingZeros64(w)))
				w &= w - 1
			}
		}
		s.bits, s.distinct = nil, len(s.list)
		return
	}
	if words := int(maxID>>6) + 1; words > len(s.bits) {
		s.bits = append(s.bits, make([]uint64, max(words, 2*len(s.bits))-len(s.bits))...)
	}
}

func (s *idSet) compactIfFull() {
	if len(s.list) >= 2*s.distinct+1<<20 {
		s.compact()
	}
}

func (s *idSet) compact() {
	parallelSort(s.list, s.workers)
	s.list = slices.Compact(s.list)
	s.distinct = len(s.list)
}

// idMap returns the map of the collected ids.
func (s *idSet) idMap(file string) (*idMap, error) {
	if !s.listMode {
		return newIDMapBits(file, s.bits)
	}
	s.compact()
	if uint64(len(s.list)) > MaxVertices {
		return nil, fileErr(file, "more than %d vertices (%d distinct ids); dense ids are 32-bit", uint64(MaxVertices), len(s.list))
	}
	return newIDMapSorted(slices.Clip(s.list)), nil
}

// edgeBlock holds the edges of one block of a text edge list in input
// order, with external ids: 32-bit when they all fit.
type edgeBlock struct {
	s32, d32 []uint32
	s64, d64 []uint64
	w        []float64
	maxID    uint64
}

func (b *edgeBlock) len() int { return len(b.s32) + len(b.s64) }

// denseBlocks maps the external ids of blocks to dense ids in ascending
// external order, in parallel, and returns the number of vertices, their
// ids (nil: identity), the dense edge list and, if weighted, its
// weights. The blocks' edges are released as they are mapped.
func denseBlocks(file string, blocks []*edgeBlock, weighted bool, workers int) (n uint32, ids []uint64, src, dst []uint32, w []float64, err error) {
	var total int
	var maxID uint64
	for _, b := range blocks {
		total += b.len()
		maxID = max(maxID, b.maxID)
	}
	if total > 0 && !bitmapFits(maxID, 2*uint64(total)) {
		// A sparse id space: sort the ids.
		src64, dst64 := make([]uint64, 0, total), make([]uint64, 0, total)
		for _, b := range blocks {
			for i := range b.s32 {
				src64, dst64 = append(src64, uint64(b.s32[i])), append(dst64, uint64(b.d32[i]))
			}
			src64, dst64 = append(src64, b.s64...), append(dst64, b.d64...)
			if weighted {
				w = append(w, b.w...)
			}
			*b = edgeBlock{}
		}
		if ids, src, dst, err = densify(file, src64, dst64, workers); err != nil {
			return 0, nil, nil, nil, nil, err
		}
		n = uint32(len(ids))
		if ids == nil {
			n = uint32(maxID + 1)
		}
		return n, ids, src, dst, w, nil
	}
	var bm []uint64
	if total > 0 {
		bm = make([]uint64, maxID>>6+1)
	}
	// Set the ids' bits, a worker per block at a time: private bitmaps
	// merged when small, atomic ORs into one otherwise.
	private := len(bm) <= 1<<17 && workers > 1
	var mu sync.Mutex
	eachBlock(blocks, workers, func(next func() (int, bool)) {
		mine := bm
		if private {
			mine = make([]uint64, len(bm))
		}
		for {
			k, ok := next()
			if !ok {
				break
			}
			b := blocks[k]
			if private || workers <= 1 {
				for _, x := range b.s32 {
					mine[x>>6] |= 1 << (x & 63)
				}
				for _, x := range b.d32 {
					mine[x>>6] |= 1 << (x & 63)
				}
				for _, x := range b.s64 {
					mine[x>>6] |= 1 << (x & 63)
				}
				for _, x := range b.d64 {
					mine[x>>6] |= 1 << (x & 63)
				}
				continue
			}
			for _, x := range b.s32 {
				atomic.OrUint64(&mine[x>>6], 1<<(x&63))
			}
			for _, x := range b.d32 {
				atomic.OrUint64(&mine[x>>6], 1<<(x&63))
			}
			for _, x := range b.s64 {
				atomic.OrUint64(&mine[x>>6], 1<<(x&63))
			}
			for _, x := range b.d64 {
				atomic.OrUint64(&mine[x>>6], 1<<(x&63))
			}
		}
		if private {
			mu.Lock()
			for i, x := range mine {
				bm[i] |= x
			}
			mu.Unlock()
		}
	})
	m, err := newIDMapBits(file, bm)
	if err != nil {
		return 0, nil, nil, nil, nil, err
	}
	src, dst = make([]uint32, total), make([]uint32, total)
	if weighted {
		w = make([]float64, total)
	}
	start := make([]int, len(blocks)+1)
	for k, b := range blocks {
		start[k+1] = start[k] + b.len()
	}
	eachBlock(blocks, workers, func(next func() (int, bool)) {
		for {
			k, ok := next()
			if !ok {
				return
			}
			b, i := blocks[k], start[k]
			if m.identity {
				for j := range b.s32 {
					src[i+j], dst[i+j] = b.s32[j], b.d32[j]
				}
				for j := range b.s64 {
					src[i+j], dst[i+j] = uint32(b.s64[j]), uint32(b.d64[j])
				}
			} else {
				for j := range b.s32 {
					s, _ := m.dense(uint64(b.s32[j]))
					d, _ := m.dense(uint64(b.d32[j]))
					src[i+j], dst[i+j] = s, d
				}
				for j := range b.s64 {
					s, _ := m.dense(b.s64[j])
					d, _ := m.dense(b.d64[j])
					src[i+j], dst[i+j] = s, d
				}
			}
			if weighted {
				copy(w[i:], b.w)
			}
			*b = edgeBlock{}
		}
	})
	return m.n, m.table(), src, dst, w, nil
}

// eachBlock runs f on up to workers goroutines; next hands out the
// indices of blocks, each once.
func eachBlock(blocks []*edgeBlock, workers int, f func(next func() (int, bool))) {
	var k atomic.Int64
	next := func() (int, bool) {
		i := int(k.Add(1) - 1)
		return i, i < len(blocks)
	}
	if workers <= 1 || len(blocks) <= 1 {
		f(next)
		return
	}
	var wg sync.WaitGroup
	for range min(workers, len(blocks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(next)
		}()
	}
	wg.Wait()
}
