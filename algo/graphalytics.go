// LDBC Graphalytics output files: writing a result vector as
// `<external-vertex-id> <value>` lines, reading expected and actual files, and
// validating one against the other with the benchmark's rules (LDBC
// Graphalytics benchmark specification v1.0, arXiv:2011.15028, "Output
// validation"; ../shared/data/README.md; DESIGN.md §9).

package algo

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/outfile"
)

// Kind is the algorithm an output belongs to; it decides how values are
// parsed and compared.
type Kind int

// The Graphalytics algorithms. String gives the suffix of the dataset's
// reference output file (`<dataset>-BFS`, `<dataset>-PR`, ...).
const (
	KindBFS Kind = iota + 1
	KindPR
	KindWCC
	KindSSSP
	KindCDLP
	KindLCC
	// KindTC is triangle counting (not a Graphalytics algorithm; GAPBS's
	// tc): a count per vertex, compared exactly.
	KindTC
	// KindBC is betweenness centrality (not a Graphalytics algorithm;
	// GAPBS's bc): a score per vertex, compared within the tolerance.
	KindBC
)

func (k Kind) String() string {
	switch k {
	case KindBFS:
		return "BFS"
	case KindPR:
		return "PR"
	case KindWCC:
		return "WCC"
	case KindSSSP:
		return "SSSP"
	case KindCDLP:
		return "CDLP"
	case KindLCC:
		return "LCC"
	case KindTC:
		return "TC"
	case KindBC:
		return "BC"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func (k Kind) valid() bool { return k >= KindBFS && k <= KindBC }

// isFloat reports whether the kind's values are floats (compared within a
// tolerance) rather than integers (compared exactly).
func (k Kind) isFloat() bool { return k == KindPR || k == KindSSSP || k == KindLCC || k == KindBC }

// isLabel reports whether the kind's values are vertex labels, which may be
// any 64-bit integer, signed or unsigned.
func (k Kind) isLabel() bool { return k == KindWCC || k == KindCDLP }

// ParseKind parses an algorithm name, case-insensitively: bfs, pr (or
// pagerank), wcc, sssp, cdlp, lcc, tc, bc.
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bfs":
		return KindBFS, nil
	case "pr", "pagerank":
		return KindPR, nil
	case "wcc":
		return KindWCC, nil
	case "sssp":
		return KindSSSP, nil
	case "cdlp":
		return KindCDLP, nil
	case "lcc":
		return KindLCC, nil
	case "tc":
		return KindTC, nil
	case "bc":
		return KindBC, nil
	}
	return 0, errors.Errorf("algo: unknown algorithm %q, want one of bfs, pr (pagerank), wcc, sssp, cdlp, lcc, tc, bc", s)
}

// ValidationTolerance is the Graphalytics relative tolerance for PR, LCC and
// SSSP: |expected - actual| <= 0.0001·|expected|.
const ValidationTolerance = 0.0001

// Output is one algorithm output: a value per vertex, keyed by external
// vertex id, in the order it was read or built.
type Output struct {
	// Kind is the algorithm the values belong to.
	Kind Kind
	// Source names where the output came from (a file name), for messages.
	Source string
	// IDs are the external vertex ids.
	IDs []uint64
	// Ints holds the values of BFS, CDLP and WCC (nil otherwise). Labels
	// above math.MaxInt64 (unsigned on input) are stored as their
	// two's-complement bit pattern; only equality matters for labels.
	Ints []int64
	// Floats holds the values of PR, LCC and SSSP (nil otherwise); +Inf is
	// the SSSP distance of an unreachable vertex.
	Floats []float64
	// Lines holds the 1-based line of each entry in Source, or is nil when
	// the output was not read from a file.
	Lines []int
}

// Len is the number of entries.
func (o *Output) Len() int { return len(o.IDs) }

// where locates entry i for messages: "file:7", or the source name when the
// output was not read from a file.
func (o *Output) where(i int) string {
	if o.Lines != nil && i < len(o.Lines) {
		return fmt.Sprintf("%s:%d", o.Source, o.Lines[i])
	}
	return o.Source
}

