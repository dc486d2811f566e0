package rank

import (
	"encoding/binary"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// Attribute arrays the engine keeps on DM, per vertex (dmstore.LayoutConfig.AttrBytes).
const (
	attrValue = iota // the owner's value, written when someone will read it (lazyValues)
	attrInbox        // target of direct remote updates, the identity between iterations
	// attrContrib is each vertex's contribution (the identity while it is
	// inactive), written by the owner after a dense apply and read whole
	// by the other CNs for the value pull (valuepull.go).
	attrContrib
)

// AttrBytes are the attribute arrays the engine needs in the out-layout.
func AttrBytes() []int { return []int{8, 8, 8} }

// Store is the graph on the memory nodes as the engine sees it: the
// DM-friendly layout of package csr (adaptive index entries, out-of-place
// edge lists, attribute arrays range-partitioned along chunk boundaries),
// the reverse adjacency when the graph is directed and the engine pulls,
// and the regions of the update coordinator.
type Store struct {
	// Out is the out-adjacency and the attributes.
	Out *dmstore.Layout
	// In is the in-adjacency (each list sorted by source, segments by
	// source chunk), for the pull on directed graphs; nil when the graph is
	// symmetric (out-lists are in-lists) or the engine does not pull.
	In   *dmstore.Layout
	mb   *update.Mailboxes // dmg mode
	bits []verbs.Addr      // dmg mode: each chunk's frontier bitmap
	tri  *triRegions       // dmg mode, triangle kernels: the oriented lists
	fam  *famRegions       // famgraph mode
}

// N is the number of vertices.
func (s *Store) N() uint32 { return s.Out.N }

// ChunkOf is the chunk holding v.
func (s *Store) ChunkOf(v uint32) int { return s.Out.ChunkOf(v) }

// InboxAddr is the address of v's remote-update word.
func (s *Store) InboxAddr(v uint32) verbs.Addr { return s.Out.AttrAddr(attrInbox, v) }

// ValueAddr is the address of v's current value.
func (s *Store) ValueAddr(v uint32) verbs.Addr { return s.Out.AttrAddr(attrValue, v) }

// StoreConfig is what sizing the engine's regions needs to know of a job.
type StoreConfig struct {
	Mode            string
	ValMailbox      uint64 // 0: sized from the graph
	RefMailbox      uint64
	Bounds          []uint32
	NumMN           int
	Vertices, Edges uint64
	// Senders is the number of worker goroutines of every CN together
	// (they each hold an open ValRD block per target).
	Senders int
	// Multiset says the kernel keeps every candidate (algo.Multiset):
	// nothing may spill to direct update, so the mailboxes hold them all:
	// on the symmetric store a Multiset kernel runs on, a chunk receives
	// at most as many candidates as it has edges, MaxChunkEdges at most.
	Multiset      bool
	MaxChunkEdges uint64
	// Triangles says the kernel runs the triangle operator
	// (algo.Spec.Triangles), whose oriented lists need room on DM.
	Triangles bool
}

// chunkMN is the MN of chunk k's index and attributes, as csr lays them out.
func chunkMN(c, m int) []int {
	out := make([]int, c)
	for k := range out {
		out[k] = k * m / c
	}
	return out
}

// mailboxSizes are the ValRD and RefRD mailbox capacities per chunk: the
// configured ones, or room for about half the edges' pairs and a quarter
// of the vertices' items, within [64 KiB, 256 MiB] and [64 KiB, 32 MiB];
// overflow spills to direct update.
func (c StoreConfig) mailboxSizes() (uint64, uint64) {
	valCap, refCap := c.ValMailbox, c.RefMailbox
	if c.Multiset {
		// Room for a pair per edge of the largest chunk, with the eighth
		// that open blocks may leave unused (update.ValBlocks), and for an
		// item per sending vertex, plus hub pieces.
		e := c.MaxChunkEdges
		if e == 0 {
			e = c.Edges
		}
		valCap = max(valCap, 64<<10, update.ValRec*e*5/4)
		refCap = max(refCap, 64<<10, update.RefRec*min(e, c.Vertices+e/16))
		return valCap, refCap
	}
	if valCap == 0 {
		valCap = min(256<<20, max(64<<10, update.ValRec*c.Edges/2))
	}
	if refCap == 0 {
		refCap = min(32<<20, max(64<<10, update.RefRec*c.Vertices/4))
	}
	return valCap, refCap
}

// Reserve is the space per MN the engine's regions need after the graph.
func Reserve(c StoreConfig) uint64 {
	cm := chunkMN(len(c.Bounds)-1, c.NumMN)
	m, err := parseMode(c.Mode)
	if err != nil {
		return 0
	}
	return m.reserve(c, cm)
}

// NewStore places the engine's regions after the last of the layouts (in
// when non-nil, else out) and returns the store.
func NewStore(out, in *dmstore.Layout, c StoreConfig) (*Store, error) {
	last := out
	if in != nil {
		last = in
	}
	start := make([]uint64, len(last.MN))
	for i, u := range last.MN {
		start[i] = u.End
	}
	return NewStoreAt(out, in, c, start)
}

// NewStoreAt places the engine's regions at start[m] on each MN m (a
// job's own extents of a served pool, which the graph's layouts do not
// reach) and returns the store.
func NewStoreAt(out, in *dmstore.Layout, c StoreConfig, start []uint64) (*Store, error) {
	m, err := parseMode(c.Mode)
	if err != nil {
		return nil, err
	}
	st := &Store{Out: out, In: in}
	if err := m.place(st, c, start); err != nil {
		return nil, errors.Wrap(err, "rank: placing the engine's regions")
	}
	return st, nil
}

// chunkSpans cuts [lo, hi) at chunk boundaries: a chunk's attribute slice
// is contiguous on one MN.
func (s *Store) chunkSpans(lo, hi uint32, visit func(lo, hi uint32) error) error {
	b := s.Out.Config.Bounds
	for lo < hi {
		k := s.ChunkOf(lo)
		end := min(hi, b[k+1])
		if err := visit(lo, end); err != nil {
			return err
		}
		lo = end
	}
	return nil
}

// wordIO moves attribute words between the cache and DM in large
// transfers, reusing its buffer.
type wordIO struct {
	buf []byte
}

// write queues vals (vertices lo, lo+1, ...) into attribute array a in
// large WRITEs and flushes.
func (io *wordIO) write(s *Store, ep verbs.Endpoint, a int, lo uint32, vals []uint64) error {
	return s.chunkSpans(lo, lo+uint32(len(vals)), func(x, y uint32) error {
		return verbs.WriteBulk(ep, s.Out.AttrAddr(a, x), update.WordBytes(vals[x-lo:y-lo], &io.buf))
	})
}

// read reads attribute array a for vertices [lo, lo+len(vals)).
func (io *wordIO) read(s *Store, ep verbs.Endpoint, a int, lo uint32, vals []uint64) error {
	return s.chunkSpans(lo, lo+uint32(len(vals)), func(x, y uint32) error {
		return readWords(ep, vals[x-lo:y-lo], s.Out.AttrAddr(a, x), &io.buf)
	})
}

// fill writes the word v over attribute array a for vertices [lo, hi),
// from a buffer of at most fillWords words.
func (io *wordIO) fill(s *Store, ep verbs.Endpoint, a int, lo, hi uint32, v uint64) error {
	return s.chunkSpans(lo, hi, func(x, y uint32) error {
		n := min(y-x, fillWords)
		io.buf = grow(io.buf, 8*int(n))
		for i := range n {
			binary.LittleEndian.PutUint64(io.buf[8*i:], v)
		}
		for ; x < y; x += n {
			if err := verbs.WriteBulk(ep, s.Out.AttrAddr(a, x), io.buf[:8*min(n, y-x)]); err != nil {
				return err
			}
		}
		return nil
	})
}

// fillWords bounds fill's buffer (512 KiB): a chunk's array is written in
// pieces, not from a buffer as large as it, fresh memory each job.
const fillWords = 1 << 16

// readWords reads len(w) words at src into w: straight into w's memory
// where DM's byte order is the machine's, else through *scratch.
func readWords(ep verbs.Endpoint, w []uint64, src verbs.Addr, scratch *[]byte) error {
	if v := update.WordsView(w); v != nil || len(w) == 0 {
		return verbs.ReadBulk(ep, v, src)
	}
	b := grow(*scratch, 8*len(w))
	*scratch = b
	if err := verbs.ReadBulk(ep, b, src); err != nil {
		return err
	}
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return nil
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
