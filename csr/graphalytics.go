package csr

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// properties is a parsed Java-style properties file (key = value).
type properties struct {
	vals  map[string]string
	lines map[string]int64
}

func readProperties(r io.Reader, file string) (*properties, error) {
	p := &properties{vals: map[string]string{}, lines: map[string]int64{}}
	lr := newLineReader(r, file)
	for {
		line, err := lr.next()
		if err == io.EOF {
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		t := strings.TrimSpace(string(line))
		if t == "" || t[0] == '#' || t[0] == '!' {
			continue
		}
		i := strings.IndexAny(t, "=:")
		if i < 0 {
			return nil, lineErr(file, lr.line, "expected \"key = value\", got %q", t)
		}
		k, v := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:])
		p.vals[k] = v
		p.lines[k] = lr.line
	}
}

// readGraphalytics reads an LDBC Graphalytics dataset given its
// .properties file: the vertex file (one id per line) and the edge file
// ("src dst [props...]" per line, space separated; the weight column is the
// one sssp.weight-property names among edge-properties.names).
// With a sink, the edges go to it (dense ids) and the EdgeList has none.
func readGraphalytics(path string, o *Options, snk sink, rc *readConfig) (*EdgeList, *Meta, error) {
	rc.expect(path)
	f, err := openFile(path, rc)
	if err != nil {
		return nil, nil, err
	}
	props, err := readProperties(f, path)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".properties")
	meta := &Meta{Name: name, Path: path, Format: FormatGraphalytics, Properties: map[string]string{}}
	prefix := "graph." + name + "."
	for k, v := range props.vals {
		if after, ok := strings.CutPrefix(k, prefix); ok {
			meta.Properties[after] = v
		}
	}
	line := func(k string) int64 { return props.lines[prefix+k] }
	get := func(k string) (string, bool) { v, ok := meta.Properties[k]; return v, ok }
	bad := func(k, format string, args ...any) error {
		return lineErr(path, line(k), "property %s: "+format, append([]any{prefix + k}, args...)...)
	}

	directed := true
	if v, ok := get("directed"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, nil, lineErr(path, line("directed"), "property %sdirected: expected true or false, got %q", prefix, v)
		}
		directed = b
	}
	if meta.DeclaredVertices, _, err = propUint(meta, "meta.vertices", bad); err != nil {
		return nil, nil, err
	}
	if meta.DeclaredEdges, _, err = propUint(meta, "meta.edges", bad); err != nil {
		return nil, nil, err
	}
	if err := algoProperties(meta, bad); err != nil {
		return nil, nil, err
	}
	// Edge properties: the weight column.
	var propNames []string
	if v, ok := get("edge-properties.names"); ok {
		for _, a := range strings.Split(v, ",") {
			propNames = append(propNames, strings.TrimSpace(a))
		}
	}
	weightCol := -1
	wp, hasWP := get("sssp.weight-property")
	if !hasWP {
		wp = "weight"
	}
	if i := slices.Index(propNames, wp); i >= 0 {
		weightCol = 2 + i
	} else if hasWP {
		return nil, nil, lineErr(path, line("sssp.weight-property"), "weight property %q is not among edge-properties.names %q", wp, propNames)
	}

	dir := filepath.Dir(path)
	vfile := besides(dir, get, "vertex-file", name+".v")
	efile := besides(dir, get, "edge-file", name+".e")

	// Vertices.
	rc.expect(vfile, efile)
	vf, err := openFile(vfile, rc)
	if err != nil {
		return nil, nil, err
	}
	ids, err := readVertexFile(vf, vfile, o, rc)
	vf.Close()
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(ids)) > MaxVertices {
		return nil, nil, fileErr(vfile, "more than %d vertices; dense ids are 32-bit", uint64(MaxVertices))
	}
	parallelSort(ids, o.Workers)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return nil, nil, duplicateVertex(vfile, ids[i])
		}
	}
	el := &EdgeList{N: uint32(len(ids)), IDs: ids, Directed: directed}
	if len(ids) > 0 && ids[len(ids)-1] == uint64(len(ids)-1) {
		el.IDs = nil
	}

	// Edges.
	ef, err := openFile(efile, rc)
	if err != nil {
		return nil, nil, err
	}
	defer ef.Close()
	want := 2 + len(propNames)
	m := newIDMapSorted(ids)
	allowNeg := o.AllowNegativeWeights
	vbase := filepath.Base(vfile)
	lookup := func(tok []byte, what string) (uint64, string) {
		x, ok := parseUint(tok)
		if !ok {
			return 0, fmt.Sprintf("expected a non-negative integer %s vertex id, got %s", what, quote(tok))
		}
		i, found := m.dense(x)
		if !found {
			return 0, fmt.Sprintf("%s vertex %d is not in the vertex file %s", what, x, vbase)
		}
		return uint64(i), ""
	}
	lines := &edgeLines{fields: want, wcol: weightCol, slowOnly: rc.slowOnly(),
		post: func(s, d uint64) (uint64, uint64, bool) {
			x, ok1 := m.dense(s)
			y, ok2 := m.dense(d)
			return uint64(x), uint64(y), ok1 && ok2
		},
		slow: func(line []byte, _ bool) (s, d uint64, w float64, edge bool, msg string) {
			if isComment(line) {
				return
			}
			var buf [8][]byte
			fs := buf[:]
			if want > len(buf) {
				fs = make([][]byte, want)
			}
			if n := fields(line, fs); n != want {
				return 0, 0, 0, false, fmt.Sprintf("expected %d fields (src dst%s), got %d", want, strings.Repeat(" prop", len(propNames)), n)
			}
			if s, msg = lookup(fs[0], "source"); msg != "" {
				return
			}
			if d, msg = lookup(fs[1], "destination"); msg != "" {
				return
			}
			w = 1
			if weightCol >= 0 {
				if w, msg = parseWeight(fs[weightCol], allowNeg); msg != "" {
					return
				}
			}
			return s, d, w, true, ""
		}}
	var blocks []*edgeBlock
	var inputEdges uint64
	if _, err := parseText(ef, efile, o.Workers, rc, edgeParser(lines, edgeMode(snk), nil), func(p parsedEdges, line0 int64) error {
		if snk != nil {
			sendEdges(snk, p.recs)
			inputEdges += uint64(len(p.recs))
		} else {
			blocks = append(blocks, p.blk)
			inputEdges += uint64(p.blk.len())
		}
		return p.err(efile, line0)
	}); err != nil {
		return nil, nil, err
	}
	el.Src, el.Dst, el.Weights = concatBlocks(blocks, weightCol >= 0)
	if weightCol >= 0 && el.Weights == nil {
		el.Weights = []float64{}
	}
	meta.InputEdges = inputEdges
	return el, meta, nil
}