// value renders entry i for messages.
func (o *Output) value(i int) string {
	if o.Kind.isFloat() {
		return formatFloat(o.Floats[i])
	}
	if o.Kind.isLabel() && o.Ints[i] < 0 {
		return strconv.FormatUint(uint64(o.Ints[i]), 10)
	}
	return strconv.FormatInt(o.Ints[i], 10)
}

// check verifies that the slices of o agree with its kind.
func (o *Output) check(role string) error {
	if o == nil {
		return errors.Errorf("algo: %s output is nil", role)
	}
	if !o.Kind.valid() {
		return errors.Errorf("algo: %s output %s has invalid kind %v", role, o.Source, o.Kind)
	}
	n := len(o.IDs)
	vals := len(o.Ints)
	if o.Kind.isFloat() {
		vals = len(o.Floats)
	}
	if vals != n || (o.Lines != nil && len(o.Lines) != n) {
		return errors.Errorf("algo: %s output %s is inconsistent: %d ids, %d values, %d line numbers", role, o.Source, n, vals, len(o.Lines))
	}
	return nil
}

// Value is a result element type: int64 (BFS depths), uint64 (WCC and CDLP
// labels) or float64 (PageRank, LCC, SSSP).
type Value interface {
	int64 | uint64 | float64
}

// NewOutput makes an Output of the given kind from a result vector with one
// value per vertex of g, keyed by the external ids of g. Float kinds take
// float64 values (NaN and -Inf are rejected), BFS takes int64 or uint64 up
// to math.MaxInt64, and labels take int64 or uint64.
func NewOutput[T Value](kind Kind, g *csr.Graph, values []T) (*Output, error) {
	return newOutput(kind, g, values, false)
}

// newOutput is NewOutput; with owned, the Output takes values for its own
// rather than a copy (a result vector decoded for it alone: at a billion
// edges a copy is 512 MiB more on rank 0).
func newOutput[T Value](kind Kind, g *csr.Graph, values []T, owned bool) (*Output, error) {
	if err := checkResult(kind, g, len(values)); err != nil {
		return nil, err
	}
	o := &Output{Kind: kind, Source: kind.String() + " result", IDs: make([]uint64, g.N)}
	for v := range o.IDs {
		o.IDs[v] = g.ExternalID(uint32(v))
	}
	switch vs := any(values).(type) {
	case []float64:
		if !kind.isFloat() {
			return nil, errors.Errorf("algo: %v output needs integer values, got float64", kind)
		}
		for v, x := range vs {
			if err := checkFloat(x); err != nil {
				return nil, errors.Wrapf(err, "algo: %v vertex %d", kind, o.IDs[v])
			}
		}
		o.Floats = vs
		if !owned {
			o.Floats = append([]float64(nil), vs...)
		}
	case []int64:
		if kind.isFloat() {
			return nil, errors.Errorf("algo: %v output needs float64 values, got int64", kind)
		}
		o.Ints = vs
		if !owned {
			o.Ints = append([]int64(nil), vs...)
		}
	case []uint64:
		if kind.isFloat() {
			return nil, errors.Errorf("algo: %v output needs float64 values, got uint64", kind)
		}
		o.Ints = make([]int64, len(vs))
		for v, x := range vs {
			if !kind.isLabel() && x > math.MaxInt64 {
				return nil, errors.Errorf("algo: %v vertex %d has value %d, want at most %d", kind, o.IDs[v], x, int64(math.MaxInt64))
			}
			o.Ints[v] = int64(x)
		}
	}
	return o, nil
}

// checkShape checks that n values are one per vertex of g, and that g's
// external ids, where it holds them in a table, are as many.
func checkShape(g *csr.Graph, n int) error {
	if g == nil {
		return errors.New("graph is nil")
	}
	if uint64(n) != uint64(g.N) {
		return errors.Errorf("result has %d values, want one per vertex (%d)", n, g.N)
	}
	if g.IDs != nil && uint64(len(g.IDs)) != uint64(g.N) {
		return errors.Errorf("graph has %d external ids for %d vertices", len(g.IDs), g.N)
	}
	return nil
}

