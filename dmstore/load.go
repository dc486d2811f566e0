package dmstore

import (
	"encoding/binary"
	"github.com/dmg-hpc/dmg/csr"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// maxWrite bounds one WRITE of an edge block (larger blocks are split).
const maxWrite = 4 << 20

// flushBytes is how much a loader worker queues before it flushes.
const flushBytes = 8 << 20

// LoadProgress is passed to LoadOptions.Progress: what this CN has written
// so far and in total.
type LoadProgress struct {
	Vertices, Edges, Bytes                uint64
	TotalVertices, TotalEdges, TotalBytes uint64
}

// LoadOptions tune Load.
type LoadOptions struct {
	// Progress, if set, is called (serialised, from loader goroutines)
	// after every flush and once at the end.
	Progress func(LoadProgress)
	// Lo and Hi, when Hi > 0, load only the vertices [Lo, Hi) of the
	// chunk, a window of a windowed share (Share.Windows) whose rows g
	// holds: both must be batch bounds of the chunk (or its ends).
	// Progress then counts from Done, what the earlier windows wrote,
	// towards the whole chunk's totals, its edges being ChunkEdges.
	Lo, Hi     uint32
	Done       LoadProgress
	ChunkEdges uint64
	// Rooms says the layout was planned from degree bounds (RoomRange):
	// a batch's lists may take less than its EdgeBytes, whose rest is
	// left unwritten.
	Rooms bool
}

// LoadReport is what one CN did while loading.
type LoadReport struct {
	CN              int
	Vertices, Edges uint64
	// Bytes and Writes count what this CN wrote; BytesPerMN splits Bytes by
	// destination MN.
	Bytes, Writes uint64
	BytesPerMN    []uint64
	// InPlace and Overflow count the vertices written in place and the
	// lists written with an overflow table (Layout.InPlace and Overflow,
	// as loaded).
	InPlace, Overflow uint64
	Seconds           float64
	// Windows is how many windows of its share the CN built and loaded
	// one after the other (Share.Windows; 1: the share whole, 0: none
	// counted); merged, the most of any CN.
	Windows int
}

// EdgesPerSecond is the load rate.
func (r *LoadReport) EdgesPerSecond() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Edges) / r.Seconds
}

// Merge adds another CN's report (times: the maximum, as CNs load in
// parallel).
func (r *LoadReport) Merge(o *LoadReport) {
	r.Vertices += o.Vertices
	r.Edges += o.Edges
	r.Bytes += o.Bytes
	r.Writes += o.Writes
	r.InPlace += o.InPlace
	r.Overflow += o.Overflow
	if len(r.BytesPerMN) < len(o.BytesPerMN) {
		r.BytesPerMN = append(r.BytesPerMN, make([]uint64, len(o.BytesPerMN)-len(r.BytesPerMN))...)
	}
	for m, b := range o.BytesPerMN {
		r.BytesPerMN[m] += b
	}
	r.Seconds = max(r.Seconds, o.Seconds)
	r.Windows = max(r.Windows, o.Windows)
}