// concatBlocks joins blocks of dense edges in order (nil slices when
// they hold none), releasing each as it is copied.
func concatBlocks(blocks []*edgeBlock, weighted bool) (src, dst []uint32, w []float64) {
	total := 0
	for _, b := range blocks {
		total += b.len()
	}
	if total == 0 {
		return nil, nil, nil
	}
	src, dst = make([]uint32, 0, total), make([]uint32, 0, total)
	if weighted {
		w = make([]float64, 0, total)
	}
	for _, b := range blocks {
		src, dst = append(src, b.s32...), append(dst, b.d32...)
		if weighted {
			w = append(w, b.w...)
		}
		*b = edgeBlock{}
	}
	return src, dst, w
}

// propUint parses the property k of meta as a non-negative integer, if
// it is there; bad makes the error for a property.
func propUint(meta *Meta, k string, bad func(k, format string, args ...any) error) (uint64, bool, error) {
	v, ok := meta.Properties[k]
	if !ok {
		return 0, false, nil
	}
	x, ok := parseUint([]byte(v))
	if !ok {
		return 0, false, bad(k, "expected a non-negative integer, got %q", v)
	}
	return x, true, nil
}

// algoProperties sets the algorithm parameters of meta (sources,
// iterations, damping, the algorithms) from its Properties; bad makes the
// error for a property.
func algoProperties(meta *Meta, bad func(k, format string, args ...any) error) error {
	parseInt := func(k string) (int, bool, error) {
		x, ok, err := propUint(meta, k, bad)
		if err != nil || !ok {
			return 0, ok, err
		}
		if x > 1<<31-1 {
			return 0, false, bad(k, "value %d too large", x)
		}
		return int(x), true, nil
	}
	var err error
	if meta.BFSSource, meta.HasBFSSource, err = propUint(meta, "bfs.source-vertex", bad); err != nil {
		return err
	}
	if meta.SSSPSource, meta.HasSSSPSource, err = propUint(meta, "sssp.source-vertex", bad); err != nil {
		return err
	}
	if meta.CDLPIterations, meta.HasCDLP, err = parseInt("cdlp.max-iterations"); err != nil {
		return err
	}
	var hasIt, hasD bool
	if meta.PRIterations, hasIt, err = parseInt("pr.num-iterations"); err != nil {
		return err
	}
	if v, ok := meta.Properties["pr.damping-factor"]; ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d >= 0 && d <= 1) {
			return bad("pr.damping-factor", "expected a number in [0,1], got %q", v)
		}
		meta.PRDamping, hasD = d, true
	}
	meta.HasPR = hasIt && hasD
	if v, ok := meta.Properties["algorithms"]; ok {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				meta.Algorithms = append(meta.Algorithms, a)
			}
		}
	}
	return nil
}

