package csr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/pkg/errors"
)

// The DMG binary edge list (".bel", optionally gzipped) is a compact,
// self-describing edge list on dense ids. All integers are little-endian.
//
//	offset  size  field
//	0       8     magic "DMGBEL\x00\x01" (the last byte is the version, 1)
//	8       4     flags: bit 0 = undirected (each edge listed once, stands
//	              for both directions); bit 1 = an id table follows the header;
//	              bit 2 = properties follow (the id table, if any)
//	12      4     weight bytes per edge: 0 (unweighted), 4 (float32) or 8
//	              (float64)
//	16      8     N, the number of vertices (≤ 2^32-1)
//	24      8     M, the number of edge records
//	32      8·N   id table (only with flag bit 1): external id of each dense
//	              id, strictly increasing
//	...     8+L   properties (only with flag bit 2): L (uint64, at most
//	              1 MiB), then L bytes of "key = value" lines, sorted by key:
//	              the Graphalytics properties of the input, without their
//	              "graph.NAME." prefix (Meta.Properties), whose algorithm
//	              parameters (sources, PageRank iterations and damping) a
//	              reader takes as a .properties file's
//	...     M ×   edge records: src uint32, dst uint32, then the weight
//	              (float32 or float64) if weight bytes > 0
//
// Nothing may follow the last record. Ids in records are dense (< N).
const (
	binMagic       = "DMGBEL\x00\x01"
	binHeaderSize  = 32
	binFlagUndir   = 1 << 0
	binFlagIDTable = 1 << 1
	binFlagProps   = 1 << 2
	binKnownFlags  = binFlagUndir | binFlagIDTable | binFlagProps
	// binMaxProps bounds the properties' bytes.
	binMaxProps = 1 << 20
	// binBlockRecords is how many edge records readBinary reads at once.
	binBlockRecords = 4096
)

// BinaryOptions tune WriteBinary.
type BinaryOptions struct {
	// Float32Weights stores weights as float32 (8+4 bytes per edge instead
	// of 8+8; weights lose precision).
	Float32Weights bool
	// Properties, if any, are stored with the graph (Meta.Properties of a
	// Graphalytics input, which carry its algorithm parameters). Keys may
	// not hold '=', ':' or line ends, values no line ends.
	Properties map[string]string
}

// WriteBinary writes g as a DMG binary edge list (see the format above).
// An undirected graph is written with each edge once (u ≤ v) and the
// undirected flag, so reading it back yields the same Graph (with the
// default duplicate policy and no parallel edges in g).
func WriteBinary(w io.Writer, g *Graph, bo BinaryOptions) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var wb uint32
	if g.Weights != nil {
		wb = 8
		if bo.Float32Weights {
			wb = 4
		}
	}
	var m uint64
	if g.Directed {
		m = g.NumEdges()
	} else {
		for v := uint32(0); v < g.N; v++ {
			for _, d := range g.Neighbors(v) {
				if v <= d {
					m++
				}
			}
		}
	}
	var props []byte
	if len(bo.Properties) > 0 {
		for _, k := range slices.Sorted(maps.Keys(bo.Properties)) {
			v := bo.Properties[k]
			if k == "" || strings.ContainsAny(k, "=:\r\n") || strings.ContainsAny(v, "\r\n") {
				return errors.Errorf("csr: writing binary edge list: property %q = %q cannot be stored", k, v)
			}
			props = fmt.Appendf(props, "%s = %s\n", k, v)
		}
		if len(props) > binMaxProps {
			return errors.Errorf("csr: writing binary edge list: %d bytes of properties, more than %d", len(props), binMaxProps)
		}
	}
	if err := writeBinaryHead(bw, g.Directed, int(wb), g.N, m, g.IDs, props); err != nil {
		return err
	}
	var b [16]byte
	for v := uint32(0); v < g.N; v++ {
		for i := g.Offsets[v]; i < g.Offsets[v+1]; i++ {
			d := g.Dst[i]
			if !g.Directed && d < v {
				continue
			}
			x := 0.0
			if wb > 0 {
				x = g.Weights[i]
			}
			if _, err := bw.Write(appendRecord(b[:0], v, d, x, int(wb))); err != nil {
				return errors.Wrap(err, "csr: writing binary edge list")
			}
		}
	}
	return errors.Wrap(bw.Flush(), "csr: writing binary edge list")
}

