package rank

import (
	"encoding/binary"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/verbs"
)

// listSet reads the whole adjacency lists of a sorted set of vertices, any
// chunk's, from one layout (out or in) through a worker's reader: one
// merged READ of their index entries, then one of their out-of-place
// lists (in-place entries carry their edges; an overflow entry's list is
// read without its table, as a whole list needs no segment lengths). The
// caller queues both layouts' reads before each Flush, so a set costs two
// dependent round trips whatever the layouts. On the baselines' plain CSR
// (dmstore.LayoutConfig.Naive) a vertex's "entry" is the two offset words that
// bound its list. Buffers grow to their high-water mark and are kept.
type listSet struct {
	l     *dmstore.Layout
	rec   int
	plain bool
	size  int // bytes read per entry
	ids   []uint32
	// ents are the raw entries, dec the decoded ones; buf the lists read,
	// vertex i's at at[i] (-1: in place).
	ents []byte
	dec  []dmstore.Entry
	buf  []byte
	at   []int
	// dst holds the decoded lists: vertex i's is dst[off[i]:off[i+1]].
	dst []uint32
	off []int
}

func newListSet(l *dmstore.Layout) *listSet {
	s := &listSet{l: l, rec: l.Codec.RecordBytes(), plain: l.Config.Naive, size: l.Codec.Size}
	if s.plain {
		s.size = 16 // the list's start and its end, the next vertex's start
	}
	return s
}

// queueEntries queues the READs of the index entries of ids (sorted;
// kept by the set until the next call).
func (s *listSet) queueEntries(rd reader, ids []uint32) error {
	s.ids = ids
	size := s.size
	s.ents = grow(s.ents, len(ids)*size)
	if cap(s.dec) < len(ids) {
		s.dec = newEntries(s.l.Codec, max(len(ids), 2*cap(s.dec)))
	}
	s.dec = s.dec[:len(ids)]
	for i, v := range ids {
		if err := rd.Read(s.ents[i*size:(i+1)*size], s.l.EntryAddr(v)); err != nil {
			return err
		}
	}
	rd.Separate()
	return nil
}

// decodeEntries decodes the entries (after the reader's Flush).
func (s *listSet) decodeEntries() error {
	size := s.size
	for i, v := range s.ids {
		b := s.ents[i*size : (i+1)*size]
		if s.plain {
			if err := s.decodePlain(b, v, &s.dec[i]); err != nil {
				return err
			}
			continue
		}
		if err := s.l.Codec.Decode(b, &s.dec[i]); err != nil {
			return errors.Wrapf(err, "rank: index entry of vertex %d", v)
		}
	}
	return nil
}

// decodePlain makes the entry of a plain-CSR list from its bounding
// offset words.
func (s *listSet) decodePlain(b []byte, v uint32, e *dmstore.Entry) error {
	start, end := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	rec := uint64(s.rec)
	if end < start || (end-start)%rec != 0 || (end-start)/rec > uint64(s.l.N)*uint64(s.l.N) {
		return errors.Errorf("rank: vertex %d's plain-CSR list [%#x, %#x) is not a list of %d-byte records (corrupt store)", v, start, end, rec)
	}
	e.Kind, e.Addr, e.Degree = dmstore.OutOfPlace, start, uint32((end-start)/rec)
	return nil
}

// keep keeps in the set (after decodeEntries) the vertices i for which
// fits(i), called in order, holds, and returns their ids. The entries
// are swapped, not copied, so each keeps its own buffers.
func (s *listSet) keep(fits func(i int) bool) []uint32 {
	n := 0
	for i := range s.ids {
		if fits(i) {
			s.ids[n], s.ids[i] = s.ids[i], s.ids[n]
			s.dec[n], s.dec[i] = s.dec[i], s.dec[n]
			n++
		}
	}
	s.ids, s.dec = s.ids[:n], s.dec[:n]
	return s.ids
}

// degree is the length of vertex i's list (after decodeEntries).
func (s *listSet) degree(i int) uint32 { return s.dec[i].Degree }

// queueLists queues the READs of the lists kept out of place (after
// decodeEntries).
func (s *listSet) queueLists(rd reader) error {
	s.at = grow(s.at, len(s.ids))
	total := 0
	for i := range s.ids {
		e := &s.dec[i]
		if e.Kind == dmstore.InPlace {
			s.at[i] = -1
			continue
		}
		s.at[i] = total
		total += s.listBytes(e)
	}
	s.buf = grow(s.buf, total)
	for i, v := range s.ids {
		e := &s.dec[i]
		if s.at[i] < 0 || e.Degree == 0 {
			continue
		}
		b := s.buf[s.at[i] : s.at[i]+s.listBytes(e)]
		if err := rd.Read(b, verbs.Addr(e.Addr)); err != nil {
			return errors.Wrapf(err, "rank: edge list of vertex %d", v)
		}
	}
	rd.Separate()
	return nil
}

// decodeLists decodes every list (after the reader's Flush), checking that
// each is sorted and names vertices of the graph.
func (s *listSet) decodeLists() error {
	s.dst, s.off = s.dst[:0], append(s.off[:0], 0)
	n := s.l.N
	for i, v := range s.ids {
		e := &s.dec[i]
		start := len(s.dst)
		switch {
		case s.at[i] < 0:
			s.dst = append(s.dst, e.Dst...)
		case e.Kind == dmstore.Packed:
			var err error
			if s.dst, _, err = s.l.Codec.UnpackList(s.buf[s.at[i]:s.at[i]+int(e.Bytes)], e.Degree, s.dst, nil); err != nil {
				return errors.Wrapf(err, "rank: packed list of vertex %d", v)
			}
		default:
			b := s.buf[s.at[i] : s.at[i]+int(e.Degree)*s.rec]
			for j := 0; j < len(b); j += s.rec {
				s.dst = append(s.dst, binary.LittleEndian.Uint32(b[j:]))
			}
		}
		l := s.dst[start:]
		for j, x := range l {
			if x >= n || (j > 0 && x < l[j-1]) {
				return errors.Errorf("rank: vertex %d's list is not %d sorted ids of the %d vertices (corrupt store)", v, len(l), n)
			}
		}
		s.off = append(s.off, len(s.dst))
	}
	return nil
}

// listBytes is the size of an out-of-place list as the set reads it.
func (s *listSet) listBytes(e *dmstore.Entry) int {
	if e.Kind == dmstore.Packed {
		return int(e.Bytes)
	}
	return int(e.Degree) * s.rec
}

// list is vertex i's list (after decodeLists).
func (s *listSet) list(i int) []uint32 { return s.dst[s.off[i]:s.off[i+1]] }

// bytes is what the set holds at its high-water mark.
func (s *listSet) bytes() uint64 {
	c := s.l.Codec
	if s.plain {
		return uint64(cap(s.ents)+cap(s.buf)) + 8*uint64(cap(s.at)+cap(s.off)) + 4*uint64(cap(s.dst)) + uint64(cap(s.dec))*64
	}
	return uint64(cap(s.ents)+cap(s.buf)) + 8*uint64(cap(s.at)+cap(s.off)) + 4*uint64(cap(s.dst)) +
		uint64(cap(s.dec))*uint64(4*c.InPlaceCap()+4*c.Chunks+64)
}
