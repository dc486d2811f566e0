package rank

import (
	"encoding/binary"
	"math"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/pkg/errors"
)

// Attribute arrays the engine keeps on DM, per vertex (csr.LayoutConfig.AttrBytes).
const (
	attrValue = iota // current value, written back by the owner each iteration
	attrInbox        // remote-update target of the next iteration
)

var attrBytes = []int{8, 8}

// Store is the graph on the memory nodes as the engine sees it: the
// DM-friendly layout of package csr (adaptive index entries, out-of-place
// edge lists, attribute arrays range-partitioned along chunk boundaries).
type Store struct {
	*csr.Layout
	mailboxes *update.Mailboxes // dmg mode
	fam       *famRegions       // famgraph mode
}

// N is the number of vertices.
func (s *Store) N() uint32 { return s.Layout.N }

// ValueAddr is the address of v's current value.
func (s *Store) ValueAddr(v uint32) verbs.Addr { return s.AttrAddr(attrValue, v) }

// InboxAddr is the address of v's remote-update word.
func (s *Store) InboxAddr(v uint32) verbs.Addr { return s.AttrAddr(attrInbox, v) }

// chunkSpans cuts [lo, hi) at chunk boundaries: a chunk's attribute slice
// is contiguous on one MN.
func (s *Store) chunkSpans(lo, hi uint32) [][2]uint32 {
	var out [][2]uint32
	b := s.Config.Bounds
	for lo < hi {
		k := s.ChunkOf(lo)
		end := min(hi, b[k+1])
		out = append(out, [2]uint32{lo, end})
		lo = end
	}
	return out
}

// writeWords writes vals for vertices lo, lo+1, ... to attribute array a in
// large WRITEs (a chunk's slice is contiguous on one MN).
func (s *Store) writeWords(ep verbs.Endpoint, a int, lo uint32, vals []uint64) error {
	for _, sp := range s.chunkSpans(lo, lo+uint32(len(vals))) {
		if err := verbs.WriteBulk(ep, s.AttrAddr(a, sp[0]), wordsToBytes(vals[sp[0]-lo:sp[1]-lo])); err != nil {
			return err
		}
	}
	return nil
}