// checkResult is checkShape for a result of kind, its errors prefixed.
func checkResult(kind Kind, g *csr.Graph, n int) error {
	if !kind.valid() {
		return errors.Errorf("algo: invalid output kind %v", kind)
	}
	return errors.WithMessagef(checkShape(g, n), "algo: %v", kind)
}

// checkFloat rejects the float values no output may hold.
func checkFloat(x float64) error {
	if math.IsNaN(x) || math.IsInf(x, -1) {
		return errors.Errorf("value %v is not allowed (want a number or +infinity)", x)
	}
	return nil
}

// formatFloat writes a float as appendFloat does.
func formatFloat(x float64) string { return string(appendFloat(nil, x)) }

// appendFloat appends a float with 15 significant digits, +Inf as
// "infinity". The few values within rounding of math.MaxFloat64, whose
// 15-digit form would read back as out of range, are written in full.
func appendFloat(buf []byte, x float64) []byte {
	if math.IsInf(x, 1) {
		return append(buf, "infinity"...)
	}
	if math.Abs(x) > 1.79769313486231e308 {
		return strconv.AppendFloat(buf, x, 'e', -1, 64)
	}
	return strconv.AppendFloat(buf, x, 'e', 14, 64)
}

// appendValue appends x as an output value: integers in decimal, floats
// by appendFloat; NaN and -Inf are errors.
func appendValue[T Value](buf []byte, x T) ([]byte, error) {
	switch x := any(x).(type) {
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case uint64:
		return strconv.AppendUint(buf, x, 10), nil
	case float64:
		if err := checkFloat(x); err != nil {
			return buf, err
		}
		return appendFloat(buf, x), nil
	}
	return buf, nil
}

// FormatOutput writes values, one per vertex of g, to w in Graphalytics
// format: `<external-id> <value>` a line in dense-id order; integers in
// decimal, floats with 15 significant digits, +Inf as "infinity". NaN and
// -Inf are errors.
func FormatOutput[T Value](w io.Writer, g *csr.Graph, values []T) error {
	return errors.WithMessage(formatOutput(w, g, values), "algo")
}

// formatOutput is FormatOutput with errors not yet prefixed.
func formatOutput[T Value](w io.Writer, g *csr.Graph, values []T) error {
	if err := checkShape(g, len(values)); err != nil {
		return err
	}
	return writeLines(w, g, func(buf []byte, v int) ([]byte, error) { return appendValue(buf, values[v]) })
}

// writeLines writes the Graphalytics lines of a result, one per vertex of
// g (whose shape the caller checked) in dense-id order, to w: the
// vertex's external id, a space, and what value appends for it (v is the
// dense id). Every output file and FormatOutput are written by it.
func writeLines(w io.Writer, g *csr.Graph, value func(buf []byte, v int) ([]byte, error)) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	buf := make([]byte, 0, 64)
	for v := range int(g.N) {
		id := g.ExternalID(uint32(v))
		buf = strconv.AppendUint(buf[:0], id, 10)
		buf = append(buf, ' ')
		var err error
		if buf, err = value(buf, v); err != nil {
			return errors.WithMessagef(err, "vertex %d", id)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteOutput writes values in Graphalytics format (see FormatOutput) to
// path, through outfile.Write: a regular file is replaced by rename, a
// device or FIFO written through, "-" is standard output.
func WriteOutput[T Value](path string, g *csr.Graph, values []T) error {
	return writeFile(path, func(w io.Writer) error { return formatOutput(w, g, values) })
}

// writeFile writes to path what format writes, as WriteOutput does.
func writeFile(path string, format func(io.Writer) error) error {
	return outfile.Write(path, func(w io.Writer) error {
		return errors.WithMessagef(format(w), "algo: writing %s", path)
	})
}

// maxLineBytes bounds one line of an output file.
const maxLineBytes = 1 << 20

// ReadOutput reads a Graphalytics output file of the given kind (see
// ParseOutput).
func ReadOutput(path string, kind Kind) (*Output, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "algo: reading output")
	}
	defer f.Close()
	return ParseOutput(f, path, kind)
}

