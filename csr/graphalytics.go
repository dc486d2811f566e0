package csr

import (
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
func readGraphalytics(path string, o *Options, snk sink) (*EdgeList, *Meta, error) {
	f, err := openFile(path)
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

	parseU := func(k string) (uint64, bool, error) {
		v, ok := get(k)
		if !ok {
			return 0, false, nil
		}
		x, ok2 := parseUint([]byte(v))
		if !ok2 {
			return 0, false, lineErr(path, line(k), "property %s: expected a non-negative integer, got %q", prefix+k, v)
		}
		return x, true, nil
	}
	parseInt := func(k string) (int, bool, error) {
		x, ok, err := parseU(k)
		if err != nil || !ok {
			return 0, ok, err
		}
		if x > 1<<31-1 {
			return 0, false, lineErr(path, line(k), "property %s: value %d too large", prefix+k, x)
		}
		return int(x), true, nil
	}

	directed := true
	if v, ok := get("directed"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, nil, lineErr(path, line("directed"), "property %sdirected: expected true or false, got %q", prefix, v)
		}
		directed = b
	}
	if meta.DeclaredVertices, _, err = parseU("meta.vertices"); err != nil {
		return nil, nil, err
	}
	if meta.DeclaredEdges, _, err = parseU("meta.edges"); err != nil {
		return nil, nil, err
	}
	if meta.BFSSource, meta.HasBFSSource, err = parseU("bfs.source-vertex"); err != nil {
		return nil, nil, err
	}
	if meta.SSSPSource, meta.HasSSSPSource, err = parseU("sssp.source-vertex"); err != nil {
		return nil, nil, err
	}
	if meta.CDLPIterations, meta.HasCDLP, err = parseInt("cdlp.max-iterations"); err != nil {
		return nil, nil, err
	}
	var hasIt, hasD bool
	if meta.PRIterations, hasIt, err = parseInt("pr.num-iterations"); err != nil {
		return nil, nil, err
	}
	if v, ok := get("pr.damping-factor"); ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d >= 0 && d <= 1) {
			return nil, nil, lineErr(path, line("pr.damping-factor"), "property %spr.damping-factor: expected a number in [0,1], got %q", prefix, v)
		}
		meta.PRDamping, hasD = d, true
	}
	meta.HasPR = hasIt && hasD
	if v, ok := get("algorithms"); ok {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				meta.Algorithms = append(meta.Algorithms, a)
			}
		}
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
	vf, err := openFile(vfile)
	if err != nil {
		return nil, nil, err
	}
	ids, err := readVertexFile(vf, vfile)
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
	ef, err := openFile(efile)
	if err != nil {
		return nil, nil, err
	}
	defer ef.Close()
	want := 2 + len(propNames)
	lr := newLineReader(ef, efile)
	fs := make([][]byte, want)
	lookup := func(tok []byte, what string) (uint32, error) {
		x, ok := parseUint(tok)
		if !ok {
			return 0, lineErr(efile, lr.line, "expected a non-negative integer %s vertex id, got %s", what, quote(tok))
		}
		i, found := slices.BinarySearch(ids, x)
		if !found {
			return 0, lineErr(efile, lr.line, "%s vertex %d is not in the vertex file %s", what, x, filepath.Base(vfile))
		}
		return uint32(i), nil
	}
	var inputEdges uint64
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if isComment(line) {
			continue
		}
		if n := fields(line, fs); n != want {
			return nil, nil, lineErr(efile, lr.line, "expected %d fields (src dst%s), got %d", want, strings.Repeat(" prop", len(propNames)), n)
		}
		s, err := lookup(fs[0], "source")
		if err != nil {
			return nil, nil, err
		}
		d, err := lookup(fs[1], "destination")
		if err != nil {
			return nil, nil, err
		}
		x := 1.0
		if weightCol >= 0 {
			var msg string
			if x, msg = parseWeight(fs[weightCol], o.AllowNegativeWeights); msg != "" {
				return nil, nil, lineErr(efile, lr.line, "%s", msg)
			}
		}
		inputEdges++
		if snk != nil {
			snk.edge(uint64(s), uint64(d), x)
			continue
		}
		el.Src = append(el.Src, s)
		el.Dst = append(el.Dst, d)
		if weightCol >= 0 {
			el.Weights = append(el.Weights, x)
		}
	}
	if weightCol >= 0 && el.Weights == nil {
		el.Weights = []float64{}
	}
	meta.InputEdges = inputEdges
	return el, meta, nil
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

// readVertexFile reads one vertex id per line (extra columns are an error).
func readVertexFile(r io.Reader, file string) ([]uint64, error) {
	lr := newLineReader(r, file)
	var ids []uint64
	var f [1][]byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			return ids, nil
		}
		if err != nil {
			return nil, err
		}
		if isComment(line) {
			continue
		}
		if n := fields(line, f[:]); n != 1 {
			return nil, lineErr(file, lr.line, "expected 1 field (vertex id), got %d", n)
		}
		x, ok := parseUint(f[0])
		if !ok {
			return nil, lineErr(file, lr.line, "expected a non-negative integer vertex id, got %s", quote(f[0]))
		}
		ids = append(ids, x)
	}
}

// duplicateVertex is the error for an id a vertex file lists twice, with
// the line of its second listing (the file is read again to find it: the
// ids were sorted).
func duplicateVertex(file string, id uint64) error {
	first := int64(0)
	if f, err := openFile(file); err == nil {
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
