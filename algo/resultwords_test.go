package algo

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

// kernelWords makes a true result of each registered kernel on g, as the
// engine leaves it: one value word per vertex (WCC and CDLP labels are
// dense ids). A kernel missing here fails TestResultWords.
var kernelWords = map[string]func(g *csr.Graph) []uint64{
	"pagerank": func(g *csr.Graph) []uint64 { return floatWords(ReferencePageRank(g, 10, 0.85)) },
	"bfs": func(g *csr.Graph) []uint64 {
		d := ReferenceBFS(g, 0)
		w := make([]uint64, len(d))
		for i, x := range d {
			w[i] = uint64(x)
		}
		return w
	},
	"wcc": func(g *csr.Graph) []uint64 {
		dense := denseIndex(g)
		w := ReferenceWCC(g)
		for i, ext := range w {
			w[i] = uint64(dense[ext])
		}
		return w
	},
	"sssp": func(g *csr.Graph) []uint64 { return floatWords(ReferenceSSSP(g, 0)) },
	"cdlp": func(g *csr.Graph) []uint64 { return ReferenceCDLP(g, 5) },
	"lcc":  func(g *csr.Graph) []uint64 { return floatWords(ReferenceLCC(g)) },
	"tc":   ReferenceTC,
	"bc":   func(g *csr.Graph) []uint64 { return floatWords(ReferenceBC(g, []uint32{0})) },
}

func floatWords(f []float64) []uint64 {
	w := make([]uint64, len(f))
	for i, x := range f {
		w[i] = math.Float64bits(x)
	}
	return w
}

// decodedBefore is what a kernel's output and file were made of before
// they read the words in place: the words decoded into a slice of values
// (labels as the external ids of their vertices, unsigned), the Output
// NewOutput makes of it and the bytes FormatOutput writes of it.
func decodedBefore(t *testing.T, kind Kind, g *csr.Graph, words []uint64) (*Output, string) {
	t.Helper()
	var b bytes.Buffer
	var o *Output
	var oerr, ferr error
	switch {
	case kind.isFloat():
		v := Floats(words)
		o, oerr = NewOutput(kind, g, v)
		ferr = FormatOutput(&b, g, v)
	case kind.isLabel():
		v := make([]uint64, len(words))
		for i, l := range words {
			v[i] = g.ExternalID(uint32(l))
		}
		o, oerr = NewOutput(kind, g, v)
		ferr = FormatOutput(&b, g, v)
	default:
		v := Ints(words)
		o, oerr = NewOutput(kind, g, v)
		ferr = FormatOutput(&b, g, v)
	}
	if oerr != nil || ferr != nil {
		t.Fatalf("decoded %v result: NewOutput %v, FormatOutput %v", kind, oerr, ferr)
	}
	return o, b.String()
}

// wordsCase is one result as value words, read every way a result is
// read: SummarizeResult, Output and WriteResult.
type wordsCase struct {
	name  string
	algo  string
	g     *csr.Graph
	words []uint64
	// text and file, when set, are the summary's text and the file's
	// bytes; err, when set, is what every reader must fail with.
	text, file, err string
}

