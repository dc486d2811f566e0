package dmstore

import (
	"fmt"
	"github.com/dmg-hpc/dmg/csr"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// LayoutConfig describes how a graph is to be laid out on the MNs.
type LayoutConfig struct {
	// Naive selects the plain CSR layout of the naive baseline (DESIGN.md
	// §8): per vertex an 8-byte offset word (the verbs.Addr of its first
	// edge record; the word of v+1 ends the list), then the edge records.
	Naive bool
	// EntrySize is the index entry size, 16, 32 or 64 (default 32; ignored
	// by Naive).
	EntrySize int
	// NoInPlace stores every edge list out of place (the --no-inplace
	// ablation).
	NoInPlace bool
	// Packed stores the out-of-place lists of up to MaxPackedDegree edges
	// packed (pack.go: about half the bytes), with no segment lengths: such
	// a list is read whole, and none is sent by reference (RefRD). Longer
	// lists stay records, addressable by edge. Not with Naive.
	Packed bool
	// Weights is how a weighted graph's weights are stored (WeightCode;
	// the zero value, float32, holds any weight). A narrower code must
	// hold every weight of the graph: Load refuses one it does not.
	Weights WeightCode
	// NumMN is the number of memory nodes.
	NumMN int
	// Bounds are the C+1 chunk boundaries (balance.Chunks): CN k owns
	// vertices [Bounds[k], Bounds[k+1]). Bounds[0] = 0, Bounds[C] = N.
	Bounds []uint32
	// AttrBytes lists the vertex attribute arrays the engine wants on DM,
	// by bytes per vertex (e.g. []int{8, 8} for current and next values).
	AttrBytes []int
	// BatchVertices is the loading batch size (default 1024): a batch's
	// index entries are written with one WRITE and its out-of-place lists
	// are contiguous on one MN.
	BatchVertices int
	// Granule is the round-robin granularity for edge lists (default
	// 1 MiB, less for graphs under 8·Granule·M bytes of edges): batches go
	// to one MN until it has received Granule bytes, then to the MN that
	// holds the fewest bytes of the layout so far (index and attributes
	// included).
	Granule uint64
	// Reserve is extra space per MN after the graph (mailboxes etc.),
	// counted by the capacity check. It starts at MN[m].End.
	Reserve uint64
	// Base, if not nil, has one offset per MN: the layout's regions in MN
	// m start at Base[m] rounded up to the 64-byte region alignment
	// instead of at 0. It places a second layout after a first one on the
	// same pools, as the reverse adjacency (a graph whose rows are
	// in-lists, Share.In, planned with the same Bounds, NumMN and
	// EntrySize and no AttrBytes) goes after the out-adjacency with
	// Base[m] = first.MN[m].End; the first layout's Reserve should then
	// be 0, as the second starts where the first one's reserve would. A
	// base only shifts the layout: which MN gets which batch, and every
	// size, is as without it.
	Base []uint64
}

// Alignments of the regions in an MN's pool.
const (
	regionAlign = 64
	batchAlign  = 8
)

// DefaultBatchVertices is LayoutConfig.BatchVertices' default, and the
// engine's default task where a round trip is cheap (rank.Config.Batch).
const DefaultBatchVertices = 1024

// EnsureDefaults fills in zero fields.
func (c *LayoutConfig) EnsureDefaults() {
	if c.EntrySize == 0 {
		c.EntrySize = 32
	}
	if c.BatchVertices == 0 {
		c.BatchVertices = DefaultBatchVertices
	}
	if c.Granule == 0 {
		c.Granule = 1 << 20
	}
}

// Validate checks the configuration against a graph of n vertices.
func (c *LayoutConfig) Validate(n uint32) error {
	if c.NumMN < 1 || c.NumMN > verbs.MaxMN+1 {
		return errors.Errorf("csr: %d memory nodes; expected 1..%d", c.NumMN, verbs.MaxMN+1)
	}
	if len(c.Bounds) < 2 {
		return errors.Errorf("csr: %d chunk boundaries; expected C+1 ≥ 2", len(c.Bounds))
	}
	if c.Bounds[0] != 0 || c.Bounds[len(c.Bounds)-1] != n || !slices.IsSorted(c.Bounds) {
		return errors.Errorf("csr: chunk boundaries must rise from 0 to N=%d, got %v", n, trimList(c.Bounds))
	}
	if !c.Naive && c.EntrySize != 16 && c.EntrySize != 32 && c.EntrySize != 64 {
		return errors.Errorf("csr: index entry size %d; expected 16, 32 or 64", c.EntrySize)
	}
	if c.Naive && c.Packed {
		return errors.New("csr: the naive layout's lists are never packed")
	}
	if c.BatchVertices < 1 {
		return errors.Errorf("csr: loading batch of %d vertices; expected ≥ 1", c.BatchVertices)
	}
	for i, a := range c.AttrBytes {
		if a < 1 {
			return errors.Errorf("csr: attribute array %d has %d bytes per vertex; expected ≥ 1", i, a)
		}
	}
	if len(c.Base) != 0 && len(c.Base) != c.NumMN {
		return errors.Errorf("csr: %d base offsets for %d memory nodes; expected none or one per MN", len(c.Base), c.NumMN)
	}
	for m, b := range c.Base {
		if b > verbs.MaxOffset+1 {
			return errors.Errorf("csr: base offset %#x of MN %d exceeds the 48-bit offset space", b, m)
		}
	}
	return nil
}

// start is where the layout's regions begin in MN m: Base[m] (0 without
// a base) rounded up to the region alignment.
func (c *LayoutConfig) start(m int) uint64 {
	if len(c.Base) == 0 {
		return 0
	}
	return alignUp(c.Base[m], regionAlign)
}

func trimList(b []uint32) string {
	if len(b) > 8 {
		return fmt.Sprint(b[:8]) + "..."
	}
	return fmt.Sprint(b)
}

// Batch is a loading batch: consecutive vertices of one chunk whose
// out-of-place edge lists (each preceded by its overflow table, if any)
// lie contiguously at EdgeOff on MN.
type Batch struct {
	Chunk     int
	Lo, Hi    uint32
	MN        int
	EdgeOff   uint64
	EdgeBytes uint64
}

// MNUsage is what one MN holds of a layout.
type MNUsage struct {
	// IndexBytes, AttrBytes and EdgeBytes are the bytes of each kind the
	// layout puts on the MN (alignment gaps and the base not counted).
	IndexBytes, AttrBytes, EdgeBytes uint64
	// Start is the offset of the layout's first region (LayoutConfig.Base
	// rounded up to 64 bytes; 0 without a base).
	Start uint64
	// End is the offset of the first byte after the graph (where Reserve
	// starts); like every offset of the layout it includes Start.
	End uint64
	// Needed is End + Reserve: the pool size this MN needs (for the
	// layouts before this one as well, when it has a base after them).
	Needed uint64
}

// Layout says where every piece of a graph lives on the MNs. Plan computes
// it from the graph and the configuration alone, so every rank computes the
// same Layout and can address any piece without asking anyone.
//
// In each MN's pool, from offset MN[m].Start (0 unless LayoutConfig.Base
// says otherwise): the index of each chunk assigned to it
// (ascending chunk order, each 64-byte aligned), then each attribute array
// (for each array, the chunks' slices in the same order, 64-byte aligned),
// then the edge region. Chunk k's index and attributes live on MN
// k·M/C: contiguous groups of chunks per MN when C ≥ M, spread over the
// MNs when C < M. Edge lists are assigned per loading batch in
// coarse-grained round robin (see LayoutConfig.Granule); the naive layout
// puts each chunk's edge array on the chunk's MN.
type Layout struct {
	Config   LayoutConfig
	Codec    EntryCodec
	N        uint32
	Edges    uint64
	Weighted bool
	// ChunkMN is the MN of each chunk's index and attributes.
	ChunkMN []int
	// IndexOff is the offset of each chunk's index (or naive offset words)
	// in its MN (every offset of a Layout is absolute, its base included).
	IndexOff []uint64
	// AttrOff[a][k] is the offset of chunk k's slice of attribute array a.
	AttrOff [][]uint64
	// Batches are the loading batches, in vertex order; chunk k's are
	// Batches[BatchStart[k]:BatchStart[k+1]].
	Batches    []Batch
	BatchStart []int
	// MN is the usage of each MN.
	MN []MNUsage
	// InPlace and Overflow count vertices stored in place and out-of-place
	// entries with an overflow table.
	InPlace, Overflow uint64
}

// Plan lays g out according to cfg. It is pure and deterministic; it uses
// a few goroutines for the per-vertex pass. It is SizeChunk for every
// chunk, then PlanSizes.
func Plan(g *csr.Graph, cfg LayoutConfig) (*Layout, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(g.N); err != nil {
		return nil, err
	}
	sizes := make([]ChunkSizes, len(cfg.Bounds)-1)
	for k := range sizes {
		var err error
		if sizes[k], err = SizeChunk(g, cfg, k); err != nil {
			return nil, err
		}
	}
	return PlanSizes(g.N, g.NumEdges(), g.Weights != nil, cfg, sizes)
}

// ChunkSizes is what the layout needs to know of one chunk's edges: the
// bytes of out-of-place lists (and overflow tables) of each of its loading
// batches, and how many of its vertices are stored in place or have an
// overflow table.
type ChunkSizes struct {
	EdgeBytes         []uint64
	InPlace, Overflow uint64
}

// Add adds the sizes of o, measured on other vertices of the same chunk
// (SizeRange over another window), to c.
func (c *ChunkSizes) Add(o ChunkSizes) {
	if c.EdgeBytes == nil {
		c.EdgeBytes = make([]uint64, len(o.EdgeBytes))
	}
	for i, b := range o.EdgeBytes {
		c.EdgeBytes[i] += b
	}
	c.InPlace += o.InPlace
	c.Overflow += o.Overflow
}

// codec is the entry codec of a layout of cfg (cfg.EnsureDefaults done).
func (cfg *LayoutConfig) codec(weighted bool) (EntryCodec, error) {
	c := EntryCodec{Size: cfg.EntrySize, Weighted: weighted, Chunks: len(cfg.Bounds) - 1, Packed: cfg.Packed}
	if weighted {
		c.Weights = cfg.Weights
	}
	if cfg.Naive {
		c.Size = 8
		return c, nil
	}
	return c, c.Validate()
}

// batchBounds are the loading batches of chunk k: [lo, hi) pairs.
func (cfg *LayoutConfig) batchBounds(k int) [][2]uint32 {
	var out [][2]uint32
	for lo := cfg.Bounds[k]; lo < cfg.Bounds[k+1]; {
		hi := uint32(min(uint64(lo)+uint64(cfg.BatchVertices), uint64(cfg.Bounds[k+1])))
		out = append(out, [2]uint32{lo, hi})
		lo = hi
	}
	return out
}

// SizeChunk measures chunk k of g for the layout of cfg. It reads only the
// edges of chunk k's vertices, so g may hold just those (a CN's share).
func SizeChunk(g *csr.Graph, cfg LayoutConfig, k int) (ChunkSizes, error) {
	return SizeRange(g, cfg, k, 0, math.MaxUint32)
}

// SizeRange is SizeChunk over the vertices of chunk k in [lo, hi) only,
// so g may hold just their rows (a window of a share, Share.Windows):
// the sizes of a chunk's windows add up (ChunkSizes.Add) to its
// SizeChunk.
func SizeRange(g *csr.Graph, cfg LayoutConfig, k int, wlo, whi uint32) (ChunkSizes, error) {
	return sizeBatches(cfg, g.N, g.Weights != nil, k, wlo, whi, func(c EntryCodec, v uint32, segs []uint32) (uint64, EntryKind, error) {
		deg := g.Degree(v)
		if deg > MaxEntryDegree && !cfg.Naive {
			return 0, 0, errors.Errorf("csr: vertex %d has degree %d; an index entry holds at most %d", v, deg, MaxEntryDegree)
		}
		switch {
		case cfg.Naive:
			return deg * uint64(c.RecordBytes()), OutOfPlace, nil
		case cfg.inPlace(c, deg):
			return 0, InPlace, nil
		case cfg.packs(deg):
			return c.packedSize(g.Neighbors(v)), OutOfPlace, nil
		}
		SegmentLengths(g.Neighbors(v), cfg.Bounds, segs)
		b, kind := c.listBytes(deg, segs)
		return b, kind, nil
	})
}

// RoomRange is SizeRange from degrees alone, for a loader that has not
// built the rows yet: deg[v-first] bounds vertex v's degree (such as a
// share's Degrees, counted before self-loops and duplicates are
// dropped), and every vertex of chunk k in [lo, hi) gets the most room
// a list of at most that many edges can take: its records and the
// largest overflow table such a list can need, unless it is sure to be
// stored in place. A layout planned from rooms is loaded with
// LoadOptions.Rooms; its InPlace counts the vertices sure to be stored
// in place, its Overflow those whose room has a table (the load counts
// both as they are: LoadReport). Packed lists, whose size depends on
// their ids, have no room, nor have a naive layout's, whose offsets give
// the lists their lengths.
func RoomRange(deg []uint32, first uint32, n uint32, weighted bool, cfg LayoutConfig, k int, wlo, whi uint32) (ChunkSizes, error) {
	if cfg.Packed || cfg.Naive {
		return ChunkSizes{}, errors.New("csr: a packed or naive layout is sized from its lists, not from degrees")
	}
	return sizeBatches(cfg, n, weighted, k, wlo, whi, func(c EntryCodec, v uint32, segs []uint32) (uint64, EntryKind, error) {
		if v < first || uint64(v-first) >= uint64(len(deg)) {
			return 0, 0, errors.Errorf("csr: vertex %d has no degree bound (%d from %d)", v, len(deg), first)
		}
		deg := uint64(deg[v-first])
		if cfg.inPlace(c, deg) {
			return 0, InPlace, nil
		}
		for i := range segs { // every segment at its longest
			segs[i] = uint32(min(deg, MaxEntryDegree))
		}
		b, kind := c.listBytes(deg, segs)
		return b, kind, nil
	})
}

// inPlace says whether a list of deg edges is stored in its index entry
// (not in a naive layout, which has none).
func (cfg *LayoutConfig) inPlace(c EntryCodec, deg uint64) bool {
	return !cfg.NoInPlace && deg <= uint64(c.InPlaceCap())
}

// listBytes is the size of an unpacked list of deg edges stored out of
// place, whose segment lengths are segs: its records and its overflow
// table, if it needs one (kind Overflow).
func (c EntryCodec) listBytes(deg uint64, segs []uint32) (uint64, EntryKind) {
	tb := uint64(c.TableBytes(segs))
	if tb > 0 {
		return tb + deg*uint64(c.RecordBytes()), Overflow
	}
	return deg * uint64(c.RecordBytes()), OutOfPlace
}

// sizeBatches adds up size over the vertices of chunk k in [wlo, whi),
// batch by batch, on a few goroutines: size gives a vertex's edge bytes
// and how its entry is stored (segs is the goroutine's scratch, a
// length per chunk).
func sizeBatches(cfg LayoutConfig, n uint32, weighted bool, k int, wlo, whi uint32, size func(c EntryCodec, v uint32, segs []uint32) (uint64, EntryKind, error)) (ChunkSizes, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(n); err != nil {
		return ChunkSizes{}, err
	}
	if k < 0 || k >= len(cfg.Bounds)-1 {
		return ChunkSizes{}, errors.Errorf("csr: chunk %d of %d", k, len(cfg.Bounds)-1)
	}
	codec, err := cfg.codec(weighted)
	if err != nil {
		return ChunkSizes{}, err
	}
	C := len(cfg.Bounds) - 1
	batches := cfg.batchBounds(k)
	out := ChunkSizes{EdgeBytes: make([]uint64, len(batches))}
	var mu sync.Mutex
	var firstErr error
	csr.ParallelFor(4, len(batches), func(lo, hi int) {
		segs := make([]uint32, C)
		var ip, of uint64
		for i := lo; i < hi; i++ {
			var bytes uint64
			for v := max(batches[i][0], wlo); v < min(batches[i][1], whi); v++ {
				b, kind, err := size(codec, v, segs)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				switch kind {
				case InPlace:
					ip++
				case Overflow:
					of++
				}
				bytes += b
			}
			out.EdgeBytes[i] = bytes
		}
		mu.Lock()
		out.InPlace += ip
		out.Overflow += of
		mu.Unlock()
	})
	if firstErr != nil {
		return ChunkSizes{}, firstErr
	}
	return out, nil
}

// PlanSizes lays out a graph of n vertices and the given number of edges
// from every chunk's sizes (SizeChunk, on whichever rank holds the chunk):
// what Plan does without the graph.
func PlanSizes(n uint32, edges uint64, weighted bool, cfg LayoutConfig, sizes []ChunkSizes) (*Layout, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(n); err != nil {
		return nil, err
	}
	cfg.Bounds = slices.Clone(cfg.Bounds)
	cfg.AttrBytes = slices.Clone(cfg.AttrBytes)
	cfg.Base = slices.Clone(cfg.Base)
	C, M := len(cfg.Bounds)-1, cfg.NumMN
	if len(sizes) != C {
		return nil, errors.Errorf("csr: sizes of %d chunks for %d chunks", len(sizes), C)
	}
	codec, err := cfg.codec(weighted)
	if err != nil {
		return nil, err
	}
	l := &Layout{Config: cfg, N: n, Edges: edges, Weighted: weighted, Codec: codec, MN: make([]MNUsage, M)}
	rec := uint64(l.Codec.RecordBytes())

	// Index and attributes.
	l.ChunkMN = make([]int, C)
	l.IndexOff = make([]uint64, C)
	next := make([]uint64, M)
	for m := range next {
		l.MN[m].Start = cfg.start(m)
		next[m] = l.MN[m].Start
	}
	for k := 0; k < C; k++ {
		mn := k * M / C
		l.ChunkMN[k] = mn
		nv := uint64(cfg.Bounds[k+1] - cfg.Bounds[k])
		size := nv * uint64(cfg.EntrySize)
		if cfg.Naive {
			size = (nv + 1) * 8
		}
		l.IndexOff[k] = next[mn]
		next[mn] = alignUp(next[mn]+size, regionAlign)
		l.MN[mn].IndexBytes += size
	}
	l.AttrOff = make([][]uint64, len(cfg.AttrBytes))
	for a, ab := range cfg.AttrBytes {
		l.AttrOff[a] = make([]uint64, C)
		for k := 0; k < C; k++ {
			mn := l.ChunkMN[k]
			size := uint64(cfg.Bounds[k+1]-cfg.Bounds[k]) * uint64(ab)
			l.AttrOff[a][k] = next[mn]
			next[mn] = alignUp(next[mn]+size, regionAlign)
			l.MN[mn].AttrBytes += size
		}
	}

	// Batches, with their chunk's sizes.
	l.BatchStart = make([]int, C+1)
	for k := 0; k < C; k++ {
		l.BatchStart[k] = len(l.Batches)
		bb := cfg.batchBounds(k)
		if len(sizes[k].EdgeBytes) != len(bb) {
			return nil, errors.Errorf("csr: chunk %d has %d loading batches, its sizes %d", k, len(bb), len(sizes[k].EdgeBytes))
		}
		for i, b := range bb {
			l.Batches = append(l.Batches, Batch{Chunk: k, Lo: b[0], Hi: b[1], EdgeBytes: sizes[k].EdgeBytes[i]})
		}
		l.InPlace += sizes[k].InPlace
		l.Overflow += sizes[k].Overflow
	}
	l.BatchStart[C] = len(l.Batches)

	// Edge regions.
	for m := range l.MN {
		next[m] = alignUp(next[m], regionAlign)
	}
	if cfg.Naive {
		for i := range l.Batches {
			b := &l.Batches[i]
			b.MN = l.ChunkMN[b.Chunk]
			b.EdgeOff = next[b.MN]
			next[b.MN] += b.EdgeBytes
			if i+1 == len(l.Batches) || l.Batches[i+1].Chunk != b.Chunk {
				next[b.MN] = alignUp(next[b.MN], regionAlign)
			}
			l.MN[b.MN].EdgeBytes += b.EdgeBytes
		}
	} else {
		// A turn is at most Granule bytes, and small enough that a small
		// graph still spreads over every MN.
		granule := min(cfg.Granule, max(64<<10, l.Edges*rec/uint64(8*M)))
		mn := 0
		var turn uint64
		for i := range l.Batches {
			b := &l.Batches[i]
			if b.EdgeBytes == 0 {
				b.MN, b.EdgeOff = mn, next[mn]
				continue
			}
			b.MN = mn
			// A list's overflow table sits just before it inside the
			// batch's block (EdgeBytes counts it), so a table never
			// reaches below EdgeOff, with a base or without; the
			// encoder checks.
			b.EdgeOff = next[mn]
			next[mn] = alignUp(next[mn]+b.EdgeBytes, batchAlign)
			l.MN[mn].EdgeBytes += b.EdgeBytes
			turn += b.EdgeBytes
			if turn >= granule {
				// Next turn: the MN holding the fewest bytes of this
				// layout so far (index and attributes included, the
				// base not), lowest id on ties.
				mn, turn = 0, 0
				for m := 1; m < M; m++ {
					if next[m]-l.MN[m].Start < next[mn]-l.MN[mn].Start {
						mn = m
					}
				}
			}
		}
	}
	for m := range l.MN {
		l.MN[m].End = alignUp(next[m], regionAlign)
		l.MN[m].Needed = l.MN[m].End + cfg.Reserve
	}
	return l, nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }

// NumChunks is C.
func (l *Layout) NumChunks() int { return len(l.Config.Bounds) - 1 }

// ChunkOf is the chunk holding v.
func (l *Layout) ChunkOf(v uint32) int {
	b := l.Config.Bounds
	lo, hi := 0, len(b)-1
	for lo+1 < hi { // invariant: b[lo] ≤ v < b[hi]
		m := (lo + hi) / 2
		if b[m] <= v {
			lo = m
		} else {
			hi = m
		}
	}
	// skip empty chunks that start at v
	for lo+1 < len(b)-1 && b[lo+1] <= v {
		lo++
	}
	return lo
}

// EntryAddr is the address of v's index entry (naive layout: of v's offset
// word; the next word ends v's list).
func (l *Layout) EntryAddr(v uint32) verbs.Addr {
	k := l.ChunkOf(v)
	size := uint64(l.Codec.Size)
	return verbs.Addr(uint64(l.ChunkMN[k])<<verbs.OffsetBits | (l.IndexOff[k] + uint64(v-l.Config.Bounds[k])*size))
}

// AttrAddr is the address of v's element of attribute array a.
func (l *Layout) AttrAddr(a int, v uint32) verbs.Addr {
	k := l.ChunkOf(v)
	return verbs.Addr(uint64(l.ChunkMN[k])<<verbs.OffsetBits | (l.AttrOff[a][k] + uint64(v-l.Config.Bounds[k])*uint64(l.Config.AttrBytes[a])))
}

// ChunkBatches are the loading batches of chunk k.
func (l *Layout) ChunkBatches(k int) []Batch { return l.Batches[l.BatchStart[k]:l.BatchStart[k+1]] }

// Needed is the pool size each MN needs.
func (l *Layout) Needed() []uint64 {
	out := make([]uint64, len(l.MN))
	for m, u := range l.MN {
		out[m] = u.Needed
	}
	return out
}

// CapacityError reports a graph that does not fit the MNs' pools.
type CapacityError struct {
	Needed, Available []uint64
}

func (e *CapacityError) Error() string {
	var b strings.Builder
	b.WriteString("csr: the graph does not fit the memory nodes:")
	for m := range e.Needed {
		mark := ""
		if e.Needed[m] > e.Available[m] {
			mark = " (short by " + humanize.IBytes(e.Needed[m]-e.Available[m]) + ")"
		}
		fmt.Fprintf(&b, " MN %d needs %s (%d bytes), has %s (%d bytes)%s;", m,
			humanize.IBytes(e.Needed[m]), e.Needed[m], humanize.IBytes(e.Available[m]), e.Available[m], mark)
	}
	s := b.String()
	return s[:len(s)-1]
}

// CheckCapacity fails with a *CapacityError unless every MN's pool
// (available[m] bytes) holds what the layout puts there.
func (l *Layout) CheckCapacity(available []uint64) error {
	if len(available) != len(l.MN) {
		return errors.Errorf("csr: %d pool sizes for %d memory nodes", len(available), len(l.MN))
	}
	need := l.Needed()
	for m := range need {
		if need[m] > available[m] {
			return errors.WithStack(&CapacityError{Needed: need, Available: slices.Clone(available)})
		}
	}
	return nil
}

// InPlaceShare is the fraction of vertices stored in place.
func (l *Layout) InPlaceShare() float64 {
	if l.N == 0 {
		return 0
	}
	return float64(l.InPlace) / float64(l.N)
}

// Imbalance is max/mean of the bytes the MNs hold of the layout, from
// Start to End (1 is perfect).
func (l *Layout) Imbalance() float64 {
	var sum, mx uint64
	for _, u := range l.MN {
		sum += u.End - u.Start
		mx = max(mx, u.End-u.Start)
	}
	if sum == 0 {
		return 1
	}
	return float64(mx) * float64(len(l.MN)) / float64(sum)
}
