package dmstore

import (
	"encoding/binary"
	"github.com/dmg-hpc/dmg/csr"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// readGroupBytes bounds the bytes of the batches ReadRows reads in one
// flush.
const readGroupBytes = 16 << 20

// ReadRows is ReadGraph for the rows of the vertices [lo, hi) only: the
// graph has every vertex, and edges only for those (a share of the graph
// as the layout stores it, for a new cut of its chunks). A loading
// batch's out-of-place lists lie together on one MN (Batch.EdgeOff), so
// it reads each batch whole, its index entries and its lists, in two
// READs, several batches per flush, and cuts the lists out of the copy.
func (l *Layout) ReadRows(ep verbs.Endpoint, lo, hi uint32) (*csr.Graph, error) {
	if l.Config.Naive {
		return l.readRowsEach(ep, lo, hi)
	}
	g := &csr.Graph{N: l.N, Offsets: make([]uint64, uint64(l.N)+1), Directed: true}
	if l.Weighted {
		g.Weights = []float64{}
	}
	type read struct {
		b          Batch // clipped to [lo, hi)
		region     uint64
		idx, edges []byte
	}
	var group []read
	queued := 0
	flush := func() error {
		if err := ep.Flush(); err != nil {
			return err
		}
		for _, r := range group {
			if err := l.decodeBatch(g, r.b, r.idx, r.edges, r.region); err != nil {
				return err
			}
		}
		group, queued = group[:0], 0
		return nil
	}
	for _, b := range l.Batches {
		if b.Hi <= lo || b.Lo >= hi {
			continue
		}
		region, err := verbs.MakeAddr(b.MN, b.EdgeOff)
		if err != nil {
			return nil, err
		}
		r := read{b: b, region: uint64(region), edges: make([]byte, b.EdgeBytes)}
		r.b.Lo, r.b.Hi = max(b.Lo, lo), min(b.Hi, hi)
		r.idx = make([]byte, l.indexBytes(r.b))
		if err := ep.Read(r.idx, l.EntryAddr(r.b.Lo)); err != nil {
			return nil, err
		}
		for off := 0; off < len(r.edges); off += verbs.MaxBulk {
			if err := ep.Read(r.edges[off:min(len(r.edges), off+verbs.MaxBulk)], region.Add(uint64(off))); err != nil {
				return nil, err
			}
		}
		group = append(group, r)
		if queued += len(r.idx) + len(r.edges); queued >= readGroupBytes {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	for v := hi; v < l.N; v++ {
		g.Offsets[v+1] = uint64(len(g.Dst))
	}
	return g, nil
}

// decodeBatch appends the rows of batch b's vertices to g from its index
// entries and its edge region (read from global address region).
func (l *Layout) decodeBatch(g *csr.Graph, b Batch, idx, edges []byte, region uint64) error {
	rec := l.Codec.RecordBytes()
	segs := make([]uint32, l.NumChunks())
	var e Entry
	for v := b.Lo; v < b.Hi; v++ {
		if err := l.Codec.Decode(idx[uint64(v-b.Lo)*uint64(l.Codec.Size):], &e); err != nil {
			return errors.Wrapf(err, "csr: vertex %d", v)
		}
		if e.Kind == InPlace {
			g.Dst = append(g.Dst, e.Dst...)
			for _, x := range e.Weights {
				g.Weights = append(g.Weights, float64(x))
			}
			g.Offsets[v+1] = uint64(len(g.Dst))
			continue
		}
		start := e.Addr - uint64(e.TableBytes) - region
		n := uint64(e.TableBytes) + uint64(e.Degree)*uint64(rec)
		if e.Kind == Packed {
			n = uint64(e.Bytes)
		}
		if e.Addr < region+uint64(e.TableBytes) || start+n > uint64(len(edges)) {
			return errors.Errorf("csr: vertex %d: its list at %#x (%d bytes) is not in its batch's region %#x (%d bytes)", v, e.Addr, n, region, len(edges))
		}
		list := edges[start : start+n]
		if e.Kind == Packed {
			if err := l.appendPacked(g, list, e.Degree); err != nil {
				return errors.Wrapf(err, "csr: vertex %d", v)
			}
			g.Offsets[v+1] = uint64(len(g.Dst))
			continue
		}
		if e.Kind == Overflow {
			if err := l.Codec.DecodeTable(list, &e); err != nil {
				return errors.Wrapf(err, "csr: vertex %d", v)
			}
		}
		body := list[e.TableBytes:]
		first := len(g.Dst)
		for i := 0; i < int(e.Degree); i++ {
			r := body[i*rec:]
			g.Dst = append(g.Dst, binary.LittleEndian.Uint32(r))
			if l.Weighted {
				g.Weights = append(g.Weights, float64(l.Codec.Weights.Get(r[4:])))
			}
		}
		// The segment lengths must match the list.
		SegmentLengths(g.Dst[first:], l.Config.Bounds, segs)
		for k := range segs {
			if segs[k] != e.Segments[k] {
				return errors.Errorf("csr: vertex %d: segment %d has %d edges, entry says %d", v, k, segs[k], e.Segments[k])
			}
		}
		g.Offsets[v+1] = uint64(len(g.Dst))
	}
	return nil
}

// appendPacked appends a packed list's edges to g.
func (l *Layout) appendPacked(g *csr.Graph, list []byte, degree uint32) error {
	var w []float32
	var err error
	if g.Dst, w, err = l.Codec.UnpackList(list, degree, g.Dst, nil); err != nil {
		return err
	}
	for _, x := range w {
		g.Weights = append(g.Weights, float64(x))
	}
	return nil
}