// check reads c every way and compares with the decoded values' Output,
// its summary and FormatOutput's bytes; or, for a bad result, checks
// that every way fails alike and WriteResult leaves no file.
func (c wordsCase) check(t *testing.T) {
	a, err := Lookup(c.algo)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out")
	sum, serr := a.SummarizeResult(c.g, c.words)
	out, oerr := a.Output(c.g, c.words)
	werr := a.WriteResult(path, c.g, c.words)
	if c.err != "" {
		for what, err := range map[string]error{"SummarizeResult": serr, "Output": oerr, "WriteResult": werr} {
			if !strings.HasPrefix(errString(err), "algo: ") || !contains(err, c.err) {
				t.Errorf("%s: error %v, want an algo error with %q", what, err, c.err)
			}
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("WriteResult of a bad result left %s (%v)", path, err)
		}
		return
	}
	if serr != nil || oerr != nil || werr != nil {
		t.Fatalf("SummarizeResult %v, Output %v, WriteResult %v", serr, oerr, werr)
	}
	want, wantFile := decodedBefore(t, a.Kind, c.g, c.words)
	if ws := Summarize(want); !reflect.DeepEqual(sum, ws) {
		t.Errorf("SummarizeResult %+v,\nSummarize of the decoded values %+v", sum, ws)
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("Output %+v,\nNewOutput of the decoded values %+v", out, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != wantFile {
		t.Errorf("WriteResult wrote %q,\nFormatOutput of the decoded values %q", b, wantFile)
	}
	if c.text != "" && sum.Text != c.text {
		t.Errorf("summary %q, want %q", sum.Text, c.text)
	}
	if c.file != "" && string(b) != c.file {
		t.Errorf("file %q, want %q", b, c.file)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestResultWords(t *testing.T) {
	// A triangle with a tail, {0,1,2,3}; an edge {4,5}; 6 isolated, so
	// BFS and SSSP from 0 leave vertices unreached.
	edges := []edge{{0, 1, 1}, {1, 2, 2}, {0, 2, 4}, {2, 3, 0.5}, {4, 5, 1}}
	read, _, err := csr.Read(strings.NewReader("10 30 1\n30 70 2\n10 70 1\n900 1000 1\n"), "g.wel", csr.Options{Undirected: true, Weighted: true})
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]*csr.Graph{
		"identity ids": makeGraph(t, 7, nil, false, true, edges),
		"external ids": makeGraph(t, 7, []uint64{40, 10, 1 << 40, 30, math.MaxUint64, 20, 7}, false, true, edges),
		"directed":     makeGraph(t, 7, []uint64{5, 6, 7, 8, 9, 10, 11}, true, true, edges),
		"read":         read,
	}
	var cases []wordsCase
	for gname, g := range graphs {
		for _, a := range Algorithms() {
			gen := kernelWords[a.Name]
			if gen == nil {
				t.Fatalf("kernelWords has no %s: every registered kernel needs one", a.Name)
			}
			words := gen(g)
			if words == nil {
				t.Fatalf("%s: no reference result on %s", a.Name, gname)
			}
			cases = append(cases, wordsCase{name: a.Name + " on " + gname, algo: a.Name, g: g, words: words})
		}
	}
	g3 := makeGraph(t, 3, []uint64{7, 1 << 40, math.MaxUint64}, false, false, nil)
	inf, nan := math.Float64bits(math.Inf(1)), math.Float64bits(math.NaN())
	cases = append(cases, []wordsCase{
		{name: "sssp +Inf", algo: "sssp", g: g3, words: floatWords([]float64{0, 2.5, math.Inf(1)}),
			text: "2 of 3 vertices reached, distance at most 2.5",
			file: "7 0.00000000000000e+00\n1099511627776 2.50000000000000e+00\n18446744073709551615 infinity\n"},
		{name: "bfs unreachable", algo: "bfs", g: g3, words: []uint64{0, Unreachable, 1},
			text: "2 of 3 vertices reached, depth at most 1",
			file: "7 0\n1099511627776 9223372036854775807\n18446744073709551615 1\n"},
		{name: "wcc labels are external ids", algo: "wcc", g: g3, words: []uint64{2, 1, 2},
			text: "2 components, the largest of 2 of 3 vertices",
			file: "7 18446744073709551615\n1099511627776 1099511627776\n18446744073709551615 18446744073709551615\n"},
		{name: "cdlp", algo: "cdlp", g: g3, words: []uint64{0, 0, 0}, text: "1 communities, the largest of 3 of 3 vertices"},
		{name: "pagerank ties first seen first", algo: "pagerank", g: makeGraph(t, 7, nil, true, false, nil),
			words: floatWords([]float64{0.1, 0.3, 0.05, 0.3, 0.2, 0.01, 0.04}),
			text:  "top vertices: 1 (0.3), 3 (0.3), 4 (0.2), 0 (0.1), 2 (0.05)"},
		{name: "tc", algo: "tc", g: g3, words: []uint64{1, 1, 1}, text: "1 triangles, at most 1 through one vertex"},
		{name: "empty graph", algo: "wcc", g: makeGraph(t, 0, nil, false, false, nil), words: []uint64{},
			text: "0 components, the largest of 0 of 0 vertices"},
		{name: "wcc label ≥ N", algo: "wcc", g: g3, words: []uint64{0, 3, 0}, err: "WCC vertex 1099511627776 has label 3, not a vertex of the 3"},
		{name: "cdlp label ≥ N", algo: "cdlp", g: g3, words: []uint64{0, 0, math.MaxUint64}, err: "CDLP vertex 18446744073709551615 has label 18446744073709551615"},
		{name: "sssp NaN", algo: "sssp", g: g3, words: []uint64{0, nan, inf}, err: "SSSP vertex 1099511627776: value NaN is not allowed"},
		{name: "pagerank -Inf", algo: "pagerank", g: g3, words: floatWords([]float64{math.Inf(-1), 0, 0}), err: "PR vertex 7: value -Inf"},
		{name: "too few words", algo: "bfs", g: g3, words: []uint64{0, 1}, err: "result has 2 values, want one per vertex (3)"},
		{name: "nil graph", algo: "lcc", g: nil, words: []uint64{0}, err: "graph is nil"},
	}...)
	for _, c := range cases {
		t.Run(c.name, c.check)
	}
}

// TestWriteResultKeepsOldFile: a result that cannot be written leaves an
// existing output as it was.
func TestWriteResultKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result")
	const old = "1 0.5\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Lookup("wcc")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteResult(path, &csr.Graph{N: 2}, []uint64{0, 2}); err == nil {
		t.Fatal("a label past the vertices written")
	}
	if b, _ := os.ReadFile(path); string(b) != old {
		t.Errorf("existing output changed to %q", b)
	}
}
