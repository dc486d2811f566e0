package csr

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/pkg/errors"
)

// lineReader yields the lines of a text input without their line ends
// (LF or CRLF), counting line numbers from 1.
type lineReader struct {
	r    *bufio.Reader
	file string
	line int64
	long []byte
}

func newLineReader(r io.Reader, file string) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<20), file: file}
}

// next returns the next line (valid until the following call) or io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull && len(lr.long) <= MaxLineBytes+2 {
			b, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	if len(b) > MaxLineBytes && len(bytes.TrimRight(b, "\r\n")) > MaxLineBytes {
		return nil, lineErr(lr.file, lr.line+1, "a line longer than %d bytes (the limit of one line of a text input); expected lines of a few fields, each ending in a line feed", MaxLineBytes)
	}
	if err != nil && err != io.EOF {
		if IsInputError(err) {
			return nil, err
		}
		return nil, errors.Wrapf(err, "csr: reading %s", lr.file)
	}
	if err == io.EOF && len(b) == 0 {
		return nil, io.EOF
	}
	lr.line++
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nil
}

// isSpace reports the field separators of the text formats.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// fields splits line on spaces and tabs into out and returns the number of
// fields, which may exceed len(out) (the extra fields are not stored).
func fields(line []byte, out [][]byte) int {
	n := 0
	i := 0
	for i < len(line) {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if n < len(out) {
			out[n] = line[i:j]
		}
		n++
		i = j
	}
	return n
}

// isComment reports blank lines and comment lines ('#' or '%' first).
func isComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\v\f")
	return len(t) == 0 || t[0] == '#' || t[0] == '%'
}