// writeBinaryHead writes a binary edge list's header, its id table (ids,
// if not nil) and its properties (props, if not nil: their text).
func writeBinaryHead(w io.Writer, directed bool, wb int, n uint32, m uint64, ids []uint64, props []byte) error {
	var flags uint32
	if !directed {
		flags |= binFlagUndir
	}
	if ids != nil {
		flags |= binFlagIDTable
	}
	if props != nil {
		flags |= binFlagProps
	}
	b := make([]byte, binHeaderSize, binHeaderSize+8*min(len(ids), 1<<16))
	copy(b, binMagic)
	binary.LittleEndian.PutUint32(b[8:], flags)
	binary.LittleEndian.PutUint32(b[12:], uint32(wb))
	binary.LittleEndian.PutUint64(b[16:], uint64(n))
	binary.LittleEndian.PutUint64(b[24:], m)
	for len(ids) > 0 {
		k := min(len(ids), 1<<16)
		for _, id := range ids[:k] {
			b = binary.LittleEndian.AppendUint64(b, id)
		}
		if _, err := w.Write(b); err != nil {
			return errors.Wrap(err, "csr: writing binary edge list")
		}
		b, ids = b[:0], ids[k:]
	}
	if props != nil {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(props)))
		b = append(b, props...)
	}
	_, err := w.Write(b)
	return errors.Wrap(err, "csr: writing binary edge list")
}