// Load writes CN cn's share of the layout (the index entries, overflow
// tables and edge lists of the vertices of chunk cn) through the given
// endpoints, one goroutine per endpoint. Attribute arrays are left to the
// engine. Every CN calls Load for its own chunk; together they write the
// whole graph. g may be the whole graph or the CN's share (OpenShare), or
// its in-edges (Share.In) for a layout of the reverse adjacency: only
// chunk cn's rows are read. Call CheckCapacity first.
func (l *Layout) Load(g *csr.Graph, cn int, eps []verbs.Endpoint, opts LoadOptions) (*LoadReport, error) {
	if cn < 0 || cn >= l.NumChunks() {
		return nil, errors.Errorf("csr: CN %d has no chunk; expected 0..%d", cn, l.NumChunks()-1)
	}
	if len(eps) == 0 {
		return nil, errors.New("csr: Load needs at least one endpoint")
	}
	if g.N != l.N || g.NumEdges() > l.Edges || (g.Weights != nil) != l.Weighted {
		return nil, errors.Errorf("csr: graph (%d vertices, %d edges) does not match the layout (%d, %d)", g.N, g.NumEdges(), l.N, l.Edges)
	}
	start := time.Now()
	batches := l.ChunkBatches(cn)
	lo, hi := l.Config.Bounds[cn], l.Config.Bounds[cn+1]
	total := LoadProgress{TotalVertices: uint64(hi - lo), TotalEdges: g.Off(hi) - g.Off(lo)}
	for _, b := range batches {
		total.TotalBytes += l.indexBytes(b) + b.EdgeBytes
	}
	if opts.Hi > 0 {
		i := slices.IndexFunc(batches, func(b Batch) bool { return b.Lo >= opts.Lo })
		j := slices.IndexFunc(batches, func(b Batch) bool { return b.Lo >= opts.Hi })
		if j < 0 {
			j = len(batches)
		}
		if i < 0 || opts.Lo < lo || opts.Hi > hi || opts.Lo >= opts.Hi || batches[i].Lo != opts.Lo || batches[j-1].Hi != opts.Hi {
			return nil, errors.Errorf("csr: window [%d, %d) of chunk %d [%d, %d) is not made of its loading batches", opts.Lo, opts.Hi, cn, lo, hi)
		}
		batches = batches[i:j]
		d := opts.Done
		total.Vertices, total.Edges, total.Bytes, total.TotalEdges = d.Vertices, d.Edges, d.Bytes, opts.ChunkEdges
	}
	rep := &LoadReport{CN: cn, BytesPerMN: make([]uint64, len(l.MN))}
	var mu sync.Mutex // guards rep, total, progress calls
	var next atomic.Int64
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for w, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lw := loadWorker{l: l, g: g, ep: ep, perMN: make([]uint64, len(l.MN)), segs: make([]uint32, l.NumChunks()), rooms: opts.Rooms}
			report := func() {
				mu.Lock()
				defer mu.Unlock()
				total.Vertices += lw.vertices
				total.Edges += lw.edges
				total.Bytes += lw.bytes
				rep.Vertices += lw.vertices
				rep.Edges += lw.edges
				rep.Bytes += lw.bytes
				rep.Writes += lw.writes
				rep.InPlace += lw.inPlace
				rep.Overflow += lw.overflow
				for m, b := range lw.perMN {
					rep.BytesPerMN[m] += b
					lw.perMN[m] = 0
				}
				lw.vertices, lw.edges, lw.bytes, lw.writes, lw.inPlace, lw.overflow = 0, 0, 0, 0, 0, 0
				if opts.Progress != nil {
					opts.Progress(total)
				}
			}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(batches) {
					break
				}
				if err := lw.batch(batches[i]); err != nil {
					errs[w] = err
					return
				}
				if lw.queued >= flushBytes {
					if err := lw.flush(); err != nil {
						errs[w] = err
						return
					}
					report()
				}
			}
			if err := lw.flush(); err != nil {
				errs[w] = err
				return
			}
			report()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func (l *Layout) indexBytes(b Batch) uint64 {
	n := uint64(b.Hi - b.Lo)
	if l.Config.Naive {
		if b.Hi == l.Config.Bounds[b.Chunk+1] {
			n++
		}
		return 8 * n
	}
	return n * uint64(l.Codec.Size)
}

type loadWorker struct {
	l      *Layout
	g      *csr.Graph
	ep     verbs.Endpoint
	idx    []byte
	ebuf   []byte
	segs   []uint32
	w32    []float32
	queued uint64

	vertices, edges, bytes, writes uint64
	inPlace, overflow              uint64
	perMN                          []uint64
	pendV, pendE                   uint64
	rooms                          bool
}

func (lw *loadWorker) write(a verbs.Addr, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), maxWrite)
		if err := lw.ep.Write(a, b[:n]); err != nil {
			return errors.Wrapf(err, "csr: writing %d bytes at %v", n, a)
		}
		lw.writes++
		lw.queued += uint64(n)
		lw.perMN[a.MN()] += uint64(n)
		a = a.Add(uint64(n))
		b = b[n:]
	}
	return nil
}

func (lw *loadWorker) flush() error {
	if err := lw.ep.Flush(); err != nil {
		return errors.Wrap(err, "csr: loading")
	}
	lw.bytes += lw.queued
	lw.queued = 0
	lw.vertices += lw.pendV
	lw.edges += lw.pendE
	lw.pendV, lw.pendE = 0, 0
	return nil
}

