package csr

import (
	"bufio"
	"bytes"
	"io"
	"math"
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
		for err == bufio.ErrBufferFull {
			b, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
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

// readEdgeText reads a SNAP-style edge list: '#' or '%' comment lines,
// then "src dst" (or "src dst weight" when weighted) per line, separated by
// spaces or tabs, LF or CRLF line ends.
// With a sink, the edges go to it (external ids) instead of the slices.
func readEdgeText(r io.Reader, file string, weighted bool, o *Options, snk sink) (src, dst []uint64, w []float64, err error) {
	lr := newLineReader(r, file)
	want := 2
	what := "src dst"
	if weighted {
		want, what = 3, "src dst weight"
	}
	var f [3][]byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if isComment(line) {
			continue
		}
		if n := fields(line, f[:]); n != want {
			return nil, nil, nil, lineErr(file, lr.line, "expected %d fields (%s), got %d", want, what, n)
		}
		s, ok := parseUint(f[0])
		if !ok {
			return nil, nil, nil, lineErr(file, lr.line, "expected a non-negative integer source vertex id, got %s", quote(f[0]))
		}
		d, ok := parseUint(f[1])
		if !ok {
			return nil, nil, nil, lineErr(file, lr.line, "expected a non-negative integer destination vertex id, got %s", quote(f[1]))
		}
		x := 1.0
		if weighted {
			var msg string
			if x, msg = parseWeight(f[2], o.AllowNegativeWeights); msg != "" {
				return nil, nil, nil, lineErr(file, lr.line, "%s", msg)
			}
		}
		if snk != nil {
			snk.edge(s, d, x)
			continue
		}
		src = append(src, s)
		dst = append(dst, d)
		if weighted {
			w = append(w, x)
		}
	}
	return src, dst, w, nil
}