// With a sink, the edges go to it (dense ids) and the EdgeList has none.
func readBinary(r io.Reader, file string, o *Options, meta *Meta, snk sink) (*EdgeList, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var h [binHeaderSize]byte
	if n, err := io.ReadFull(br, h[:]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, offsetErr(file, 0, "expected a %d-byte DMG binary edge list header, got an empty file", binHeaderSize)
		}
		return nil, offsetErr(file, int64(n), "truncated header: expected %d bytes, got %d", binHeaderSize, n)
	}
	if string(h[:8]) != binMagic {
		return nil, offsetErr(file, 0, "expected magic %q (DMG binary edge list v1), got %q", binMagic, h[:8])
	}
	flags := binary.LittleEndian.Uint32(h[8:])
	if flags&^binKnownFlags != 0 {
		return nil, offsetErr(file, 8, "unknown flags %#x", flags&^binKnownFlags)
	}
	wb := binary.LittleEndian.Uint32(h[12:])
	if wb != 0 && wb != 4 && wb != 8 {
		return nil, offsetErr(file, 12, "expected weight bytes 0, 4 or 8, got %d", wb)
	}
	n := binary.LittleEndian.Uint64(h[16:])
	if p := vertexProblem(n, o.maxVertices(), o.HostReaders); p != "" {
		return nil, offsetErr(file, 16, "%s", p)
	}
	m := binary.LittleEndian.Uint64(h[24:])
	meta.DeclaredVertices, meta.DeclaredEdges = n, m
	el := &EdgeList{N: uint32(n), Directed: flags&binFlagUndir == 0}
	off := int64(binHeaderSize)
	var b [16]byte
	if flags&binFlagIDTable != 0 {
		el.IDs = make([]uint64, 0, min(n, 1<<20))
		for i := uint64(0); i < n; i++ {
			if _, err := io.ReadFull(br, b[:8]); err != nil {
				return nil, offsetErr(file, off, "truncated id table: expected %d ids, got %d", n, i)
			}
			id := binary.LittleEndian.Uint64(b[:8])
			if i > 0 && id <= el.IDs[i-1] {
				return nil, offsetErr(file, off, "id table must be strictly increasing: id %d after %d", id, el.IDs[i-1])
			}
			el.IDs = append(el.IDs, id)
			off += 8
		}
	}
	if flags&binFlagProps != 0 {
		n, err := readBinaryProps(br, file, off, meta)
		if err != nil {
			return nil, err
		}
		off += 8 + n
	}
	if wb > 0 {
		el.Weights = []float64{}
	}
	rec := int(8 + wb)
	if snk == nil {
		capHint := min(m, 1<<20)
		el.Src = make([]uint32, 0, capHint)
		el.Dst = make([]uint32, 0, capHint)
	}
	// The records are read a block at a time (one io.ReadFull per record
	// cost more than decoding it); those of a short block are decoded
	// before its truncation is reported, as if read one by one.
	blk := make([]byte, rec*int(min(m, binBlockRecords)))
	// A sink that takes many edges at once (a pass's batcher) gets each
	// block's in one call, not a call per edge.
	bulk, _ := snk.(edgesSink)
	var recs []edgeRec
	if bulk != nil {
		recs = make([]edgeRec, 0, min(m, binBlockRecords))
	}
	for k := uint64(0); k < m; {
		got, rerr := io.ReadFull(br, blk[:rec*int(min(m-k, binBlockRecords))])
		for i := 0; i+rec <= got; i += rec {
			b := blk[i : i+rec]
			s := binary.LittleEndian.Uint32(b[0:])
			d := binary.LittleEndian.Uint32(b[4:])
			if uint64(s) >= n || uint64(d) >= n {
				return nil, offsetErr(file, off, "edge record %d: vertex %d→%d out of range (N=%d)", k, s, d, n)
			}
			x := 1.0
			if wb > 0 {
				if wb == 4 {
					x = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[8:])))
				} else {
					x = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
				}
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, offsetErr(file, off+8, "edge record %d: weight is not a finite number", k)
				}
				if x < 0 && !o.AllowNegativeWeights {
					return nil, offsetErr(file, off+8, "edge record %d: negative weight %g (weights must be non-negative: the kernels' distances need them)", k, x)
				}
				if x == 0 {
					x = 0
				}
			}
			off += int64(rec)
			k++
			if bulk != nil {
				recs = append(recs, edgeRec{uint64(s), uint64(d), x})
				continue
			}
			if snk != nil {
				snk.edge(uint64(s), uint64(d), x)
				continue
			}
			el.Src = append(el.Src, s)
			el.Dst = append(el.Dst, d)
			if wb > 0 {
				el.Weights = append(el.Weights, x)
			}
		}
		if rerr != nil {
			return nil, offsetErr(file, off+int64(got%rec), "truncated edge record %d of %d (%d bytes each)", k, m, rec)
		}
		if len(recs) > 0 {
			bulk.edges(recs)
			recs = recs[:0]
		}
	}
	if _, err := br.ReadByte(); err == nil {
		return nil, offsetErr(file, off, "trailing bytes after the %d edge records", m)
	}
	meta.InputEdges = m
	return el, nil
}

// readBinaryProps reads the properties of a binary edge list at offset
// off into meta (Properties and the algorithm parameters) and returns
// their length.
func readBinaryProps(br io.Reader, file string, off int64, meta *Meta) (int64, error) {
	var b [8]byte
	if _, err := io.ReadFull(br, b[:]); err != nil {
		return 0, offsetErr(file, off, "truncated properties: expected their 8-byte length")
	}
	n := binary.LittleEndian.Uint64(b[:])
	if n > binMaxProps {
		return 0, offsetErr(file, off, "properties of %d bytes: more than %d", n, binMaxProps)
	}
	raw := make([]byte, n)
	if got, err := io.ReadFull(br, raw); err != nil {
		return 0, offsetErr(file, off+8+int64(got), "truncated properties: expected %d bytes, got %d", n, got)
	}
	meta.Properties = map[string]string{}
	at := map[string]int64{}
	pos := off + 8
	for line := range bytes.Lines(raw) {
		k, v, ok := strings.Cut(strings.TrimSuffix(string(line), "\n"), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return 0, offsetErr(file, pos, "properties: expected \"key = value\", got %q", trunc(string(line)))
		}
		meta.Properties[k], at[k] = v, pos
		pos += int64(len(line))
	}
	return int64(n), algoProperties(meta, func(k, format string, args ...any) error {
		return offsetErr(file, at[k], "property %s: "+format, append([]any{k}, args...)...)
	})
}