// batch encodes and queues one loading batch.
func (lw *loadWorker) batch(b Batch) error {
	l, g := lw.l, lw.g
	ib := l.indexBytes(b)
	lw.idx = grow(lw.idx, int(ib))
	lw.ebuf = grow(lw.ebuf, int(b.EdgeBytes))
	idx, edges := lw.idx, lw.ebuf
	rec := uint64(l.Codec.RecordBytes())
	if err := l.checkWeights(g, b); err != nil {
		return err
	}
	pos := uint64(0)
	putRecords := func(at uint64, v uint32) {
		a := g.Off(v)
		for i, d := range g.Neighbors(v) {
			p := at + uint64(i)*rec
			binary.LittleEndian.PutUint32(edges[p:], d)
			if g.Weights != nil {
				l.Codec.Weights.Put(edges[p+4:], g.Weights[a+uint64(i)])
			}
		}
	}
	if l.Config.Naive {
		base := g.Off(b.Lo)
		for v := b.Lo; v <= b.Hi; v++ {
			if v == b.Hi && ib == 8*uint64(b.Hi-b.Lo) {
				break
			}
			a := uint64(b.MN)<<verbs.OffsetBits | (b.EdgeOff + (g.Off(v)-base)*rec)
			binary.LittleEndian.PutUint64(idx[8*(v-b.Lo):], a)
			if v < b.Hi {
				putRecords((g.Off(v)-base)*rec, v)
			}
		}
		pos = (g.Off(b.Hi) - base) * rec
	} else {
		c := l.Codec
		for v := b.Lo; v < b.Hi; v++ {
			e := idx[uint64(v-b.Lo)*uint64(c.Size):]
			deg := g.Degree(v)
			nb := g.Neighbors(v)
			if l.Config.inPlace(c, deg) {
				var w []float32
				if g.Weights != nil {
					lw.w32 = lw.w32[:0]
					for _, x := range g.EdgeWeights(v) {
						lw.w32 = append(lw.w32, float32(x))
					}
					w = lw.w32
				}
				if err := c.EncodeInPlace(e, nb, w); err != nil {
					return err
				}
				lw.inPlace++
				continue
			}
			if l.Config.packs(deg) {
				n, err := lw.packed(e, b, pos, v)
				if err != nil {
					return err
				}
				pos += n
				continue
			}
			SegmentLengths(nb, l.Config.Bounds, lw.segs)
			tb := uint64(c.TableBytes(lw.segs))
			if tb > 0 {
				copy(edges[pos:pos+tb], c.OverflowTable(lw.segs))
				lw.overflow++
			}
			addr, err := verbs.MakeAddr(b.MN, b.EdgeOff+pos+tb)
			if err != nil {
				return errors.Wrap(err, "csr: edge list address")
			}
			if _, err := c.EncodeOutOfPlace(e, uint32(deg), uint64(addr), lw.segs); err != nil {
				return err
			}
			putRecords(pos+tb, v)
			pos += tb + deg*rec
		}
	}
	if pos > b.EdgeBytes || (pos < b.EdgeBytes && !lw.rooms) {
		return errors.Errorf("csr: batch %d..%d encodes %d edge bytes, the layout planned %d", b.Lo, b.Hi, pos, b.EdgeBytes)
	}
	edges = edges[:pos] // a room's rest stays unwritten
	if err := lw.write(l.EntryAddr(b.Lo), idx); err != nil {
		return err
	}
	if len(edges) > 0 {
		a, err := verbs.MakeAddr(b.MN, b.EdgeOff)
		if err != nil {
			return errors.Wrap(err, "csr: edge block address")
		}
		if err := lw.write(a, edges); err != nil {
			return err
		}
	}
	lw.pendV += uint64(b.Hi - b.Lo)
	lw.pendE += g.Off(b.Hi) - g.Off(b.Lo)
	return nil
}

// packed encodes vertex v's list packed at pos of batch b's edge buffer
// and its entry in e, and returns the list's size.
func (lw *loadWorker) packed(e []byte, b Batch, pos uint64, v uint32) (uint64, error) {
	g, c := lw.g, lw.l.Codec
	addr, err := verbs.MakeAddr(b.MN, b.EdgeOff+pos)
	if err != nil {
		return 0, errors.Wrap(err, "csr: edge list address")
	}
	list := AppendPacked(lw.ebuf[pos:pos:len(lw.ebuf)], g.Neighbors(v))
	if g.Weights != nil {
		for _, x := range g.EdgeWeights(v) {
			list = c.Weights.Append(list, x)
		}
	}
	if pos+uint64(len(list)) > uint64(len(lw.ebuf)) { // list is a copy
		return 0, errors.Errorf("csr: batch %d..%d: vertex %d's packed list passes the %d edge bytes the layout planned", b.Lo, b.Hi, v, len(lw.ebuf))
	}
	return uint64(len(list)), c.EncodePacked(e, uint32(g.Degree(v)), uint64(addr), uint32(len(list)))
}

