package rank

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/pkg/errors"
)

// Store is where the graph and the vertex attributes live on the memory
// nodes. Every rank computes the same Store from the degree array alone.
//
// Layout: the vertex range is cut into one contiguous range per MN,
// balancing the bytes each MN holds. MN m holds, for its vertices [lo, hi):
//
//	offsets  (hi-lo+1) × 8 B   edge positions relative to the MN's edge base
//	edges    E_m × 4 B          destination ids, sorted per vertex
//	weights  E_m × 8 B          float64 weights (weighted graphs only)
//	values   (hi-lo) × 8 B      current attribute values (written back by CNs)
//	inbox    (hi-lo) × 8 B      remote-update target of the next iteration
//
// so the edges of a run of consecutive vertices are one contiguous READ on
// one MN, after one READ of their offsets.
type Store struct {
	N        uint32
	E        uint64
	Weighted bool
	// MNLo has NumMN+1 entries: MN m holds vertices [MNLo[m], MNLo[m+1]).
	MNLo []uint32
	// EdgeLo[m] is the global position of MN m's first edge.
	EdgeLo []uint64
	// Region offsets within each MN's pool.
	offsets, edges, weights, values, inbox []uint64
	// Need is the bytes each MN's pool must hold.
	Need []uint64
}

// bytes a vertex and an edge cost on DM, in units of 4 bytes, for balancing.
const (
	vertexWords = 6 // offset + value + inbox
	edgeWords   = 1
)

// NewStore lays out a graph with the given CSR offsets over numMN memory
// nodes.
func NewStore(offsets []uint64, weighted bool, numMN int) (*Store, error) {
	if len(offsets) == 0 {
		return nil, errors.New("rank: graph has no offsets array")
	}
	n := uint32(len(offsets) - 1)
	deg := balance.DegreesFromOffsets(offsets)
	ew := uint64(edgeWords)
	if weighted {
		ew += 2
		for i := range deg {
			deg[i] *= ew
		}
	}
	lo, err := balance.Chunks(deg, numMN, vertexWords)
	if err != nil {
		return nil, err
	}
	s := &Store{N: n, E: offsets[n], Weighted: weighted, MNLo: lo, EdgeLo: make([]uint64, numMN+1)}
	for _, r := range []*[]uint64{&s.offsets, &s.edges, &s.weights, &s.values, &s.inbox, &s.Need} {
		*r = make([]uint64, numMN)
	}
	for m := range numMN {
		a, b := lo[m], lo[m+1]
		s.EdgeLo[m] = offsets[a]
		em := offsets[b] - offsets[a]
		nv := uint64(b - a)
		off := uint64(0)
		s.offsets[m] = off
		off += 8 * (nv + 1)
		s.edges[m] = off
		off += (4*em + 7) / 8 * 8
		s.weights[m] = off
		if weighted {
			off += 8 * em
		}
		s.values[m] = off
		off += 8 * nv
		s.inbox[m] = off
		off += 8 * nv
		s.Need[m] = off
	}
	s.EdgeLo[numMN] = s.E
	return s, nil
}

// MNOf is the memory node holding vertex v.
func (s *Store) MNOf(v uint32) int {
	return sort.Search(len(s.MNLo)-1, func(m int) bool { return s.MNLo[m+1] > v })
}

func addr(mn int, off uint64) verbs.Addr {
	a, _ := verbs.MakeAddr(mn, off) // offsets are bounded by the pool sizes checked at Open
	return a
}

// OffsetAddr is the address of v's offset word (v may be MNLo[m+1] of its MN).
func (s *Store) OffsetAddr(m int, v uint32) verbs.Addr {
	return addr(m, s.offsets[m]+8*uint64(v-s.MNLo[m]))
}

// EdgeAddr is the address of the edge at MN-relative position pos on m.
func (s *Store) EdgeAddr(m int, pos uint64) verbs.Addr { return addr(m, s.edges[m]+4*pos) }

// WeightAddr is the address of the weight at MN-relative position pos.
func (s *Store) WeightAddr(m int, pos uint64) verbs.Addr { return addr(m, s.weights[m]+8*pos) }

// ValueAddr is the address of v's current value.
func (s *Store) ValueAddr(v uint32) verbs.Addr {
	m := s.MNOf(v)
	return addr(m, s.values[m]+8*uint64(v-s.MNLo[m]))
}

// InboxAddr is the address of v's remote-update word.
func (s *Store) InboxAddr(v uint32) verbs.Addr {
	m := s.MNOf(v)
	return addr(m, s.inbox[m]+8*uint64(v-s.MNLo[m]))
}

