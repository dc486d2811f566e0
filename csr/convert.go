package csr

import (
	"encoding/binary"
	"io"
	"math"

	"github.com/pkg/errors"
)

// Converted is what a parallel conversion (ConvertStaged) wrote: the
// same on every rank.
type Converted struct {
	Meta     *Meta
	N        uint32
	Records  uint64 // edge records
	Bytes    int64  // of the whole file
	Directed bool
	Weighted bool
}

// ConvertStaged is rank cn's part of the conversion of a text edge list
// (Stageable) to a binary edge list by cns ranks together (`dmg convert`
// under a launcher), into out, a file every rank writes (the same one,
// each at its own offsets). It is the staged read's first two steps
// (OpenStaged): each rank parses its byte range of the input and the
// ranks agree on the map of external to dense ids through st's staging
// memory (the ids only: a bitmap, or a sorted list). Then each writes its
// range's edges as records on dense ids, in input order, after those of
// the ranks before it, and rank 0 writes the header and the id table. It
// returns once every rank has written its part (a last Step), with the
// same result or error on every rank.
//
// The file holds the edges as the input lists them, which is what a
// reader with the same Options builds its graph from: an undirected
// graph's edges are listed once each, as the input has them, with the
// undirected flag; self-loops are left out with DropSelfLoops. Options'
// Duplicates must keep them (dropping the parallel copies of an edge
// needs the whole graph: a one-process conversion does it); a reader
// drops them by its own policy anyway. progress, if not nil, sees this
// rank's bytes parsed.
func ConvertStaged(spec string, opts Options, bo BinaryOptions, st Stage, cn, cns int, out io.WriterAt, progress func(done, total int64)) (*Converted, error) {
	var rc *readConfig
	if progress != nil {
		rc = &readConfig{progress: &progressCounter{report: progress}}
	}
	return convertStaged(spec, opts, bo, st, cn, cns, out, rc)
}