// checkWeights refuses a batch with a weight the layout's code does not
// hold: the code was chosen from the graph's weights (NarrowestWeights),
// so this is a graph other than the one measured.
func (l *Layout) checkWeights(g *csr.Graph, b Batch) error {
	c := l.Codec.Weights
	if !l.Weighted || c == WeightFloat32 {
		return nil
	}
	lo, hi := g.Off(b.Lo), g.Off(b.Hi)
	for i, w := range g.Weights[lo:hi] {
		if !c.Holds(w) {
			return errors.Errorf("csr: batch %d..%d: edge %d has weight %g, which the layout's %s weights do not hold", b.Lo, b.Hi, lo+uint64(i), w, c)
		}
	}
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// ReadGraph reads the whole graph back from DM through ep and rebuilds it
// (without external ids; weights come back as float32 values). It is the
// loader's verifier: slow, simple, one batch at a time.
func (l *Layout) ReadGraph(ep verbs.Endpoint) (*csr.Graph, error) { return l.ReadRows(ep, 0, l.N) }

// readRowsEach is ReadRows one list at a time: a READ per out-of-place
// list (the naive layout's).
func (l *Layout) readRowsEach(ep verbs.Endpoint, lo, hi uint32) (*csr.Graph, error) {
	g := &csr.Graph{N: l.N, Offsets: make([]uint64, uint64(l.N)+1), Directed: true}
	if l.Weighted {
		g.Weights = []float64{}
	}
	rec := l.Codec.RecordBytes()
	var e Entry
	var lists [][]byte
	for _, b := range l.Batches {
		if b.Hi <= lo || b.Lo >= hi {
			continue
		}
		b.Lo, b.Hi = max(b.Lo, lo), min(b.Hi, hi)
		ib := l.indexBytes(b)
		idx := make([]byte, ib)
		if err := ep.Read(idx, l.EntryAddr(b.Lo)); err != nil {
			return nil, err
		}
		if err := ep.Flush(); err != nil {
			return nil, err
		}
		type pending struct {
			v   uint32
			e   Entry
			buf []byte
		}
		var outs []pending
		lists = lists[:0]
		for v := b.Lo; v < b.Hi; v++ {
			if l.Config.Naive {
				s := binary.LittleEndian.Uint64(idx[8*(v-b.Lo):])
				var end uint64
				if v+1 < b.Hi || ib > 8*uint64(b.Hi-b.Lo) {
					end = binary.LittleEndian.Uint64(idx[8*(v-b.Lo+1):])
				} else {
					var w [8]byte
					if err := ep.Read(w[:], l.EntryAddr(v+1)); err != nil {
						return nil, err
					}
					if err := ep.Flush(); err != nil {
						return nil, err
					}
					end = binary.LittleEndian.Uint64(w[:])
				}
				if end < s || (end-s)%uint64(rec) != 0 {
					return nil, errors.Errorf("csr: vertex %d: bad naive offsets %#x..%#x", v, s, end)
				}
				buf := make([]byte, end-s)
				if err := ep.Read(buf, verbs.Addr(s)); err != nil {
					return nil, err
				}
				outs = append(outs, pending{v: v, e: Entry{Kind: OutOfPlace, Degree: uint32((end - s) / uint64(rec))}, buf: buf})
				continue
			}
			if err := l.Codec.Decode(idx[uint64(v-b.Lo)*uint64(l.Codec.Size):], &e); err != nil {
				return nil, errors.Wrapf(err, "csr: vertex %d", v)
			}
			p := pending{v: v, e: Entry{Kind: e.Kind, Degree: e.Degree, Addr: e.Addr, TableBytes: e.TableBytes}}
			if e.Kind == InPlace {
				p.e.Dst = append([]uint32(nil), e.Dst...)
				p.e.Weights = append([]float32(nil), e.Weights...)
			} else {
				p.e.Segments = append([]uint32(nil), e.Segments...)
				p.buf = make([]byte, uint64(e.TableBytes)+uint64(e.Degree)*uint64(rec))
				if err := ep.Read(p.buf, verbs.Addr(e.Addr-uint64(e.TableBytes))); err != nil {
					return nil, err
				}
			}
			outs = append(outs, p)
		}
		if err := ep.Flush(); err != nil {
			return nil, err
		}
		for _, p := range outs {
			v := p.v
			switch {
			case p.e.Kind == InPlace:
				g.Dst = append(g.Dst, p.e.Dst...)
				for _, x := range p.e.Weights {
					g.Weights = append(g.Weights, float64(x))
				}
			default:
				if p.e.Kind == Overflow {
					if err := l.Codec.DecodeTable(p.buf, &p.e); err != nil {
						return nil, errors.Wrapf(err, "csr: vertex %d", v)
					}
				}
				body := p.buf[p.e.TableBytes:]
				for i := 0; i < int(p.e.Degree); i++ {
					r := body[i*rec:]
					g.Dst = append(g.Dst, binary.LittleEndian.Uint32(r))
					if l.Weighted {
						g.Weights = append(g.Weights, float64(l.Codec.Weights.Get(r[4:])))
					}
				}
				if !l.Config.Naive {
					// The segment lengths must match the list.
					segs := make([]uint32, l.NumChunks())
					SegmentLengths(g.Dst[len(g.Dst)-int(p.e.Degree):], l.Config.Bounds, segs)
					for k := range segs {
						if segs[k] != p.e.Segments[k] {
							return nil, errors.Errorf("csr: vertex %d: segment %d has %d edges, entry says %d", v, k, segs[k], p.e.Segments[k])
						}
					}
				}
			}
			g.Offsets[v+1] = uint64(len(g.Dst))
		}
	}
	for v := hi; v < l.N; v++ {
		g.Offsets[v+1] = uint64(len(g.Dst))
	}
	return g, nil
}
