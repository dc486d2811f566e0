package csr

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fuzzOpts keeps headers from asking for huge allocations.
var fuzzOpts = Options{vertexLimit: 1 << 16, Workers: 2}

// checkResult: a reader either fails with an InputError or returns a valid
// graph.
func checkResult(t *testing.T, g *Graph, err error) {
	t.Helper()
	if err != nil {
		if !IsInputError(err) || !strings.HasPrefix(err.Error(), "csr: ") {
			t.Fatalf("error is not a csr InputError: %v", err)
		}
		return
	}
	checkCSR(t, g)
}

func FuzzReadText(f *testing.F) {
	f.Add(byte(0), []byte("# c\n1 2\n2\t3\r\n\n"))
	f.Add(byte(1), []byte("1 2\n3 x\n"))
	f.Add(byte(2), []byte("1 2 0.5\n2 1 -3\n4 4 1e308\n"))
	f.Add(byte(3), []byte("18446744073709551615 0\n"))
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		name := []string{"g.txt", "g.el", "g.wel", "g.snap"}[sel%4]
		o := fuzzOpts
		o.Undirected = sel&4 != 0
		o.AllowNegativeWeights = sel&8 != 0
		o.SelfLoops = LoopPolicy(sel >> 4 & 1)
		o.Duplicates = DupPolicy(sel >> 5 & 1)
		g, _, err := Read(bytes.NewReader(data), name, o)
		checkResult(t, g, err)
	})
}

func FuzzReadMTX(f *testing.F) {
	f.Add([]byte("%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 2\n2 1 1.5\n3 3 2\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate pattern general\n2 4 1\n1 4\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _, err := Read(bytes.NewReader(data), "m.mtx", fuzzOpts)
		checkResult(t, g, err)
	})
}

func FuzzReadBinary(f *testing.F) {
	for _, spec := range []string{"kron:3:2", "uniform:5:7"} {
		for _, o := range []Options{{}, {Weighted: true, Undirected: true}} {
			g, _, err := Open(spec, o)
			if err != nil {
				f.Fatal(err)
			}
			var buf bytes.Buffer
			WriteBinary(&buf, g, BinaryOptions{})
			f.Add(buf.Bytes())
			buf.Reset()
			WriteBinary(&buf, g, BinaryOptions{Float32Weights: true})
			f.Add(buf.Bytes())
			buf.Reset()
			WriteBinary(&buf, g, BinaryOptions{Properties: map[string]string{"bfs.source-vertex": "3", "pr.damping-factor": "0.85", "pr.num-iterations": "2"}})
			f.Add(buf.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _, err := Read(bytes.NewReader(data), "g.bel", fuzzOpts)
		checkResult(t, g, err)
	})
}

func FuzzReadGraphalytics(f *testing.F) {
	f.Add([]byte("graph.x.directed = false\ngraph.x.edge-properties.names = weight\ngraph.x.bfs.source-vertex = 3\n"), []byte("3\n1\n2\n"), []byte("1 3 0.5\n3 2 1\n"))
	f.Add([]byte("graph.x.directed = true\ngraph.x.pr.damping-factor = 0.85\ngraph.x.pr.num-iterations = 3\n"), []byte("1\n2\n"), []byte("1 2\n2 1\n2 7\n"))
	f.Fuzz(func(t *testing.T, props, v, e []byte) {
		dir := t.TempDir()
		for name, data := range map[string][]byte{"x.properties": props, "x.v": v, "x.e": e} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g, _, err := Open(filepath.Join(dir, "x.properties"), fuzzOpts)
		if err != nil && !IsInputError(err) && strings.Contains(err.Error(), "no such file") {
			return // the properties may name missing vertex/edge files
		}
		checkResult(t, g, err)
		// Parallel blocks cut anywhere read what the careful serial
		// reader does.
		seed := uint64(len(v))<<32 | uint64(len(e))
		ref := func() (*Graph, *Meta, error) {
			return open(filepath.Join(dir, "x.properties"), serialOpts(fuzzOpts), carefulConfig())
		}
		got := func() (*Graph, *Meta, error) {
			return open(filepath.Join(dir, "x.properties"), fuzzOpts, splitConfig(seed, len(v)+len(e)))
		}
		sameRead(t, ref, got)
	})
}

// serialOpts is o with one worker: the reference readers run serially.
func serialOpts(o Options) Options {
	o.Workers = 1
	return o
}

// carefulConfig reads an input as one block, every line the careful
// (slow) way: the line-by-line reader the parallel path must match.
func carefulConfig() *readConfig {
	return &readConfig{careful: true, blockBytes: func() int { return 1 << 30 }}
}

// splitConfig cuts an input of about n bytes into blocks of random
// sizes (from 1 byte to about n/2), drawn from seed.
func splitConfig(seed uint64, n int) *readConfig {
	r := rand.New(rand.NewPCG(seed, seed>>32^0x9e3779b97f4a7c15))
	return &readConfig{blockBytes: func() int {
		if r.IntN(4) == 0 {
			return 1 + r.IntN(8)
		}
		return 1 + r.IntN(n/2+1)
	}}
}

// sameRead fails unless two reads give the same graph and meta, or the
// same error.
func sameRead(t *testing.T, ref, got func() (*Graph, *Meta, error)) {
	t.Helper()
	g1, m1, err1 := ref()
	g2, m2, err2 := got()
	switch {
	case err1 != nil || err2 != nil:
		if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
			t.Fatalf("serial reader: %v\nparallel blocks: %v", err1, err2)
		}
	case !reflect.DeepEqual(g1, g2):
		t.Fatalf("graphs differ:\nserial   %s\nparallel %s", adj(g1), adj(g2))
	case !reflect.DeepEqual(m1, m2):
		t.Fatalf("meta differs:\nserial   %+v\nparallel %+v", m1, m2)
	}
}

