package csr

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"
)

// Open reads or generates the graph named by spec and builds it.
//
// spec is either a generator spec ("kron:SCALE[:EDGEFACTOR]",
// "uniform:N:M"; see Generate) or a path. The format of a path comes from
// its name, after removing a ".gz" (the file is then gunzipped on the fly):
//
//	X.properties     LDBC Graphalytics: X.v and X.e beside it (or the files
//	                 the properties name); X.v or X.e are accepted too
//	X.mtx            Matrix Market coordinate (pattern/real/integer,
//	                 general/symmetric, 1-based)
//	X.el             edge list "src dst"
//	X.wel            weighted edge list "src dst weight"
//	X.bel            DMG binary edge list (see WriteBinary)
//	anything else    SNAP text edge list ("src dst", '#' comments)
//
// Options.Format overrides the choice. A directory holding X.properties for
// X = the directory's name is opened as that Graphalytics dataset.
func Open(spec string, opts Options) (*Graph, *Meta, error) {
	return open(spec, opts, nil)
}

// open is Open with a read configuration: a progress counter
// (OpenProgress), or where tests cut the blocks of text inputs.
func open(spec string, opts Options, rc *readConfig) (*Graph, *Meta, error) {
	o := opts
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	o.EnsureDefaults()
	if IsGeneratorSpec(spec) {
		return generate(spec, &o)
	}
	path, format, err := resolve(spec, &o)
	if err != nil {
		return nil, nil, err
	}
	if format == FormatGraphalytics {
		el, meta, err := readGraphalytics(path, &o, nil, rc)
		if err != nil {
			return nil, nil, err
		}
		return finish(el, meta, &o)
	}
	rc.expect(path)
	f, err := openFile(path, rc)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return read(f, path, format, &o, rc)
}

// resolve finds the file and format of a path spec: a directory holding
// X.properties for X = its name is that Graphalytics dataset, and X.v or
// X.e stand for X.properties.
func resolve(spec string, o *Options) (path, format string, err error) {
	path = spec
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		p := filepath.Join(path, filepath.Base(filepath.Clean(path))+".properties")
		if _, err := os.Stat(p); err != nil {
			return "", "", fileErr(path, "a directory, without %s (a graph is a file, or a Graphalytics dataset's directory)", filepath.Base(p))
		}
		path = p
	}
	if err := regularInput(path); err != nil {
		return "", "", err
	}
	format = o.Format
	if format == "" {
		format = FormatOf(path)
	}
	if format == FormatGraphalytics {
		base := strings.TrimSuffix(path, ".gz")
		if ext := filepath.Ext(base); ext == ".v" || ext == ".e" {
			path = strings.TrimSuffix(base, ext) + ".properties"
		}
	}
	return path, format, nil
}

// Read reads a single-file input (every format but Graphalytics, which
// spans several files) from r; name is used for the format (unless
// Options.Format is set) and in error messages. r must not be gzipped.
func Read(r io.Reader, name string, opts Options) (*Graph, *Meta, error) {
	o := opts
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	o.EnsureDefaults()
	format := o.Format
	if format == "" {
		format = FormatOf(name)
	}
	if format == FormatGraphalytics {
		return nil, nil, errors.Errorf("csr: %s: Graphalytics datasets span several files; use Open", name)
	}
	return read(r, name, format, &o, nil)
}

func read(r io.Reader, path, format string, o *Options, rc *readConfig) (*Graph, *Meta, error) {
	meta := &Meta{Name: datasetName(path), Path: path, Format: format}
	var el *EdgeList
	var err error
	switch format {
	case FormatSNAP, FormatEL, FormatWEL:
		weighted := format == FormatWEL
		blocks, count, err := readEdgeText(r, path, weighted, o, rc)
		if err != nil {
			return nil, nil, err
		}
		el = &EdgeList{Directed: true}
		el.N, el.IDs, el.Src, el.Dst, el.Weights, err = denseBlocks(path, blocks, weighted, o.Workers)
		if err != nil {
			return nil, nil, err
		}
		if weighted && el.Weights == nil {
			el.Weights = []float64{}
		}
		meta.InputEdges = count
	case FormatMTX:
		el, err = readMTX(r, path, o, meta, nil, rc)
	case FormatBinary:
		el, err = readBinary(r, path, o, meta, nil)
	default:
		return nil, nil, errors.Errorf("csr: %s: format %q cannot be read from a stream", path, format)
	}
	if err != nil {
		return nil, nil, err
	}
	return finish(el, meta, o)
}

func finish(el *EdgeList, meta *Meta, o *Options) (*Graph, *Meta, error) {
	g, st, err := build(el, o)
	if err != nil {
		return nil, nil, err
	}
	meta.Directed = g.Directed
	meta.Weighted = g.Weights != nil
	meta.DroppedSelfLoops = st.selfLoops
	meta.DroppedDuplicates = st.duplicates
	return g, meta, nil
}

// FormatOf returns the input format implied by a file name.
func FormatOf(path string) string {
	base := strings.ToLower(strings.TrimSuffix(path, ".gz"))
	switch filepath.Ext(base) {
	case ".properties", ".v", ".e":
		return FormatGraphalytics
	case ".mtx":
		return FormatMTX
	case ".el":
		return FormatEL
	case ".wel":
		return FormatWEL
	case ".bel":
		return FormatBinary
	}
	return FormatSNAP
}

type readCloser struct {
	io.Reader
	closers []io.Closer
}

func (r *readCloser) Close() error {
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// openFile opens path, gunzipping when the name ends in ".gz" or the content
// starts with the gzip magic. With rc's progress counter, it counts the
// bytes read from the file (before decompression).
func openFile(path string, rc *readConfig) (io.ReadCloser, error) {
	if err := regularInput(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "csr")
	}
	var fr io.Reader = f
	if rc != nil && rc.progress != nil {
		fr = &countingReader{r: f, p: rc.progress}
	}
	br := bufio.NewReaderSize(fr, 1<<16)
	magic, _ := br.Peek(2)
	if strings.HasSuffix(path, ".gz") || (len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, errors.WithStack(&InputError{File: path, Offset: -1, Msg: "not a valid gzip file: " + err.Error()})
		}
		return &readCloser{Reader: gzErrReader{zr, path}, closers: []io.Closer{zr, f}}, nil
	}
	return &readCloser{Reader: br, closers: []io.Closer{f}}, nil
}

// gzErrReader turns decompression failures into InputErrors.
type gzErrReader struct {
	r    io.Reader
	file string
}

func (g gzErrReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = errors.WithStack(&InputError{File: g.file, Offset: -1, Msg: "corrupt gzip data: " + err.Error()})
	}
	return n, err
}

// regularInput refuses an input that is not a regular file (after
// following links), before opening it: opening a FIFO would wait for a
// writer, and a reader reads its input more than once, or in byte ranges
// on several ranks, which a FIFO, a pipe or a character device cannot
// give. A missing path is left to the open that follows.
func regularInput(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return nil
	}
	what := "special file"
	switch m := st.Mode(); {
	case m&os.ModeNamedPipe != 0:
		what = "FIFO"
	case m&os.ModeCharDevice != 0:
		what = "character device"
	case m&os.ModeDevice != 0:
		what = "block device"
	case m&os.ModeSocket != 0:
		what = "socket"
	}
	return fileErr(path, "a %s, not a regular file; expected a graph file (an input is read more than once, or in ranges by several ranks, which a stream cannot give: save it to a file first)", what)
}