// parseUint parses a decimal uint64 (digits only).
func parseUint(tok []byte) (uint64, bool) {
	if len(tok) == 0 || len(tok) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range tok {
		d := uint64(c - '0')
		if d > 9 {
			return 0, false
		}
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// quote shortens a token for an error message.
func quote(tok []byte) string {
	if len(tok) > 40 {
		return strconv.Quote(string(tok[:40])) + "..."
	}
	return strconv.Quote(string(tok))
}

// parseWeight parses a finite float weight; negative ones only if allowed.
// On failure it returns a message for an InputError.
func parseWeight(tok []byte, allowNeg bool) (float64, string) {
	w, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
		return 0, "expected a finite number as edge weight, got " + quote(tok)
	}
	if w < 0 && !allowNeg {
		return 0, "negative edge weight " + quote(tok) + " (weights must be non-negative: the kernels' distances need them)"
	}
	if w == 0 {
		w = 0 // normalise -0
	}
	return w, ""
}

// edgeLines describes the edge lines of a text format ("src dst", then
// more fields) for the block parsers. Most lines take the fast path
// (fastEdge); any line it does not take is parsed by slow, the careful
// reader that also says what is wrong.
type edgeLines struct {
	fields int // fields per line
	wcol   int // the weight's field, or -1
	// post maps or checks the ids of a line fastEdge parsed; false
	// sends the line to slow. Nil keeps the ids.
	post func(s, d uint64) (uint64, uint64, bool)
	// slow parses one line (its line end removed): an edge, a comment
	// or blank line (edge false), or a message for an InputError. full
	// says the input may hold no more edges (Matrix Market's count).
	slow func(line []byte, full bool) (s, d uint64, w float64, edge bool, msg string)
	// slowOnly sends every line to slow (readConfig.careful).
	slowOnly bool
}

// edgeScratch are a block parser's buffers, reused from block to block.
type edgeScratch struct {
	s, d []uint64
	w    []float64
}

// parse puts the edges of a block's lines into sc and returns the line
// (counted from 1 in the block) and message of its first error, if any.
// From the limit-th edge on, every line goes to slow with full set.
func (el *edgeLines) parse(data []byte, sc *edgeScratch, limit uint64) (int64, string) {
	sc.s, sc.d, sc.w = sc.s[:0], sc.d[:0], sc.w[:0]
	weighted := el.wcol >= 0
	var line int64
	for i := 0; i < len(data); {
		line++
		var next int
		var s, d uint64
		var w float64
		ok := false
		if !el.slowOnly {
			next, s, d, w, ok = fastEdge(data, i, el.fields, el.wcol)
		}
		if ok && el.post != nil {
			s, d, ok = el.post(s, d)
		}
		if full := uint64(len(sc.s)) >= limit; !ok || full {
			next = lineEnd(data, i)
			var edge bool
			var msg string
			if s, d, w, edge, msg = el.slow(trimLineEnd(data[i:next]), full); msg != "" {
				return line, msg
			}
			if !edge {
				i = next
				continue
			}
		}
		sc.s = append(sc.s, s)
		sc.d = append(sc.d, d)
		if weighted {
			sc.w = append(sc.w, w)
		}
		i = next
	}
	return 0, ""
}

// lineEnd is the index after the line that starts at data[i:]: after its
// '\n', or len(data).
func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

// trimLineEnd removes a line's '\n' and then one '\r', as lineReader.
func trimLineEnd(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// isBlank reports the separators fastEdge takes between fields.
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// fastEdge parses the line at data[i:] if it is plain: blanks (spaces or
// tabs), two decimal ids of at most 19 digits, the other fields (fields
// in all) after blanks, the weight field (wcol, if ≥ 2) a plain decimal
// (fastFloat), then blanks or '\r' and '\n' or the end of data. It
// returns the index after the line, the ids and the weight (1 without
// wcol), or ok false for any other line (a comment, a blank line, a
// malformed or unusual one), which the caller parses the slow way: the
// lines fastEdge takes are parsed exactly as the slow way would.
func fastEdge(data []byte, i, fields, wcol int) (next int, s, d uint64, w float64, ok bool) {
	n := len(data)
	i = skipBlanks(data, i)
	j, s, good := fastUint(data, i)
	if !good {
		return
	}
	if i = skipBlanks(data, j); i == j {
		return
	}
	if j, d, good = fastUint(data, i); !good {
		return
	}
	w = 1
	for f := 2; f < fields; f++ {
		if i = skipBlanks(data, j); i == j {
			return
		}
		for j = i; j < n && data[j] > ' '; j++ {
		}
		if j == i {
			return
		}
		if f == wcol {
			if w, good = fastFloat(data[i:j]); !good {
				return
			}
		}
	}
	for i = j; i < n && (isBlank(data[i]) || data[i] == '\r'); i++ {
	}
	if i < n {
		if data[i] != '\n' {
			return
		}
		i++
	}
	return i, s, d, w, true
}

// skipBlanks is the index of the first byte at or after i that is not a
// blank.
func skipBlanks(data []byte, i int) int {
	for i < len(data) && isBlank(data[i]) {
		i++
	}
	return i
}

// fastUint parses the decimal digits at data[i:]: the index after them,
// their value, and ok when there are 1 to 19 of them (no overflow).
func fastUint(data []byte, i int) (j int, v uint64, ok bool) {
	for j = i; j < len(data); j++ {
		c := data[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + uint64(c)
	}
	return j, v, j > i && j-i <= 19
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// fastFloat parses a plain non-negative decimal, digits with at most one
// '.' between digits and 15 digits in all. Its value is m/10^k with m
// and 10^k exact float64s, so one division rounds it correctly, as
// strconv.ParseFloat does; ok is false for anything else.
func fastFloat(tok []byte) (float64, bool) {
	var m uint64
	dot := -1
	for k, c := range tok {
		if c == '.' && dot < 0 {
			dot = k
			continue
		}
		x := c - '0'
		if x > 9 {
			return 0, false
		}
		m = m*10 + uint64(x)
	}
	digits := len(tok)
	if dot >= 0 {
		digits--
		if dot == 0 || dot == len(tok)-1 {
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	if dot < 0 {
		return float64(m), true
	}
	return float64(m) / pow10[len(tok)-1-dot], true
}

// edgeListLines is the format of a SNAP-style edge list: '#' or '%'
// comment lines, then "src dst" (or "src dst weight" when weighted) per
// line, separated by spaces or tabs, LF or CRLF line ends.
func edgeListLines(weighted bool, o *Options, rc *readConfig) *edgeLines {
	want, what, wcol := 2, "src dst", -1
	if weighted {
		want, what, wcol = 3, "src dst weight", 2
	}
	allowNeg := o.AllowNegativeWeights
	return &edgeLines{fields: want, wcol: wcol, slowOnly: rc.slowOnly(), slow: func(line []byte, _ bool) (s, d uint64, w float64, edge bool, msg string) {
		if isComment(line) {
			return
		}
		var f [3][]byte
		if n := fields(line, f[:]); n != want {
			return 0, 0, 0, false, fmt.Sprintf("expected %d fields (%s), got %d", want, what, n)
		}
		var ok bool
		if s, ok = parseUint(f[0]); !ok {
			return 0, 0, 0, false, "expected a non-negative integer source vertex id, got " + quote(f[0])
		}
		if d, ok = parseUint(f[1]); !ok {
			return 0, 0, 0, false, "expected a non-negative integer destination vertex id, got " + quote(f[1])
		}
		w = 1
		if weighted {
			if w, msg = parseWeight(f[2], allowNeg); msg != "" {
				return 0, 0, 0, false, msg
			}
		}
		return s, d, w, true, ""
	}}
}

// parsedEdges is what a block parser of edge lines hands on: the block's
// edges with external ids (blk), or mapped to dense ids (recs), and its
// first error, its line counted in the block.
type parsedEdges struct {
	blk     *edgeBlock
	recs    []edgeRec
	errLine int64
	msg     string
}

// err is the block's error as an InputError of file, the block starting
// after line line0.
func (p *parsedEdges) err(file string, line0 int64) error {
	if p.msg == "" {
		return nil
	}
	return lineErr(file, line0+p.errLine, "%s", p.msg)
}

// Where a block parser of edge lines puts the edges.
const (
	keepBlocks  = iota // a new edgeBlock per block, external ids: the caller keeps them
	reuseBlocks        // an edgeBlock reused once the caller is done with it
	denseEdges         // edgeRecs (reused), ids mapped to dense ones
)

// edgeParser returns block parsers of the edge lines el, which put the
// edges of a block as mode says; denseEdges maps the ids by m (nil: the
// ids are dense already; an id m does not hold maps to m.n, past the last
// vertex).
func edgeParser(el *edgeLines, mode int, m *idMap) func() func([]byte, *parsedEdges) {
	return func() func([]byte, *parsedEdges) {
		var sc edgeScratch
		return func(data []byte, p *parsedEdges) {
			p.errLine, p.msg = el.parse(data, &sc, math.MaxUint64)
			switch mode {
			case denseEdges:
				p.recs = denseRecs(&sc, m, p.recs[:0])
			case reuseBlocks:
				if p.blk == nil {
					p.blk = &edgeBlock{}
				}
				sc.blockInto(p.blk, el.wcol >= 0)
			default:
				p.blk = &edgeBlock{}
				sc.blockInto(p.blk, el.wcol >= 0)
			}
		}
	}
}

// blockInto copies the scratch's edges into b (over what b held): 32-bit
// ids when they fit.
func (sc *edgeScratch) blockInto(b *edgeBlock, weighted bool) {
	var maxID uint64
	for i := range sc.s {
		maxID = max(maxID, sc.s[i], sc.d[i])
	}
	b.maxID = maxID
	b.s32, b.d32, b.s64, b.d64, b.w = b.s32[:0], b.d32[:0], b.s64[:0], b.d64[:0], b.w[:0]
	if maxID <= math.MaxUint32 {
		b.s32, b.d32 = slices.Grow(b.s32, len(sc.s))[:len(sc.s)], slices.Grow(b.d32, len(sc.d))[:len(sc.d)]
		for i := range sc.s {
			b.s32[i], b.d32[i] = uint32(sc.s[i]), uint32(sc.d[i])
		}
	} else {
		b.s64, b.d64 = append(b.s64, sc.s...), append(b.d64, sc.d...)
	}
	if weighted {
		b.w = append(b.w, sc.w...)
	}
}

// denseRecs maps the scratch's edges with m (nil: the ids are dense
// already) to edgeRecs, in recs' place; an id m does not hold maps to m.n.
func denseRecs(sc *edgeScratch, m *idMap, recs []edgeRec) []edgeRec {
	recs = slices.Grow(recs, len(sc.s))[:len(sc.s)]
	weighted := len(sc.w) == len(sc.s)
	for i := range recs {
		s, d := sc.s[i], sc.d[i]
		if m != nil && !m.identity {
			x, ok := m.dense(s)
			if !ok {
				x = m.n
			}
			y, ok := m.dense(d)
			if !ok {
				y = m.n
			}
			s, d = uint64(x), uint64(y)
		}
		w := 1.0
		if weighted {
			w = sc.w[i]
		}
		recs[i] = edgeRec{s, d, w}
	}
	return recs
}

// readEdgeText reads a SNAP-style edge list (edgeListLines) in parallel
// blocks and returns its edges in input order with external ids, and
// their number.
func readEdgeText(r io.Reader, file string, weighted bool, o *Options, rc *readConfig) ([]*edgeBlock, uint64, error) {
	var blocks []*edgeBlock
	var count uint64
	_, err := parseText(r, file, o.Workers, rc, edgeParser(edgeListLines(weighted, o, rc), keepBlocks, nil), func(p parsedEdges, line0 int64) error {
		blocks = append(blocks, p.blk)
		count += uint64(p.blk.len())
		return p.err(file, line0)
	})
	return blocks, count, err
}

// edgeMode is how the readers of formats with dense ids parse their
// blocks: edgeRecs for a sink, else edgeBlocks to keep.
func edgeMode(snk sink) int {
	if snk != nil {
		return denseEdges
	}
	return keepBlocks
}

// sendEdges hands parsed edges to a sink, whole when it takes them so.
func sendEdges(snk sink, recs []edgeRec) {
	if es, ok := snk.(edgesSink); ok {
		es.edges(recs)
		return
	}
	for _, e := range recs {
		snk.edge(e.s, e.d, e.w)
	}
}