// checkParallel reads data as the format of name with the careful serial
// reader and in parallel blocks cut by seed, with 1 to 3 workers.
func checkParallel(t *testing.T, sel byte, seed uint64, data []byte) {
	t.Helper()
	name := []string{"g.txt", "g.el", "g.wel", "g.mtx"}[sel%4]
	o := fuzzOpts
	o.Undirected = sel&4 != 0
	o.Weighted = sel&8 != 0
	o.AllowNegativeWeights = sel&16 != 0
	o.Duplicates = DupPolicy(sel >> 5 & 1)
	read := func(o Options, rc *readConfig) func() (*Graph, *Meta, error) {
		return func() (*Graph, *Meta, error) {
			o.EnsureDefaults()
			return read(bytes.NewReader(data), name, FormatOf(name), &o, rc)
		}
	}
	ref := read(serialOpts(o), carefulConfig())
	o.Workers = 1 + int(seed%3)
	sameRead(t, ref, read(o, splitConfig(seed, len(data))))
	if sel&64 != 0 { // and the careful parser cut into blocks
		rc := splitConfig(seed, len(data))
		rc.careful = true
		sameRead(t, ref, read(o, rc))
	}
}

// The parallel text readers (fast path, blocks cut anywhere, several
// workers) read exactly what the careful serial reader reads, and fail
// with the same message, line numbers included.
func FuzzParallelText(f *testing.F) {
	f.Add(byte(0), uint64(1), []byte("# c\n1 2\n2\t3\r\n\n 4 5 \n"))
	f.Add(byte(1), uint64(2), []byte("1 2\n3 4\n5 x\n6 7\n"))
	f.Add(byte(2), uint64(3), []byte("1 2 0.5\n2 1 3\n4 4 1e3\n5 6 0.125\r\n7 8 .5\n9 9 -0\n"))
	f.Add(byte(18), uint64(4), []byte("1 2 -1.5\n2 3 007.50\n"))
	f.Add(byte(1), uint64(5), []byte("18446744073709551615 0\n4294967296 1\n1 0"))
	f.Add(byte(3), uint64(6), []byte("%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 2 1.5\n\n2 3 2\n3 1 0.25\n"))
	f.Add(byte(3), uint64(7), []byte("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n2 3\n3 3\n"))
	f.Add(byte(67), uint64(8), []byte("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 1\n2 2 x\n"))
	f.Fuzz(checkParallel)
}

// TestParallelText runs checkParallel on a fixed set of random inputs
// (mostly well-formed, with the odd bad or unusual line), so CI compares
// the parallel path with the serial reader without a fuzzing budget.
func TestParallelText(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 14))
	tokens := []string{"0", "1", "7", "42", "1000", "4294967295", "4294967296", "18446744073709551615", "18446744073709551616",
		"0.5", "2.25", "1e3", "-1", "-0", ".5", "5.", "x", "007", "123456789012345678", "0.1234567890123456"}
	seps := []string{" ", " ", " ", "\t", "  ", " \t"}
	ends := []string{"\n", "\n", "\n", "\n", "\r\n", " \n", "\t\n"}
	for c := range 400 {
		sel := byte(r.IntN(256))
		var b strings.Builder
		mtx := sel%4 == 3
		fields := 2 + int(sel%4/2) // .wel and .mtx lines carry a value
		lines := 1 + r.IntN(60)
		if mtx {
			kind := []string{"pattern", "real", "integer"}[r.IntN(3)]
			if kind == "pattern" {
				fields = 2
			}
			sym := []string{"general", "symmetric"}[r.IntN(2)]
			fmt.Fprintf(&b, "%%%%MatrixMarket matrix coordinate %s %s\n%% c\n9 9 %d\n", kind, sym, lines-r.IntN(2))
		}
		for range lines {
			switch k := r.IntN(40); {
			case k == 0:
				b.WriteString("# comment\n")
			case k == 1:
				b.WriteString("\n")
			default:
				n := fields
				if k == 2 {
					n += r.IntN(3) - 1
				}
				if r.IntN(8) == 0 {
					b.WriteString(seps[r.IntN(len(seps))])
				}
				for i := range n {
					if i > 0 {
						b.WriteString(seps[r.IntN(len(seps))])
					}
					switch {
					case k == 3:
						b.WriteString(tokens[r.IntN(len(tokens))])
					case mtx && i < 2:
						fmt.Fprint(&b, 1+r.IntN(9))
					case i < 2:
						fmt.Fprint(&b, r.IntN(50))
					default:
						fmt.Fprintf(&b, "%g", float64(r.IntN(1000))/8)
					}
				}
				b.WriteString(ends[r.IntN(len(ends))])
			}
		}
		data := b.String()
		if r.IntN(4) == 0 {
			data = strings.TrimSuffix(data, "\n")
		}
		t.Run(strconv.Itoa(c), func(t *testing.T) { checkParallel(t, sel, r.Uint64(), []byte(data)) })
	}
}