// readWords reads attribute array a for vertices [lo, lo+len(vals)).
func (s *Store) readWords(ep verbs.Endpoint, a int, lo uint32, vals []uint64) error {
	for _, sp := range s.chunkSpans(lo, lo+uint32(len(vals))) {
		b := make([]byte, 8*(sp[1]-sp[0]))
		if err := verbs.ReadBulk(ep, b, s.AttrAddr(a, sp[0])); err != nil {
			return err
		}
		for i := range sp[1] - sp[0] {
			vals[sp[0]-lo+i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return nil
}

func wordsToBytes(w []uint64) []byte {
	b := make([]byte, 8*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// reader queues READs and completes them at Flush: a verbs.ReadMerger,
// or plainReader for --no-merge.
type reader interface {
	Read(dst []byte, src verbs.Addr) error
	Flush() error
}

// plainReader posts every READ as it is (no merging of neighbours).
type plainReader struct{ ep verbs.Endpoint }

func (r plainReader) Read(dst []byte, src verbs.Addr) error { return r.ep.Read(dst, src) }
func (r plainReader) Flush() error                          { return r.ep.Flush() }

// refFn decides, for an out-of-place vertex whose segment lengths are
// known, which segments are sent by reference (skip[k] = true) instead of
// fetched; it returns whether any is.
type refFn func(v uint32, e *csr.Entry, skip []bool) bool

// visitFn is called once per active vertex with its degree and the edges
// that were fetched (all of them, unless segments went by reference); w
// is nil for unweighted graphs. The slices are reused after it returns.
type visitFn func(v uint32, deg uint64, dst []uint32, w []float32) error

// fetcher retrieves the out-edges of a batch's active vertices: one merged
// READ of their index entries, then one merged READ of the out-of-place
// lists (or of the segments not sent by reference), each a doorbell batch
// per MN: two dependent round trips per batch.
type fetcher struct {
	s      *Store
	merger reader
	ep     verbs.Endpoint
	ents   []byte
	lists  []byte
	dec    []csr.Entry
	listAt []int  // offset of each vertex's list in lists, -1 if in place or inactive
	skip   []bool // per vertex, per chunk: segment sent by reference
	part   []bool // per vertex: some segment was sent by reference
	dst    []uint32
	w      []float32
}

// fetch runs visit over the active vertices of [lo, hi).
func (f *fetcher) fetch(lo, hi uint32, active func(uint32) bool, byRef refFn, visit visitFn) error {
	s := f.s
	size := s.Codec.Size
	c := s.NumChunks()
	n := int(hi - lo)
	f.ents = grow(f.ents, n*size)
	if cap(f.dec) < n {
		f.dec = make([]csr.Entry, n)
	}
	f.dec = f.dec[:n]
	if cap(f.listAt) < n {
		f.listAt, f.part = make([]int, n), make([]bool, n)
	}
	f.listAt, f.part = f.listAt[:n], f.part[:n]
	if byRef != nil && len(f.skip) < n*c {
		f.skip = make([]bool, n*c)
	}
	any := false
	for v := lo; v < hi; v++ {
		if !active(v) {
			continue
		}
		any = true
		i := int(v - lo)
		if err := f.merger.Read(f.ents[i*size:(i+1)*size], s.EntryAddr(v)); err != nil {
			return err
		}
	}
	if !any {
		return nil
	}
	if err := f.merger.Flush(); err != nil {
		return err
	}
	rec := s.Codec.RecordBytes()
	total := 0
	for v := lo; v < hi; v++ {
		i := int(v - lo)
		f.listAt[i], f.part[i] = -1, false
		if !active(v) {
			continue
		}
		e := &f.dec[i]
		if err := s.Codec.Decode(f.ents[i*size:(i+1)*size], e); err != nil {
			return errors.Wrapf(err, "rank: index entry of vertex %d", v)
		}
		if e.Kind == csr.InPlace || e.Degree == 0 {
			continue
		}
		f.listAt[i] = total
		total += int(e.Degree) * rec
		if byRef != nil && e.Kind == csr.OutOfPlace {
			f.part[i] = byRef(v, e, f.skip[i*c:(i+1)*c])
		}
	}
	f.lists = grow(f.lists, total)
	for v := lo; v < hi; v++ {
		i := int(v - lo)
		if f.listAt[i] < 0 {
			continue
		}
		e := &f.dec[i]
		if !f.part[i] {
			l := int(e.Degree) * rec
			if err := f.merger.Read(f.lists[f.listAt[i]:f.listAt[i]+l], verbs.Addr(e.Addr)); err != nil {
				return errors.Wrapf(err, "rank: edge list of vertex %d", v)
			}
			continue
		}
		off := 0
		for k, seg := range e.Segments {
			l := int(seg) * rec
			if !f.skip[i*c+k] && l > 0 {
				at := f.listAt[i] + off
				if err := f.merger.Read(f.lists[at:at+l], verbs.Addr(e.Addr).Add(uint64(off))); err != nil {
					return errors.Wrapf(err, "rank: edge list of vertex %d", v)
				}
			}
			off += l
		}
	}
	if total > 0 {
		if err := f.merger.Flush(); err != nil {
			return err
		}
	}
	for v := lo; v < hi; v++ {
		i := int(v - lo)
		if !active(v) {
			continue
		}
		e := &f.dec[i]
		if f.listAt[i] < 0 {
			if err := visit(v, uint64(e.Degree), e.Dst, weightsOrNil(s, e.Weights)); err != nil {
				return err
			}
			continue
		}
		f.dst, f.w = f.dst[:0], f.w[:0]
		b := f.lists[f.listAt[i] : f.listAt[i]+int(e.Degree)*rec]
		parse := func(b []byte) {
			for k := 0; k+rec <= len(b); k += rec {
				f.dst = append(f.dst, binary.LittleEndian.Uint32(b[k:]))
				if s.Weighted {
					f.w = append(f.w, math.Float32frombits(binary.LittleEndian.Uint32(b[k+4:])))
				}
			}
		}
		if !f.part[i] {
			parse(b)
		} else {
			off := 0
			for k, seg := range e.Segments {
				l := int(seg) * rec
				if !f.skip[i*c+k] {
					parse(b[off : off+l])
				}
				off += l
			}
		}
		if err := visit(v, uint64(e.Degree), f.dst, weightsOrNil(s, f.w)); err != nil {
			return err
		}
	}
	return nil
}

func weightsOrNil(s *Store, w []float32) []float32 {
	if !s.Weighted {
		return nil
	}
	return w
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