func convertStaged(spec string, opts Options, bo BinaryOptions, st Stage, cn, cns int, out io.WriterAt, rc *readConfig) (*Converted, error) {
	o := &opts
	err := o.Validate()
	o.EnsureDefaults()
	if err == nil && o.Duplicates != KeepDuplicates {
		err = errors.Errorf("csr: %s: a parallel conversion keeps parallel edges (a reader drops them); dropping them needs the whole graph in one process", spec)
	}
	in := &stagedInput{o: o, rc: rc}
	r := stageRange{File: spec, Arrays: 1}
	all, err := in.step1(st, spec, cn, cns, &r, err)
	defer in.kept.free()
	if err != nil {
		return nil, err
	}
	p, rs, err := planStage(all)
	if err != nil {
		return nil, err
	}
	s, m, err := stageIDs(st, p.idBytes, p, in, cn, spec, &r) // the ids' region only
	if err != nil {
		return nil, err
	}
	err = s.mapEdges(m)
	c, w := planConvert(o, bo, in, rs, cn, out, m)
	if err == nil {
		err = w.write(in)
	}
	if err == nil && cn == 0 {
		var ids []uint64
		if ids, err = m.table(); err == nil {
			err = writeBinaryHead(io.NewOffsetWriter(out, 0), c.Directed, w.wb, c.N, c.Records, ids, nil)
		}
	}
	if _, err := st.Step(err, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// planConvert sizes the file from every rank's range and sets up this
// rank's writer of records.
func planConvert(o *Options, bo BinaryOptions, in *stagedInput, rs []stageRange, cn int, out io.WriterAt, m *slicedIDs) (*Converted, *recordWriter) {
	c := &Converted{N: m.n(), Directed: !o.Undirected,
		Weighted: (in.weighted && !o.Unweighted) || (o.Weighted && !in.weighted)}
	c.Meta = &Meta{Name: datasetName(in.path), Path: in.path, Format: in.format, Directed: c.Directed, Weighted: c.Weighted}
	wb := 0
	if c.Weighted {
		wb = 8
		if bo.Float32Weights {
			wb = 4
		}
	}
	rec := int64(8 + wb)
	head := int64(binHeaderSize)
	if !m.identity { // the id table
		head += 8 * int64(m.n())
	}
	w := &recordWriter{out: out, wb: wb, dropLoops: o.SelfLoops == DropSelfLoops,
		synth: o.Weighted && !in.weighted, seed: o.Seed}
	w.off = head
	for k, r := range rs {
		n := r.Edges
		if w.dropLoops {
			n -= r.Dropped // counted only when dropped
		}
		if k < cn {
			w.off += rec * int64(n)
		} else if k == cn {
			w.want = n
		}
		c.Records += n
	}
	c.Meta.InputEdges = c.Records
	c.Bytes = head + rec*int64(c.Records)
	return c, w
}

// Solo is the Stage of one rank alone (a conversion in one process): a
// step hands back its own payload, or its error; the staging memory is
// a byte slice.
func Solo() Stage { return solo{} }

type solo struct{}

func (solo) Step(err error, payload []byte) ([][]byte, error) {
	if err != nil {
		return nil, err
	}
	return [][]byte{payload}, nil
}

func (solo) Close(Staging) error { return nil }

func (s solo) Round(err error, payload []byte) ([][]byte, error) { return s.Step(err, payload) }

func (solo) Open(bytes uint64) (Staging, error) { return byteStaging(make([]byte, bytes)), nil }

// byteStaging is staging memory in a byte slice.
type byteStaging []byte

func (m byteStaging) Write(off uint64, b []byte) error {
	if off+uint64(len(b)) > uint64(len(m)) {
		return errors.Errorf("csr: a write of %d bytes at %d past the staging memory's %d", len(b), off, len(m))
	}
	copy(m[off:], b)
	return nil
}

func (m byteStaging) Read(b []byte, off uint64) error {
	if off+uint64(len(b)) > uint64(len(m)) {
		return errors.Errorf("csr: a read of %d bytes at %d past the staging memory's %d", len(b), off, len(m))
	}
	copy(b, m[off:])
	return nil
}

// recordWriter writes one rank's edge records at its offset of the file:
// a sink of dense edges.
type recordWriter struct {
	out       io.WriterAt
	off       int64
	buf       []byte
	wb        int // weight bytes: 0, 4 or 8
	dropLoops bool
	synth     bool // weights from SyntheticWeight
	seed      uint64
	want, n   uint64
	err       error
}

// recordBuf is how many bytes a recordWriter writes at once.
const recordBuf = 4 << 20

// write writes the range's edges (kept, or parsed again).
func (w *recordWriter) write(in *stagedInput) error {
	w.buf = make([]byte, 0, recordBuf)
	if err := in.send(w); err != nil {
		return err
	}
	w.flush()
	if w.err == nil && w.n != w.want {
		w.err = errors.Errorf("csr: %s: wrote %d edge records of this range, expected %d", in.path, w.n, w.want)
	}
	return w.err
}

func (w *recordWriter) edge(s, d uint64, x float64) {
	if w.dropLoops && s == d {
		return
	}
	if w.synth {
		x = SyntheticWeight(w.seed, uint32(s), uint32(d))
	}
	w.buf = appendRecord(w.buf, uint32(s), uint32(d), x, w.wb)
	w.n++
	if len(w.buf) > recordBuf-16 {
		w.flush()
	}
}

func (w *recordWriter) edges(es []edgeRec) {
	for _, e := range es {
		w.edge(e.s, e.d, e.w)
	}
}

func (w *recordWriter) flush() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	if _, err := w.out.WriteAt(w.buf, w.off); err != nil {
		w.err = errors.Wrap(err, "csr: writing binary edge list")
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
}

// appendRecord appends the edge record s→d, weight x in wb bytes (0: none).
func appendRecord(b []byte, s, d uint32, x float64, wb int) []byte {
	b = binary.LittleEndian.AppendUint32(b, s)
	b = binary.LittleEndian.AppendUint32(b, d)
	switch wb {
	case 4:
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	case 8:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}