// ParseOutput reads `<vertex-id> <value>` lines (space or tab separated,
// blank lines skipped, CRLF accepted) from r; name is used in messages. Ids
// are unsigned 64-bit integers. BFS values are int64; WCC and CDLP labels
// are int64 or uint64; PR, LCC and SSSP values are float64, with "infinity"
// (any case) for +Inf, and NaN or -Inf rejected. A malformed line or a
// vertex listed twice is an error naming the file and line.
func ParseOutput(r io.Reader, name string, kind Kind) (*Output, error) {
	if !kind.valid() {
		return nil, errors.Errorf("algo: reading %s: invalid output kind %v", name, kind)
	}
	o := &Output{Kind: kind, Source: name, Lines: []int{}, IDs: []uint64{}}
	if kind.isFloat() {
		o.Floats = []float64{}
	} else {
		o.Ints = []int64{}
	}
	first := make(map[uint64]int)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, errors.Errorf("algo: %s:%d: want \"<vertex-id> <value>\", got %s", name, line, quoteShort(sc.Text()))
		}
		id, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return nil, errors.Errorf("algo: %s:%d: vertex id %s, want an unsigned 64-bit integer", name, line, quoteShort(fields[0]))
		}
		if prev, dup := first[id]; dup {
			return nil, errors.Errorf("algo: %s:%d: vertex %d listed again (first on line %d), want one line per vertex", name, line, id, prev)
		}
		first[id] = line
		switch {
		case kind.isFloat():
			x, err := strconv.ParseFloat(fields[1], 64)
			if err == nil {
				err = checkFloat(x)
			}
			if err != nil {
				return nil, errors.Errorf("algo: %s:%d: %v value %s for vertex %d, want a finite float64 or infinity", name, line, kind, quoteShort(fields[1]), id)
			}
			o.Floats = append(o.Floats, x)
		case kind.isLabel():
			x, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				u, uerr := strconv.ParseUint(fields[1], 10, 64)
				if uerr != nil {
					return nil, errors.Errorf("algo: %s:%d: %v label %s for vertex %d, want a 64-bit integer", name, line, kind, quoteShort(fields[1]), id)
				}
				x = int64(u)
			}
			o.Ints = append(o.Ints, x)
		default:
			x, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return nil, errors.Errorf("algo: %s:%d: %v value %s for vertex %d, want a signed 64-bit integer", name, line, kind, quoteShort(fields[1]), id)
			}
			o.Ints = append(o.Ints, x)
		}
		o.IDs = append(o.IDs, id)
		o.Lines = append(o.Lines, line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errors.Errorf("algo: %s:%d: line longer than %d bytes", name, line+1, maxLineBytes)
		}
		return nil, errors.Wrapf(err, "algo: reading %s after line %d", name, line)
	}
	return o, nil
}

