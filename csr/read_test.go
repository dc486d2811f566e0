package csr

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr/csrtest"
)

// checkCSR asserts the structural invariants of a built graph.
func checkCSR(t *testing.T, g *Graph) {
	t.Helper()
	rows := uint64(len(g.Offsets)) - 1 // a share's graph (Lo > 0 or fewer rows) holds its own
	if len(g.Offsets) == 0 || uint64(g.Lo)+rows > uint64(g.N) {
		t.Fatalf("len(Offsets)=%d from vertex %d, N=%d", len(g.Offsets), g.Lo, g.N)
	}
	if g.Offsets[0] != 0 || g.Offsets[rows] != uint64(len(g.Dst)) {
		t.Fatalf("Offsets ends %d..%d, want 0..%d", g.Offsets[0], g.Offsets[rows], len(g.Dst))
	}
	if g.Weights != nil && len(g.Weights) != len(g.Dst) {
		t.Fatalf("len(Weights)=%d, len(Dst)=%d", len(g.Weights), len(g.Dst))
	}
	for v := uint32(0); v < g.N; v++ {
		if g.Off(v) > g.Off(v+1) {
			t.Fatalf("Offsets decrease at %d", v)
		}
		nb := g.Neighbors(v)
		if !slices.IsSorted(nb) {
			t.Fatalf("adjacency of %d not sorted: %v", v, nb)
		}
		for _, d := range nb {
			if d >= g.N {
				t.Fatalf("edge %d→%d out of range", v, d)
			}
		}
	}
	if g.IDs != nil && !slices.IsSorted(g.IDs) {
		t.Fatalf("IDs not sorted")
	}
}

// refEdges parses a whitespace edge file the slow, obvious way.
func refEdges(t *testing.T, path string) [][3]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][3]string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		var e [3]string
		copy(e[:], f)
		out = append(out, e)
	}
	return out
}

