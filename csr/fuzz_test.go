package csr

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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
	})
}

// A CN's share of any input, cut anywhere, holds exactly the whole graph's
// rows of its vertices and, asked for them, the rows of the transpose as
// its in-edges (built, or found by fingerprint to be the out-rows), is
// Symmetric exactly when those rows are the same, and fails exactly when
// the whole graph does.
func FuzzShare(f *testing.F) {
	f.Add(byte(0), uint8(0), uint8(3), []byte("1 2\n2 1\n2 2\n2 3\n3 2\n"))
	f.Add(byte(2), uint8(0), uint8(2), []byte("1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n1 1 2\n"))
	f.Add(byte(1), uint8(0), uint8(3), []byte("1 2\n2 3\n3 1\n"))
	f.Add(byte(1), uint8(0), uint8(1), []byte("1 2\n1 2\n1 3\n2 1\n3 1\n3 1\n"))
	f.Add(byte(0), uint8(0), uint8(1), []byte("1 2\n2 3\n3 1\n1 1\n1 2\n"))
	f.Add(byte(2), uint8(0), uint8(3), []byte("1 2 0.5\n2 1 3\n1 2 0.25\n2 2 1\n"))
	f.Add(byte(3), uint8(1), uint8(2), []byte("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 3 2\n"))
	f.Add(byte(0x67), uint8(2), uint8(1), []byte("%%MatrixMarket matrix coordinate integer general\n3 3 4\n2 1 -1\n2 1 -2\n1 2 3\n3 3 2\n"))
	f.Fuzz(func(t *testing.T, sel byte, a, b uint8, data []byte) {
		name := []string{"g.txt", "g.el", "g.wel", "g.mtx"}[sel%4]
		o := fuzzOpts
		o.Undirected = sel&4 != 0
		o.Weighted = sel&8 != 0
		o.SelfLoops = LoopPolicy(sel >> 4 & 1)
		o.Duplicates = DupPolicy(sel >> 5 & 1)
		o.AllowNegativeWeights = sel&64 != 0
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		full, _, ferr := Open(p, o)
		sh, _, serr := OpenShareWith(p, o, ShareOptions{In: sel&128 == 0}, func(deg []uint64) (uint32, uint32, error) {
			n := uint32(len(deg))
			return min(uint32(a), uint32(b), n), min(max(uint32(a), uint32(b)), n), nil
		})
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("whole graph: %v; share: %v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		g := sh.Graph
		checkCSR(t, g)
		if g.N != full.N || (g.Weights == nil) != (full.Weights == nil) {
			t.Fatalf("share: N %d weighted %v; whole graph %d %v", g.N, g.Weights != nil, full.N, full.Weights != nil)
		}
		for v := range full.N {
			var want []uint32
			var wantW, gotW []float64
			if v >= sh.Lo && v < sh.Hi {
				want = full.Neighbors(v)
				if full.Weights != nil {
					wantW, gotW = full.Weights[full.Offsets[v]:full.Offsets[v+1]], g.Weights[g.Offsets[v]:g.Offsets[v+1]]
				}
			}
			if !slices.Equal(g.Neighbors(v), want) || !slices.Equal(gotW, wantW) {
				t.Fatalf("vertex %d: share %v %v, whole graph %v %v", v, g.Neighbors(v), gotW, want, wantW)
			}
		}
		if sel&128 != 0 {
			if sh.In != nil {
				t.Fatal("in-edges nobody asked for")
			}
			return
		}
		checkIn(t, sh, full, transpose(full))
	})
}