// quoteShort quotes s for a message, cut to a readable length.
func quoteShort(s string) string {
	const max = 60
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// maxReported is how many offending vertices a validation error lists per
// category.
const maxReported = 5

// Validate checks actual against expected with the Graphalytics rules for
// kind: actual has exactly the vertex set of expected with one entry per
// vertex; BFS and CDLP values match exactly; PR, LCC and SSSP values satisfy
// |e - a| <= ValidationTolerance·|e|, with infinity matching only infinity;
// WCC labels describe the same partition of the vertices (label values
// themselves may differ). The error gives the counts of missing, unexpected
// and wrong vertices and names the first few of each.
func Validate(kind Kind, expected, actual *Output) error {
	if !kind.valid() {
		return errors.Errorf("algo: validate: invalid kind %v", kind)
	}
	if err := expected.check("expected"); err != nil {
		return err
	}
	if err := actual.check("actual"); err != nil {
		return err
	}
	if expected.Kind != kind || actual.Kind != kind {
		return errors.Errorf("algo: validating %v, but expected output %s is %v and actual output %s is %v",
			kind, expected.Source, expected.Kind, actual.Source, actual.Kind)
	}
	var problems []string
	report := func(what string, count int, first []string) {
		if count == 0 {
			return
		}
		s := fmt.Sprintf("%d %s (%s", count, what, strings.Join(first, "; "))
		if count > len(first) {
			s += "; ..."
		}
		problems = append(problems, s+")")
	}
	note := func(list *[]string, format string, args ...any) {
		if len(*list) < maxReported {
			*list = append(*list, fmt.Sprintf(format, args...))
		}
	}

	index := func(o *Output) (map[uint64]int, int, []string) {
		m := make(map[uint64]int, o.Len())
		dups, first := 0, []string(nil)
		for i, id := range o.IDs {
			if j, ok := m[id]; ok {
				dups++
				note(&first, "vertex %d at %s and %s", id, o.where(j), o.where(i))
				continue
			}
			m[id] = i
		}
		return m, dups, first
	}
	expIdx, n, first := index(expected)
	report("duplicate vertices in expected output "+expected.Source, n, first)
	actIdx, n, first := index(actual)
	report("duplicate vertices in actual output "+actual.Source, n, first)

	missing, firstMissing := 0, []string(nil)
	for i, id := range expected.IDs {
		if _, ok := actIdx[id]; !ok && expIdx[id] == i {
			missing++
			note(&firstMissing, "vertex %d", id)
		}
	}
	report("vertices missing from "+actual.Source, missing, firstMissing)
	extra, firstExtra := 0, []string(nil)
	for i, id := range actual.IDs {
		if _, ok := expIdx[id]; !ok && actIdx[id] == i {
			extra++
			note(&firstExtra, "vertex %d at %s", id, actual.where(i))
		}
	}
	report("unexpected vertices in "+actual.Source, extra, firstExtra)

	wrong, firstWrong := 0, []string(nil)
	// For WCC: the actual label each expected label maps to and back, with
	// the expected index that established the mapping.
	expToAct := make(map[int64]int)
	actToExp := make(map[int64]int)
	for i, id := range expected.IDs {
		if expIdx[id] != i {
			continue
		}
		j, ok := actIdx[id]
		if !ok {
			continue
		}
		switch {
		case kind == KindWCC:
			e, a := expected.Ints[i], actual.Ints[j]
			if k, ok := expToAct[e]; ok && actual.Ints[actIdx[expected.IDs[k]]] != a {
				wrong++
				note(&firstWrong, "vertex %d (%s) has label %s but vertex %d, in the same expected component, has label %s",
					id, actual.where(j), actual.value(j), expected.IDs[k], actual.value(actIdx[expected.IDs[k]]))
				continue
			}
			if k, ok := actToExp[a]; ok && expected.Ints[k] != e {
				wrong++
				note(&firstWrong, "vertex %d (%s) has label %s like vertex %d, but they are in different expected components (%s and %s)",
					id, actual.where(j), actual.value(j), expected.IDs[k], expected.value(i), expected.value(k))
				continue
			}
			if _, ok := expToAct[e]; !ok {
				expToAct[e] = i
			}
			if _, ok := actToExp[a]; !ok {
				actToExp[a] = i
			}
		case kind.isFloat():
			e, a := expected.Floats[i], actual.Floats[j]
			if !floatMatch(e, a) {
				wrong++
				note(&firstWrong, "vertex %d expected %s got %s (%s)", id, expected.value(i), actual.value(j), actual.where(j))
			}
		default:
			if expected.Ints[i] != actual.Ints[j] {
				wrong++
				note(&firstWrong, "vertex %d expected %s got %s (%s)", id, expected.value(i), actual.value(j), actual.where(j))
			}
		}
	}
	if kind == KindWCC {
		report("vertices whose label breaks the expected partition", wrong, firstWrong)
	} else {
		report("vertices with wrong values", wrong, firstWrong)
	}
	if len(problems) > 0 {
		return errors.Errorf("algo: %v output %s does not match %s (%d vertices expected, %d given): %s",
			kind, actual.Source, expected.Source, len(expIdx), actual.Len(), strings.Join(problems, "; "))
	}
	return nil
}

// floatMatch is the Graphalytics epsilon rule: infinity equals only
// infinity, otherwise |e - a| <= 0.0001·|e|. NaN never matches.
func floatMatch(e, a float64) bool {
	if math.IsInf(e, 0) || math.IsInf(a, 0) {
		return e == a
	}
	return math.Abs(e-a) <= ValidationTolerance*math.Abs(e)
}

// TempPattern is outfile.TempPattern, the pattern of the temporary an
// output named base is written to before its rename.
func TempPattern(base string) string { return outfile.TempPattern(base) }