// Check verifies every MN pool can hold its share.
func (s *Store) Check(net verbs.Network) error {
	for m, need := range s.Need {
		if have := net.PoolSize(m); have < need {
			return errors.Errorf("rank: the graph needs %d bytes on MN %d but its pool has %d; give the memory nodes more memory (--mn-mem) or add memory nodes", need, m, have)
		}
	}
	return nil
}

// maxWrite bounds one WRITE or READ of a bulk transfer.
const maxWrite = 8 << 20

// span is a vertex range [lo, hi) on one MN.
type span struct {
	mn     int
	lo, hi uint32
}

// spans cuts [lo, hi) at MN boundaries.
func (s *Store) spans(lo, hi uint32) []span {
	var out []span
	for lo < hi {
		m := s.MNOf(lo)
		end := min(hi, s.MNLo[m+1])
		out = append(out, span{m, lo, end})
		lo = end
	}
	return out
}

// writeBulk queues a large buffer as WRITEs of at most maxWrite bytes and
// flushes.
func writeBulk(ep verbs.Endpoint, dst verbs.Addr, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), maxWrite)
		if err := ep.Write(dst, b[:n]); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		dst, b = dst.Add(uint64(n)), b[n:]
	}
	return nil
}

// readBulk reads a large range in pieces of at most maxWrite bytes.
func readBulk(ep verbs.Endpoint, dst []byte, src verbs.Addr) error {
	for len(dst) > 0 {
		n := min(len(dst), maxWrite)
		if err := ep.Read(dst[:n], src); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		dst, src = dst[n:], src.Add(uint64(n))
	}
	return nil
}

// Load writes the part of g whose vertices lie in [lo, hi) (a CN's chunk):
// offsets, edges and weights, in large WRITEs.
func (s *Store) Load(ep verbs.Endpoint, g *csr.Graph, lo, hi uint32) error {
	for _, sp := range s.spans(lo, hi) {
		m := sp.mn
		base := s.EdgeLo[m]
		// Offsets: entries lo..hi inclusive (the end entry of the MN's range
		// is written by the CN whose chunk reaches it).
		offs := make([]byte, 8*(sp.hi-sp.lo+1))
		for v := sp.lo; v <= sp.hi; v++ {
			binary.LittleEndian.PutUint64(offs[8*(v-sp.lo):], g.Offsets[v]-base)
		}
		if err := writeBulk(ep, s.OffsetAddr(m, sp.lo), offs); err != nil {
			return err
		}
		e0, e1 := g.Offsets[sp.lo], g.Offsets[sp.hi]
		if e1 == e0 {
			continue
		}
		eb := make([]byte, 4*(e1-e0))
		for i, d := range g.Dst[e0:e1] {
			binary.LittleEndian.PutUint32(eb[4*i:], d)
		}
		if err := writeBulk(ep, s.EdgeAddr(m, e0-base), eb); err != nil {
			return err
		}
		if s.Weighted {
			wb := make([]byte, 8*(e1-e0))
			for i, w := range g.Weights[e0:e1] {
				binary.LittleEndian.PutUint64(wb[8*i:], math.Float64bits(w))
			}
			if err := writeBulk(ep, s.WeightAddr(m, e0-base), wb); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeWords writes vals (for vertices lo, lo+1, ...) to the value or inbox
// array, across MN boundaries.
func (s *Store) writeWords(ep verbs.Endpoint, at func(uint32) verbs.Addr, lo uint32, vals []uint64) error {
	for _, sp := range s.spans(lo, lo+uint32(len(vals))) {
		b := make([]byte, 8*(sp.hi-sp.lo))
		for i := range sp.hi - sp.lo {
			binary.LittleEndian.PutUint64(b[8*i:], vals[sp.lo-lo+i])
		}
		if err := writeBulk(ep, at(sp.lo), b); err != nil {
			return err
		}
	}
	return nil
}

// readWords reads the value or inbox words of vertices [lo, lo+len(vals)).
func (s *Store) readWords(ep verbs.Endpoint, at func(uint32) verbs.Addr, lo uint32, vals []uint64) error {
	for _, sp := range s.spans(lo, lo+uint32(len(vals))) {
		b := make([]byte, 8*(sp.hi-sp.lo))
		if err := readBulk(ep, b, at(sp.lo)); err != nil {
			return err
		}
		for i := range sp.hi - sp.lo {
			vals[sp.lo-lo+i] = binary.LittleEndian.Uint64(b[8*i:])
		}
	}
	return nil
}