// A CN's share of any input, cut anywhere, holds exactly the whole graph's
// rows of its vertices and, asked for them, the rows of the transpose as
// its in-edges (built, or found by fingerprint to be the out-rows), is
// Symmetric exactly when those rows are the same, and fails exactly when
// the whole graph does.
func FuzzShare(f *testing.F) {
	f.Add(byte(0), uint8(0), uint8(3), uint64(0), []byte("1 2\n2 1\n2 2\n2 3\n3 2\n"))
	f.Add(byte(2), uint8(0), uint8(2), uint64(1), []byte("1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n1 1 2\n"))
	f.Add(byte(1), uint8(0), uint8(3), uint64(2), []byte("1 2\n2 3\n3 1\n"))
	f.Add(byte(1), uint8(0), uint8(1), uint64(3), []byte("1 2\n1 2\n1 3\n2 1\n3 1\n3 1\n"))
	f.Add(byte(0), uint8(0), uint8(1), uint64(4), []byte("1 2\n2 3\n3 1\n1 1\n1 2\n"))
	f.Add(byte(2), uint8(0), uint8(3), uint64(5), []byte("1 2 0.5\n2 1 3\n1 2 0.25\n2 2 1\n"))
	f.Add(byte(3), uint8(1), uint8(2), uint64(6), []byte("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 3 2\n"))
	f.Add(byte(0x67), uint8(2), uint8(1), uint64(7), []byte("%%MatrixMarket matrix coordinate integer general\n3 3 4\n2 1 -1\n2 1 -2\n1 2 3\n3 3 2\n"))
	f.Add(byte(1), uint8(1), uint8(9), uint64(8), []byte("# c\n10 20\n20 30\n30 10\n40 50\n50 40\n4294967296 10\n"))
	// Windowed rows (split/9 odd): a byte a window, and 12 bytes in
	// windows of 3 vertices.
	f.Add(byte(2), uint8(0), uint8(3), uint64(9), []byte("1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n1 1 2\n3 1 1\n"))
	f.Add(byte(1), uint8(1), uint8(9), uint64(9+18*11+1152*2), []byte("# c\n10 20\n20 30\n30 10\n40 50\n50 40\n4294967296 10\n10 10\n"))
	f.Add(byte(4), uint8(0), uint8(5), uint64(10+18*3+1152), []byte("1 2\n2 3\n3 4\n4 1\n1 3\n"))
	f.Fuzz(func(t *testing.T, sel byte, a, b uint8, split uint64, data []byte) {
		name := []string{"g.txt", "g.el", "g.wel", "g.mtx"}[sel%4]
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// The whole graph read by the careful serial reader; the share in
		// parallel blocks cut anywhere.
		o, so := fuzzOptions(sel, split)
		full, _, ferr := open(p, serialOpts(o), carefulConfig())
		sh, _, serr := openShare(p, o, so, func(deg []uint64) (uint32, uint32, error) {
			n := uint32(len(deg))
			return min(uint32(a), uint32(b), n), min(max(uint32(a), uint32(b)), n), nil
		}, splitConfig(split, len(data)))
		if serr == nil {
			sh, serr = sweptWhole(t, sh)
		}
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("whole graph: %v; share: %v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		checkShareRows(t, sh, full)
		if sel&128 != 0 {
			if sh.In != nil {
				t.Fatal("in-edges nobody asked for")
			}
			return
		}
		checkIn(t, sh, full, full.Transpose())
	})
}

// fuzzOptions are a share fuzzer's options: the policies from sel, and
// from split the workers, whether the text passes read the kept edges,
// the text, or the text after a budget the edges overflow, and whether
// the rows are built whole or in windows of a few vertices and bytes
// (assembled from two sweeps, which must agree: sweptWhole).
func fuzzOptions(sel byte, split uint64) (Options, ShareOptions) {
	o := fuzzOpts
	o.Undirected = sel&4 != 0
	o.Weighted = sel&8 != 0
	o.SelfLoops = LoopPolicy(sel >> 4 & 1)
	o.Duplicates = DupPolicy(sel >> 5 & 1)
	o.AllowNegativeWeights = sel&64 != 0
	o.Workers = 1 + int(split%3)
	o.KeepBytes = []int64{0, -1, 40}[split/3%3]
	so := ShareOptions{In: sel&128 == 0}
	if split/9%2 == 1 {
		so.RowBytes, so.Align = int64(1+split/18%64), uint32(1+split/1152%4)
	}
	return o, so
}

// sweptWhole is sh with the rows of its windows assembled (assemble),
// from two sweeps that must agree; a share built whole is itself.
func sweptWhole(t *testing.T, sh *Share) (*Share, error) {
	t.Helper()
	if !sh.Windowed() {
		return sh, nil
	}
	var sweeps [2]*Share
	for i := range sweeps {
		var err error
		if sweeps[i], err = assemble(sh); err != nil {
			return nil, err
		}
	}
	if !reflect.DeepEqual(sweeps[0], sweeps[1]) {
		t.Fatal("two sweeps of the windows disagree")
	}
	return sweeps[0], nil
}

// checkShareRows fails unless sh has the vertices of full and exactly its
// rows of [Lo, Hi), weights included, and no others.
func checkShareRows(t *testing.T, sh *Share, full *Graph) {
	t.Helper()
	g := sh.Graph
	checkCSR(t, g)
	if g.N != full.N || (g.Weights == nil) != (full.Weights == nil) || !sameShareIDs(sh, full) {
		t.Fatalf("share: N %d weighted %v ids %d; whole graph %d %v %d", g.N, g.Weights != nil, len(g.ExternalIDs()), full.N, full.Weights != nil, len(full.IDs))
	}
	for v := range full.N {
		var want []uint32
		var wantW, gotW []float64
		if v >= sh.Lo && v < sh.Hi {
			want = full.Neighbors(v)
			if full.Weights != nil {
				wantW, gotW = full.EdgeWeights(v), g.EdgeWeights(v)
			}
		}
		if !slices.Equal(g.Neighbors(v), want) || !slices.Equal(gotW, wantW) {
			t.Fatalf("share [%d, %d) vertex %d: %v %v, whole graph %v %v", sh.Lo, sh.Hi, v, g.Neighbors(v), gotW, want, wantW)
		}
	}
}

// assemble sweeps a windowed share's windows and returns the share as
// built whole: Graph and In with every window's rows. Its Symmetric is
// the windowed share's.
func assemble(sh *Share) (*Share, error) {
	n := sh.Graph.N
	type rows struct {
		dst [][]uint32
		ws  [][]float64
		g   *Graph
	}
	var out, in rows
	out.dst, in.dst = make([][]uint32, n), make([][]uint32, n)
	out.ws, in.ws = make([][]float64, n), make([][]float64, n)
	err := sh.Windows(func(g, gin *Graph, lo, hi uint32) error {
		for _, x := range []struct {
			r *rows
			g *Graph
		}{{&out, g}, {&in, gin}} {
			if x.g == nil {
				continue
			}
			x.r.g = x.g
			for v := lo; v < hi; v++ {
				x.r.dst[v] = slices.Clone(x.g.Neighbors(v))
				if x.g.Weights != nil {
					x.r.ws[v] = slices.Clone(x.g.EdgeWeights(v))
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	whole := func(r rows) *Graph {
		if r.g == nil {
			return nil
		}
		g := &Graph{N: n, Offsets: make([]uint64, n+1), IDs: r.g.IDs, idm: r.g.idm, Directed: r.g.Directed}
		if r.g.Weights != nil {
			g.Weights = []float64{}
		}
		for v := range n {
			g.Dst = append(g.Dst, r.dst[v]...)
			if g.Weights != nil {
				g.Weights = append(g.Weights, r.ws[v]...)
			}
			g.Offsets[v+1] = uint64(len(g.Dst))
		}
		return g
	}
	w := *sh
	w.Graph, w.In, w.free, w.win = whole(out), whole(in), nil, nil
	if w.Graph == nil { // no window: an empty share
		w.Graph = &Graph{N: n, Offsets: make([]uint64, n+1), IDs: sh.Graph.IDs, idm: sh.Graph.idm, Directed: sh.Graph.Directed}
	}
	return &w, nil
}