// besides resolves a file named by a property relative to the properties
// file's directory, falling back to def; a ".gz" variant is accepted.
func besides(dir string, get func(string) (string, bool), key, def string) string {
	name := def
	if v, ok := get(key); ok && v != "" {
		name = v
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, name)
	}
	if _, err := os.Stat(p); err != nil {
		if _, err2 := os.Stat(p + ".gz"); err2 == nil {
			return p + ".gz"
		}
		// Graphalytics archives name files by dataset; try the default.
		if q := filepath.Join(dir, def); q != p {
			if _, err3 := os.Stat(q); err3 == nil {
				return q
			}
		}
	}
	return p
}

// readVertexFile reads one vertex id per line (extra columns are an
// error), in parallel blocks.
func readVertexFile(r io.Reader, file string, o *Options, rc *readConfig) ([]uint64, error) {
	type parsed struct {
		ids     []uint64
		errLine int64
		msg     string
	}
	careful := rc.slowOnly()
	newParser := func() func([]byte, *parsed) {
		var sc []uint64
		return func(data []byte, p *parsed) {
			sc, p.errLine, p.msg = parseVertexLines(data, sc[:0], careful)
			p.ids = slices.Clone(sc)
		}
	}
	var blocks [][]uint64
	total := 0
	if _, err := parseText(r, file, o.Workers, rc, newParser, func(p parsed, line0 int64) error {
		blocks = append(blocks, p.ids)
		total += len(p.ids)
		if p.msg != "" {
			return lineErr(file, line0+p.errLine, "%s", p.msg)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if total == 0 {
		return nil, nil
	}
	ids := make([]uint64, 0, total)
	for i, b := range blocks {
		ids = append(ids, b...)
		blocks[i] = nil
	}
	return ids, nil
}

// parseVertexLines appends the ids of a block of a vertex file to ids and
// returns them with the line (in the block) and message of its first
// error, if any. Careful parses every line the slow way.
func parseVertexLines(data []byte, ids []uint64, careful bool) ([]uint64, int64, string) {
	var line int64
	n := len(data)
	for i := 0; i < n; {
		line++
		// The fast path: blanks, at most 19 digits, blanks, the line end.
		j := i
		for j < n && isBlank(data[j]) {
			j++
		}
		k := j
		var x uint64
		for ; k < n; k++ {
			c := data[k] - '0'
			if c > 9 {
				break
			}
			x = x*10 + uint64(c)
		}
		ok := k > j && k-j <= 19
		for k < n && (isBlank(data[k]) || data[k] == '\r') {
			k++
		}
		if ok && !careful && (k == n || data[k] == '\n') {
			ids = append(ids, x)
			i = min(k+1, n)
			continue
		}
		next := lineEnd(data, i)
		l := trimLineEnd(data[i:next])
		i = next
		if isComment(l) {
			continue
		}
		var f [1][]byte
		if c := fields(l, f[:]); c != 1 {
			return ids, line, fmt.Sprintf("expected 1 field (vertex id), got %d", c)
		}
		x, ok = parseUint(f[0])
		if !ok {
			return ids, line, "expected a non-negative integer vertex id, got " + quote(f[0])
		}
		ids = append(ids, x)
	}
	return ids, 0, ""
}

// duplicateVertex is the error for an id a vertex file lists twice, with
// the line of its second listing (the file is read again to find it: the
// ids were sorted).
func duplicateVertex(file string, id uint64) error {
	first := int64(0)
	if f, err := openFile(file, nil); err == nil {
		defer f.Close()
		lr := newLineReader(f, file)
		var fs [1][]byte
		for {
			line, err := lr.next()
			if err != nil {
				break
			}
			if isComment(line) || fields(line, fs[:]) != 1 {
				continue
			}
			if x, ok := parseUint(fs[0]); ok && x == id {
				if first > 0 {
					return lineErr(file, lr.line, "vertex id %d listed more than once (first on line %d)", id, first)
				}
				first = lr.line
			}
		}
	}
	return fileErr(file, "vertex id %d listed more than once", id)
}