func TestGraphalyticsDatasets(t *testing.T) {
	for _, ds := range csrtest.GraphalyticsDatasets(t) {
		t.Run(ds, func(t *testing.T) {
			dir := csrtest.GraphalyticsDir(t, ds)
			g, meta, err := Open(filepath.Join(dir, ds+".properties"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkCSR(t, g)
			verts := refEdges(t, filepath.Join(dir, ds+".v"))
			edges := refEdges(t, filepath.Join(dir, ds+".e"))
			if uint64(g.N) != meta.DeclaredVertices || int(g.N) != len(verts) {
				t.Errorf("N=%d, properties say %d, .v has %d", g.N, meta.DeclaredVertices, len(verts))
			}
			want := uint64(len(edges))
			if !meta.Directed {
				want *= 2 // no self-loops in these datasets
			}
			if g.NumEdges() != want || uint64(len(edges)) != meta.DeclaredEdges {
				t.Errorf("edges=%d want %d (properties %d, .e %d lines)", g.NumEdges(), want, meta.DeclaredEdges, len(edges))
			}
			wantDirected := meta.Properties["directed"] == "true"
			if g.Directed != wantDirected {
				t.Errorf("Directed=%v, properties say %q", g.Directed, meta.Properties["directed"])
			}
			if (g.Weights != nil) != (edges[0][2] != "") {
				t.Errorf("weighted=%v but first edge %q", g.Weights != nil, edges[0])
			}
			// Every listed edge is present with its weight.
			for _, e := range edges {
				s, _ := strconv.ParseUint(e[0], 10, 64)
				d, _ := strconv.ParseUint(e[1], 10, 64)
				check := func(s, d uint64) {
					u, ok1 := g.DenseID(s)
					v, ok2 := g.DenseID(d)
					if !ok1 || !ok2 {
						t.Fatalf("edge %v: ids not found", e)
					}
					if g.ExternalID(u) != s || g.ExternalID(v) != d {
						t.Fatalf("ExternalID(DenseID(x)) != x for %v", e)
					}
					nb := g.Neighbors(u)
					i, found := slices.BinarySearch(nb, v)
					if !found {
						t.Fatalf("edge %s→%s missing", e[0], e[1])
					}
					if e[2] != "" {
						w, _ := strconv.ParseFloat(e[2], 64)
						if got := g.Weights[g.Offsets[u]+uint64(i)]; got != w {
							t.Fatalf("edge %v weight %v", e, got)
						}
					}
				}
				check(s, d)
				if !g.Directed {
					check(d, s)
				}
			}
			for _, src := range []struct {
				has bool
				id  uint64
				key string
			}{{meta.HasBFSSource, meta.BFSSource, "bfs.source-vertex"}, {meta.HasSSSPSource, meta.SSSPSource, "sssp.source-vertex"}} {
				if v, ok := meta.Properties[src.key]; ok != src.has || (ok && v != strconv.FormatUint(src.id, 10)) {
					t.Errorf("%s: got %v %d, property %q", src.key, src.has, src.id, v)
				}
				if src.has {
					if _, ok := g.DenseID(src.id); !ok {
						t.Errorf("source %d not a vertex", src.id)
					}
				}
			}
			if _, ok := meta.Properties["pr.num-iterations"]; ok != meta.HasPR || (ok && (meta.PRDamping != 0.85 || meta.PRIterations == 0)) {
				t.Errorf("PR params: %v %v %v", meta.HasPR, meta.PRDamping, meta.PRIterations)
			}
			if v, ok := meta.Properties["cdlp.max-iterations"]; ok != meta.HasCDLP || (ok && v != strconv.Itoa(meta.CDLPIterations)) {
				t.Errorf("CDLP iterations %d, property %q", meta.CDLPIterations, v)
			}
		})
	}
}

func TestSNAP(t *testing.T) {
	data := csrtest.DataDir(t)
	tests := []struct {
		file       string
		undirected bool
		n          uint32
		edges      uint64
	}{
		{"email-Eu-core.txt.gz", false, 1005, 25571},
		{"p2p-Gnutella08.txt.gz", false, 6301, 20777},
		{"facebook_combined.txt.gz", false, 4039, 88234},
		{"facebook_combined.txt.gz", true, 4039, 2 * 88234},
		// each undirected edge listed in both directions: merged
		{"email-Enron.txt.gz", true, 36692, 367662},
		{"soc-Slashdot0902.txt.gz", false, 82168, 948464},
	}
	for _, tc := range tests {
		t.Run(tc.file+map[bool]string{true: "/undirected"}[tc.undirected], func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(tc.file, "soc-") {
				t.Skip("large")
			}
			g, meta, err := Open(filepath.Join(data, "snap", tc.file), Options{Undirected: tc.undirected})
			if err != nil {
				t.Fatal(err)
			}
			checkCSR(t, g)
			if g.N != tc.n || g.NumEdges() != tc.edges {
				t.Errorf("got %d vertices %d edges, want %d / %d", g.N, g.NumEdges(), tc.n, tc.edges)
			}
			if meta.Format != FormatSNAP || g.Directed == tc.undirected {
				t.Errorf("format %s directed %v", meta.Format, g.Directed)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var data []byte
	if raw, ok := strings.CutPrefix(content, "RAW:"); ok {
		data = []byte(raw)
	} else if strings.HasSuffix(name, ".gz") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(content))
		zw.Close()
		data = buf.Bytes()
	} else {
		data = []byte(content)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// adj renders a graph as "ext:ext,ext;..." for compact comparisons.
func adj(g *Graph) string {
	var b strings.Builder
	for v := uint32(0); v < g.N; v++ {
		if v > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(g.ExternalID(v), 10))
		b.WriteByte(':')
		for i := g.Offsets[v]; i < g.Offsets[v+1]; i++ {
			if i > g.Offsets[v] {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(g.ExternalID(g.Dst[i]), 10))
			if g.Weights != nil {
				b.WriteString("/" + strconv.FormatFloat(g.Weights[i], 'g', -1, 64))
			}
		}
	}
	return b.String()
}

func TestReadFormats(t *testing.T) {
	tests := []struct {
		name, file, content string
		opts                Options
		want                string
	}{
		{"snap", "g.txt", "# c\n10 30\n30\t10\r\n\n10 20\n", Options{}, "10:20,30 20: 30:10"},
		{"snap-gz", "g.txt.gz", "1 2\n2 3\n", Options{}, "1:2 2:3 3:"},
		{"identity-ids", "g.el", "0 2\n1 0\n", Options{}, "0:2 1:0 2:"},
		{"dups-dropped", "g.el", "1 2\n1 2\n2 1\n", Options{}, "1:2 2:1"},
		{"dups-kept", "g.el", "1 2\n1 2\n", Options{Duplicates: KeepDuplicates}, "1:2,2 2:"},
		{"loops-kept", "g.el", "1 1\n1 2\n", Options{}, "1:1,2 2:"},
		{"loops-dropped", "g.el", "1 1\n1 2\n", Options{SelfLoops: DropSelfLoops}, "1:2 2:"},
		{"undirected", "g.el", "1 1\n1 2\n3 1\n", Options{Undirected: true}, "1:1,2,3 2:1 3:1"},
		{"wel", "g.wel", "1 2 0.5\n2 1 3\n1 2 0.25\n", Options{}, "1:2/0.25 2:1/3"},
		{"wel-unweighted", "g.wel", "1 2 0.5\n", Options{Unweighted: true}, "1:2 2:"},
		{"wel-undirected-min", "g.wel", "1 2 0.5\n2 1 0.25\n", Options{Undirected: true}, "1:2/0.25 2:1/0.25"},
		{"wel-negative-allowed", "g.wel", "1 2 -1.5\n", Options{AllowNegativeWeights: true}, "1:2/-1.5 2:"},
		{"empty", "g.txt", "# nothing\n", Options{}, ""},
		{"empty-file", "g.el", "", Options{}, ""},
		{"mtx-pattern", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 2\n1 2\n3 1\n", Options{}, "1:2 2: 3:1"},
		{"mtx-real-sym", "m.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1.5\n3 3 2\n", Options{}, "1:2/1.5 2:1/1.5 3:3/2"},
		{"mtx-integer-rect", "m.mtx.gz", "%%MatrixMarket matrix coordinate integer general\n2 4 1\n1 4 7\n", Options{}, "1:4/7 2: 3: 4:"},
		{"mtx-empty", "m.mtx", "%%MatrixMarket matrix coordinate pattern general\n0 0 0\n", Options{}, ""},
		{"format-override", "g.dat", "1 2 5\n", Options{Format: FormatWEL}, "1:2/5 2:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), tc.file, tc.content)
			g, _, err := Open(p, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkCSR(t, g)
			if got := adj(g); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestSyntheticWeights(t *testing.T) {
	p := writeFile(t, t.TempDir(), "g.el", "1 2\n2 1\n2 3\n")
	g, meta, err := Open(p, Options{Weighted: true, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Weighted || g.Weights == nil {
		t.Fatal("no weights")
	}
	for _, w := range g.Weights {
		if !(w > 0 && w <= 1) {
			t.Errorf("weight %v outside (0,1]", w)
		}
	}
	// 1→2 and 2→1 weigh the same; 2→3 differs (with overwhelming probability).
	if g.Weights[0] != g.Weights[1] || g.Weights[1] == g.Weights[2] {
		t.Errorf("weights %v", g.Weights)
	}
	g2, _, _ := Open(p, Options{Weighted: true, Seed: 8})
	if reflect.DeepEqual(g.Weights, g2.Weights) {
		t.Errorf("seed does not change weights")
	}
}

func TestGraphalyticsVariants(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "x.properties", "graph.x.directed = false\ngraph.x.edge-properties.names = weight\ngraph.x.bfs.source-vertex = 30\n")
	writeFile(t, dir, "x.v", "30\n10\n20\n40\n")
	writeFile(t, dir, "x.e.gz", "10 30 1.5\n30 20 2\n")
	want := "10:30/1.5 20:30/2 30:10/1.5,20/2 40:"
	for _, spec := range []string{"x.properties", "x.v", "x.e.gz", "."} {
		g, meta, err := Open(filepath.Join(dir, spec), Options{})
		if spec == "." {
			// a directory opens <dir>/<basename>.properties, which is not x
			if err == nil {
				t.Errorf("directory without matching properties opened")
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := adj(g); got != want {
			t.Errorf("%s: got %q want %q", spec, got, want)
		}
		if v, ok := g.DenseID(meta.BFSSource); !ok || v != 2 {
			t.Errorf("source dense id %d %v", v, ok)
		}
		if _, ok := g.DenseID(25); ok {
			t.Errorf("DenseID(25) found")
		}
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		open  string
		opts  Options
		want  string // substring of the error
	}{
		{"non-numeric", map[string]string{"g.txt": "1 2\n# x\n1 x2\n"}, "g.txt", Options{}, "g.txt:3: expected a non-negative integer destination vertex id, got \"x2\""},
		{"negative-id", map[string]string{"g.txt": "-1 2\n"}, "g.txt", Options{}, "g.txt:1: expected a non-negative integer source"},
		{"too-many-fields", map[string]string{"g.el": "1 2 3\n"}, "g.el", Options{}, "g.el:1: expected 2 fields (src dst), got 3"},
		{"too-few-fields", map[string]string{"g.wel": "1 2 3\n1 2\n"}, "g.wel", Options{}, "g.wel:2: expected 3 fields (src dst weight), got 2"},
		{"bad-weight", map[string]string{"g.wel": "1 2 abc\n"}, "g.wel", Options{}, "g.wel:1: expected a finite number as edge weight, got \"abc\""},
		{"nan-weight", map[string]string{"g.wel": "1 2 NaN\n"}, "g.wel", Options{}, "g.wel:1: expected a finite number"},
		{"negative-weight", map[string]string{"g.wel": "1 2 -0.5\n"}, "g.wel", Options{}, "g.wel:1: negative edge weight \"-0.5\""},
		{"overflow-id", map[string]string{"g.el": "18446744073709551616 1\n"}, "g.el", Options{}, "g.el:1: expected a non-negative integer source"},
		{"missing-vertex", map[string]string{
			"x.properties": "graph.x.directed = true\n", "x.v": "1\n2\n", "x.e": "1 2\n2 3\n"},
			"x.properties", Options{}, "x.e:2: destination vertex 3 is not in the vertex file x.v"},
		{"dup-vertex", map[string]string{
			"x.properties": "", "x.v": "1\n2\n1\n", "x.e": ""}, "x.properties", Options{}, "x.v:3: vertex id 1 listed more than once (first on line 1)"},
		{"bad-v", map[string]string{
			"x.properties": "", "x.v": "1\n2 3\n", "x.e": ""}, "x.properties", Options{}, "x.v:2: expected 1 field (vertex id), got 2"},
		{"bad-directed", map[string]string{
			"x.properties": "\ngraph.x.directed = maybe\n", "x.v": "", "x.e": ""}, "x.properties", Options{}, "x.properties:2: property graph.x.directed: expected true or false"},
		{"graphalytics-negative-weight", map[string]string{
			"x.properties": "graph.x.edge-properties.names = weight\n", "x.v": "1\n2\n", "x.e": "1 2 -1\n"},
			"x.properties", Options{}, "x.e:1: negative edge weight"},
		{"graphalytics-missing-weight", map[string]string{
			"x.properties": "graph.x.edge-properties.names = weight\n", "x.v": "1\n2\n", "x.e": "1 2\n"},
			"x.properties", Options{}, "x.e:1: expected 3 fields (src dst prop), got 2"},
		{"mtx-banner", map[string]string{"m.mtx": "1 2\n"}, "m.mtx", Options{}, "m.mtx:1: expected \"%%MatrixMarket matrix coordinate"},
		{"mtx-array", map[string]string{"m.mtx": "%%MatrixMarket matrix array real general\n"}, "m.mtx", Options{}, "m.mtx:1: expected coordinate format"},
		{"mtx-range", map[string]string{"m.mtx": "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n"}, "m.mtx", Options{}, "m.mtx:3: expected a row index in 1..2, got \"3\""},
		{"mtx-zero", map[string]string{"m.mtx": "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n0 1\n"}, "m.mtx", Options{}, "m.mtx:3: expected a row index in 1..2"},
		{"mtx-short", map[string]string{"m.mtx": "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n"}, "m.mtx", Options{}, "expected 2 entries as the size line declares, got 1"},
		{"mtx-long", map[string]string{"m.mtx": "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n2 2\n"}, "m.mtx", Options{}, "m.mtx:4: more entries than the 1"},
		{"mtx-too-big", map[string]string{"m.mtx": "%%MatrixMarket matrix coordinate pattern general\n4294967296 1 0\n"}, "m.mtx", Options{}, "m.mtx:2: matrix dimension 4294967296: 4294967296 vertices: more than 4294967295"},
		{"bel-magic", map[string]string{"g.bel": "not a binary edge list at all!!!"}, "g.bel", Options{}, "g.bel: byte 0: expected magic"},
		{"bel-short", map[string]string{"g.bel": "DMG"}, "g.bel", Options{}, "truncated header"},
		{"gz-corrupt", map[string]string{"g.txt.gz": "RAW:this is not gzip"}, "g.txt.gz", Options{}, "not a valid gzip file"},
		{"gz-truncated", map[string]string{"g.txt.gz": "RAW:\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x32\x54"}, "g.txt.gz", Options{}, "corrupt gzip data"},
		{"kron-scale", nil, "kron:40", Options{}, "kron:40: scale 40: at most 31"},
		{"kron-syntax", nil, "kron:x", Options{}, "expected a non-negative integer scale"},
		{"uniform-too-many", nil, "uniform:4294967296:1", Options{}, "more than 4294967295"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, c := range tc.files {
				writeFile(t, dir, name, c)
			}
			spec := tc.open
			if tc.files != nil {
				spec = filepath.Join(dir, tc.open)
			}
			_, _, err := Open(spec, tc.opts)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !IsInputError(err) {
				t.Errorf("not an InputError: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "csr: ") {
				t.Errorf("error %q\nwant substring %q", err, tc.want)
			}
		})
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	srcs := []struct {
		name string
		file string
		opts Options
	}{
		{"sparse-ids-weighted", writeFile(t, dir, "a.wel", "100 7 0.5\n7 100 1\n3 3 2\n"), Options{}},
		{"undirected", writeFile(t, dir, "b.el", "0 1\n1 2\n2 2\n"), Options{Undirected: true}},
		{"kron", "kron:8", Options{Seed: 3, Weighted: true}},
		{"empty", writeFile(t, dir, "c.el", ""), Options{}},
	}
	for _, s := range srcs {
		for _, f32 := range []bool{false, true} {
			t.Run(s.name+map[bool]string{true: "/f32"}[f32], func(t *testing.T) {
				g, _, err := Open(s.file, s.opts)
				if err != nil {
					t.Fatal(err)
				}
				if f32 && g.Weights != nil {
					for i := range g.Weights {
						g.Weights[i] = float64(float32(g.Weights[i]))
					}
				}
				var buf bytes.Buffer
				if err := WriteBinary(&buf, g, BinaryOptions{Float32Weights: f32}); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(t.TempDir(), "g.bel.gz")
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(buf.Bytes())
				zw.Close()
				os.WriteFile(p, z.Bytes(), 0o644)
				for _, read := range []func() (*Graph, error){
					func() (*Graph, error) {
						g, _, err := Read(bytes.NewReader(buf.Bytes()), "x.bel", Options{})
						return g, err
					},
					func() (*Graph, error) { g, _, err := Open(p, Options{}); return g, err },
				} {
					g2, err := read()
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(g, g2) {
						t.Errorf("round trip differs:\n%s\n%s", adj(g), adj(g2))
					}
				}
			})
		}
	}
}

func TestBuildDeterministic(t *testing.T) {
	el, err := Generate("kron:12:8", Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var ref *Graph
	for _, w := range []int{1, 2, 3, 8} {
		for _, o := range []Options{{Workers: w, Weighted: true}, {Workers: w, Undirected: true, Duplicates: KeepDuplicates}} {
			g, err := Build(el, o)
			if err != nil {
				t.Fatal(err)
			}
			checkCSR(t, g)
			if o.Weighted && w == 1 {
				ref = g
			}
			if o.Weighted && !reflect.DeepEqual(ref, g) {
				t.Errorf("workers=%d: graph differs from workers=1", w)
			}
		}
	}
}

// Weights that cmp.Compare calls equal but that differ in their bits (−0
// and +0, NaNs) sort, and are de-duplicated, the same whatever the order
// of the edges, so a built row (and the weight DropDuplicates keeps: −0
// before +0) does not depend on it.
func TestBuildWeightTies(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan1, nan2 := math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0xfff8000000000002)
	edges := []struct {
		s, d uint32
		w    float64
	}{{0, 1, 0}, {0, 1, negZero}, {0, 1, 2}, {0, 2, nan1}, {0, 2, nan2}, {0, 2, 1}, {1, 0, negZero}, {1, 0, 0}, {1, 0, 0}, {2, 2, nan2}, {2, 2, nan1}}
	for _, dups := range []DupPolicy{DropDuplicates, KeepDuplicates} {
		var want *Graph
		rng := rand.New(rand.NewPCG(1, 2))
		for try := range 20 {
			el := &EdgeList{N: 3, Directed: true}
			for _, i := range rng.Perm(len(edges)) {
				el.Src = append(el.Src, edges[i].s)
				el.Dst = append(el.Dst, edges[i].d)
				el.Weights = append(el.Weights, edges[i].w)
			}
			g, err := Build(el, Options{Duplicates: dups, Workers: 1 + try%3})
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = g
			}
			bits := func(g *Graph) []uint64 {
				var b []uint64
				for _, w := range g.Weights {
					b = append(b, math.Float64bits(w))
				}
				return b
			}
			if !slices.Equal(g.Offsets, want.Offsets) || !slices.Equal(g.Dst, want.Dst) || !slices.Equal(bits(g), bits(want)) {
				t.Fatalf("duplicates %d, order %d: %v %v %x; first order %v %v %x", dups, try, g.Offsets, g.Dst, bits(g), want.Offsets, want.Dst, bits(want))
			}
		}
		if dups == DropDuplicates && (want.NumEdges() != 4 || !math.Signbit(want.Weights[0]) || want.Weights[0] != 0) {
			t.Errorf("kept %v %v; want 0→1 to keep −0", want.Dst, want.Weights)
		}
	}
}

func TestLineReaderLongLines(t *testing.T) {
	long := strings.Repeat(" ", MaxLineBytes-8) + "1 2\n3 4" // within the limit (text_test.go: beyond it)
	lr := newLineReader(bufio.NewReader(strings.NewReader(long)), "x")
	var got []string
	for {
		l, err := lr.next()
		if err != nil {
			break
		}
		got = append(got, strings.TrimSpace(string(l)))
	}
	if !reflect.DeepEqual(got, []string{"1 2", "3 4"}) || lr.line != 2 {
		t.Errorf("got %q at line %d", got, lr.line)
	}
}
