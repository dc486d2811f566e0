package csr

import (
	"encoding/binary"
	"math"

	"github.com/pkg/errors"
)

// spill is where a CN keeps its range's edges in a staged read when they
// outgrow its budget for kept ones (Options.KeepBytes): in the staging
// memory, as records of two 8-byte ids (external until mapped, a slice
// at a time, in place) and, for a weighted input, an 8-byte weight. The
// CN parses its range a second time to write them; every later pass
// (ids, mapping, degrees, routing) reads them from there instead of
// parsing the text again, which would need the whole id map.
type spill struct {
	mem      Staging
	off      uint64 // the first record's byte
	n        uint64 // records
	weighted bool
}

func (sp *spill) rec() uint64 {
	if sp.weighted {
		return 24
	}
	return 16
}

// chunk is how many records a spill moves per Read or Write.
func (sp *spill) chunk() uint64 { return max(1, stageIO/sp.rec()) }

// write parses the range again and writes its edges, a chunk at a
// time from a goroutine of its own while the parse fills the next.
func (sp *spill) write(in *stagedInput) error {
	rec := sp.rec()
	free, full := make(chan []byte, 2), make(chan []byte)
	free <- make([]byte, 0, sp.chunk()*rec)
	free <- make([]byte, 0, sp.chunk()*rec)
	werr := make(chan error, 1)
	go func() {
		off := sp.off
		var err error
		for b := range full {
			if err == nil {
				err = sp.mem.Write(off, b)
			}
			off += uint64(len(b))
			free <- b[:0]
		}
		werr <- err
	}()
	buf, n := <-free, uint64(0)
	put := func(s, d uint64, w []float64, i int) {
		buf = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(buf, s), d)
		if sp.weighted {
			x := 1.0
			if w != nil {
				x = w[i]
			}
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
		if n++; len(buf) == cap(buf) {
			full <- buf
			buf = <-free
		}
	}
	_, perr := in.parse(func(p *parsedEdges) {
		b := p.blk
		for i := range b.s32 {
			put(uint64(b.s32[i]), uint64(b.d32[i]), b.w, i)
		}
		for i := range b.s64 {
			put(b.s64[i], b.d64[i], b.w, i)
		}
	})
	if len(buf) > 0 {
		full <- buf
	}
	close(full)
	err := <-werr
	switch {
	case perr != nil:
		return perr
	case err != nil:
		return err
	case n != sp.n:
		return errors.Errorf("csr: %s changed while it was read (%d edges in a range, then %d)", in.path, sp.n, n)
	}
	return nil
}

// each reads the records chunk by chunk, one chunk ahead of f, and
// hands f each (f may change it: with put, it is written back).
func (sp *spill) each(put bool, f func(b []byte)) error {
	return readAhead(sp.mem, [][2]uint64{{sp.off, sp.n * sp.rec()}}, sp.chunk()*sp.rec(), nil, func(b []byte, at uint64) error {
		f(b)
		if put {
			return sp.mem.Write(at, b)
		}
		return nil
	})
}

// endpoints hands f the records' ids, a chunk's sources then its
// destinations.
func (sp *spill) endpoints(f func(a32 []uint32, a64 []uint64)) error {
	var src, dst []uint64
	rec := sp.rec()
	return sp.each(false, func(b []byte) {
		src, dst = src[:0], dst[:0]
		for ; len(b) > 0; b = b[rec:] {
			src = append(src, binary.LittleEndian.Uint64(b))
			dst = append(dst, binary.LittleEndian.Uint64(b[8:]))
		}
		f(nil, src)
		f(nil, dst)
	})
}

// mapPiece maps the records' ids that fall in pc's slice, in place.
func (sp *spill) mapPiece(pc *idPiece) error {
	rec := sp.rec()
	return sp.each(true, func(b []byte) {
		for ; len(b) > 0; b = b[rec:] {
			for _, at := range [2]int{0, 8} {
				if x := binary.LittleEndian.Uint64(b[at:]); pc.has(x) {
					d, _ := pc.dense(x)
					binary.LittleEndian.PutUint64(b[at:], uint64(d))
				}
			}
		}
	})
}

// send hands snk the records, mapped, in input order.
func (sp *spill) send(snk sink) error {
	rec := sp.rec()
	recs := make([]edgeRec, 0, batchEdges)
	err := sp.each(false, func(b []byte) {
		for ; len(b) > 0; b = b[rec:] {
			e := edgeRec{s: binary.LittleEndian.Uint64(b), d: binary.LittleEndian.Uint64(b[8:]), w: 1}
			if sp.weighted {
				e.w = math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
			}
			if recs = append(recs, e); len(recs) == cap(recs) {
				sendEdges(snk, recs)
				recs = recs[:0]
			}
		}
	})
	if len(recs) > 0 {
		sendEdges(snk, recs)
	}
	return err
}
