package rank

import (
	"encoding/binary"
	"math"

	"github.com/dmg-hpc/dmg/csr"
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
}

// N is the number of vertices.
func (s *Store) N() uint32 { return s.Layout.N }

// ValueAddr is the address of v's current value.
func (s *Store) ValueAddr(v uint32) verbs.Addr { return s.AttrAddr(attrValue, v) }

// InboxAddr is the address of v's remote-update word.
func (s *Store) InboxAddr(v uint32) verbs.Addr { return s.AttrAddr(attrInbox, v) }

// maxBulk bounds one READ or WRITE of a bulk transfer.
const maxBulk = 8 << 20

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
// large WRITEs.
func (s *Store) writeWords(ep verbs.Endpoint, a int, lo uint32, vals []uint64) error {
	for _, sp := range s.chunkSpans(lo, lo+uint32(len(vals))) {
		b := make([]byte, 8*(sp[1]-sp[0]))
		for i := range sp[1] - sp[0] {
			binary.LittleEndian.PutUint64(b[8*i:], vals[sp[0]-lo+i])
		}
		dst := s.AttrAddr(a, sp[0])
		for len(b) > 0 {
			n := min(len(b), maxBulk)
			if err := ep.Write(dst, b[:n]); err != nil {
				return err
			}
			if err := ep.Flush(); err != nil {
				return err
			}
			dst, b = dst.Add(uint64(n)), b[n:]
		}
	}
	return nil
}

// readWords reads attribute array a for vertices [lo, lo+len(vals)).
func (s *Store) readWords(ep verbs.Endpoint, a int, lo uint32, vals []uint64) error {
	for _, sp := range s.chunkSpans(lo, lo+uint32(len(vals))) {
		b := make([]byte, 8*(sp[1]-sp[0]))
		src, rest := s.AttrAddr(a, sp[0]), b
		for len(rest) > 0 {
			n := min(len(rest), maxBulk)
			if err := ep.Read(rest[:n], src); err != nil {
				return err
			}
			if err := ep.Flush(); err != nil {
				return err
			}
			src, rest = src.Add(uint64(n)), rest[n:]
		}
		for i := range sp[1] - sp[0] {
			vals[sp[0]-lo+i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return nil
}

// fetcher retrieves the out-edges of a batch's active vertices: one merged
// READ of their index entries, then one merged READ of the out-of-place
// lists, each a doorbell batch per MN (two dependent round trips).
type fetcher struct {
	s      *Store
	merger *verbs.ReadMerger
	ep     verbs.Endpoint
	ents   []byte
	lists  []byte
	dec    []csr.Entry
	listAt []int // offset of each vertex's list in lists, -1 if in place or inactive
	dst    []uint32
	w      []float32
}

func newFetcher(s *Store, ep verbs.Endpoint, net verbs.RangeChecker) (*fetcher, error) {
	m, err := verbs.NewReadMerger(ep, net, 256, 4<<20)
	if err != nil {
		return nil, err
	}
	return &fetcher{s: s, merger: m, ep: ep}, nil
}

// visit is called once per active vertex with its out-edges (w is nil for
// unweighted graphs). The slices are reused after visit returns.
type visitFn func(v uint32, dst []uint32, w []float32) error

// fetch runs visit over the active vertices of [lo, hi).
func (f *fetcher) fetch(lo, hi uint32, active func(uint32) bool, visit visitFn) error {
	s := f.s
	size := s.Codec.Size
	n := int(hi - lo)
	f.ents = grow(f.ents, n*size)
	if cap(f.dec) < n {
		f.dec = make([]csr.Entry, n)
	}
	f.dec = f.dec[:n]
	if cap(f.listAt) < n {
		f.listAt = make([]int, n)
	}
	f.listAt = f.listAt[:n]
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
		f.listAt[i] = -1
		if !active(v) {
			continue
		}
		e := &f.dec[i]
		if err := s.Codec.Decode(f.ents[i*size:(i+1)*size], e); err != nil {
			return errors.Wrapf(err, "rank: index entry of vertex %d", v)
		}
		if e.Kind != csr.InPlace && e.Degree > 0 {
			f.listAt[i] = total
			total += int(e.Degree) * rec
		}
	}
	f.lists = grow(f.lists, total)
	for v := lo; v < hi; v++ {
		i := int(v - lo)
		if f.listAt[i] < 0 {
			continue
		}
		e := &f.dec[i]
		l := int(e.Degree) * rec
		if err := f.merger.Read(f.lists[f.listAt[i]:f.listAt[i]+l], verbs.Addr(e.Addr)); err != nil {
			return errors.Wrapf(err, "rank: edge list of vertex %d", v)
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
			if err := visit(v, e.Dst, weightsOrNil(s, e.Weights)); err != nil {
				return err
			}
			continue
		}
		f.dst, f.w = f.dst[:0], f.w[:0]
		b := f.lists[f.listAt[i] : f.listAt[i]+int(e.Degree)*rec]
		for k := 0; k < int(e.Degree); k++ {
			r := b[k*rec:]
			f.dst = append(f.dst, binary.LittleEndian.Uint32(r))
			if s.Weighted {
				f.w = append(f.w, math.Float32frombits(binary.LittleEndian.Uint32(r[4:])))
			}
		}
		if err := visit(v, f.dst, weightsOrNil(s, f.w)); err != nil {
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
