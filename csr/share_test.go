package csr

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr/csrtest"
)

// checkShares cuts the graph of spec into 1, 2 and 3 shares and checks
// that each share's rows are exactly the whole graph's, that every other
// row is empty, and that the shares add up to the whole. Each share is
// opened with and without its in-edges: the out-rows must not change, and
// the in-rows are checked against the transpose of the whole graph.
func checkShares(t *testing.T, spec string, opts Options) {
	t.Helper()
	full, fmeta, err := Open(spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	tr := full.Transpose()
	n := full.N
	for _, parts := range []int{1, 2, 3} {
		var total, loops, dups uint64
		for p := range parts {
			lo, hi := uint32(uint64(n)*uint64(p)/uint64(parts)), uint32(uint64(n)*uint64(p+1)/uint64(parts))
			var seen []uint64
			sh, meta, err := OpenShare(spec, opts, func(deg []uint64) (uint32, uint32, error) {
				seen = deg
				return lo, hi, nil
			})
			if err != nil {
				t.Fatalf("%d parts, share %d: %v", parts, p, err)
			}
			g := sh.Graph
			checkCSR(t, g)
			if g.N != n || !sameIDs(g, full) || g.Directed != full.Directed || (g.Weights == nil) != (full.Weights == nil) {
				t.Fatalf("share [%d,%d): N %d ids %d directed %v weighted %v; whole graph %d %d %v %v", lo, hi,
					g.N, len(g.ExternalIDs()), g.Directed, g.Weights != nil, n, len(full.IDs), full.Directed, full.Weights != nil)
			}
			if uint32(len(seen)) != n {
				t.Fatalf("partition saw %d degrees for %d vertices", len(seen), n)
			}
			for v := range n {
				want := full.Neighbors(v)
				if v < lo || v >= hi {
					want = nil
				}
				if !slices.Equal(g.Neighbors(v), want) {
					t.Fatalf("share [%d,%d) vertex %d: %v, whole graph %v", lo, hi, v, g.Neighbors(v), want)
				}
				if seen[v] < uint64(len(full.Neighbors(v))) {
					t.Fatalf("vertex %d: partition degree %d below the built %d", v, seen[v], len(full.Neighbors(v)))
				}
				if full.Weights != nil && v >= lo && v < hi &&
					!slices.Equal(g.EdgeWeights(v), full.EdgeWeights(v)) {
					t.Fatalf("vertex %d: weights differ", v)
				}
			}
			total += g.NumEdges()
			loops += meta.DroppedSelfLoops
			dups += meta.DroppedDuplicates
			if meta.InputEdges != fmeta.InputEdges || meta.Name != fmeta.Name || meta.Format != fmeta.Format {
				t.Errorf("meta %+v, whole graph's %+v", meta, fmeta)
			}
			if sh.In != nil {
				t.Fatalf("share [%d,%d): in-edges nobody asked for", lo, hi)
			}
			withIn, metaIn, err := OpenShareWith(spec, opts, ShareOptions{In: true}, func([]uint64) (uint32, uint32, error) { return lo, hi, nil })
			if err != nil {
				t.Fatalf("%d parts, share %d with in-edges: %v", parts, p, err)
			}
			if !reflect.DeepEqual(withIn.Graph, sh.Graph) || !slices.Equal(withIn.Degrees, sh.Degrees) || !reflect.DeepEqual(metaIn, meta) {
				t.Fatalf("share [%d,%d): asking for in-edges changed the out-edges, degrees or meta", lo, hi)
			}
			checkIn(t, withIn, full, tr)
		}
		if total != full.NumEdges() || dups != fmeta.DroppedDuplicates || loops != fmeta.DroppedSelfLoops {
			t.Fatalf("%d shares: %d edges, %d loops, %d duplicates dropped; whole graph %d, %d, %d", parts, total, loops, dups,
				full.NumEdges(), fmeta.DroppedSelfLoops, fmeta.DroppedDuplicates)
		}
	}
}

// checkIn checks a share's in-edges: none for an undirected graph, else the
// rows [Lo, Hi) of tr (the transpose of the whole graph full), destinations
// and weights, and nothing else, whether they were built or found to be
// the out-rows (In == Graph); and Symmetric is true exactly when those
// rows of tr are those of full.
func checkIn(t *testing.T, sh *Share, full, tr *Graph) {
	t.Helper()
	in := sh.In
	if !full.Directed {
		if in != nil || !sh.Symmetric() {
			t.Fatalf("undirected share [%d,%d): in-edges %v, symmetric %v; want none, true", sh.Lo, sh.Hi, in != nil, sh.Symmetric())
		}
		return
	}
	if in == nil {
		t.Fatalf("directed share [%d,%d) without the in-edges asked for", sh.Lo, sh.Hi)
	}
	if want := sameRows(full, tr, sh.Lo, sh.Hi); sh.Symmetric() != want {
		t.Fatalf("directed share [%d,%d): symmetric %v (in-edges built: %v), but the transpose's rows equal the graph's: %v",
			sh.Lo, sh.Hi, sh.Symmetric(), in != sh.Graph, want)
	}
	checkCSR(t, in)
	if in.N != full.N || !sameShareIDs(sh, full) || !in.Directed || (in.Weights == nil) != (full.Weights == nil) {
		t.Fatalf("in-edges of [%d,%d): N %d ids %d directed %v weighted %v; whole graph %d %d true %v", sh.Lo, sh.Hi,
			in.N, len(in.ExternalIDs()), in.Directed, in.Weights != nil, full.N, len(full.IDs), full.Weights != nil)
	}
	for v := range full.N {
		want := tr.Neighbors(v)
		var wantW, gotW []float64
		if v < sh.Lo || v >= sh.Hi {
			want = nil
		} else if tr.Weights != nil {
			wantW, gotW = tr.EdgeWeights(v), in.EdgeWeights(v)
		}
		if !slices.Equal(in.Neighbors(v), want) || !slices.Equal(gotW, wantW) {
			t.Fatalf("in-edges of [%d,%d), vertex %d: %v %v, transpose %v %v", sh.Lo, sh.Hi, v, in.Neighbors(v), gotW, want, wantW)
		}
	}
}

// sameRows reports whether the rows [lo, hi) of a and b are the same,
// destinations and weights.
func sameRows(a, b *Graph, lo, hi uint32) bool {
	for v := lo; v < hi; v++ {
		if !slices.Equal(a.Neighbors(v), b.Neighbors(v)) {
			return false
		}
		if (a.Weights == nil) != (b.Weights == nil) ||
			a.Weights != nil && !slices.Equal(a.EdgeWeights(v), b.EdgeWeights(v)) {
			return false
		}
	}
	return true
}

func TestShareFormats(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, content string
		opts          Options
	}{
		{"a.txt", "# c\n10 30\n30\t10\r\n\n10 20\n10 20\n7 7\n", Options{}},
		{"b.txt.gz", "1 2\n2 3\n3 1\n1 3\n", Options{Undirected: true}},
		{"c.el", "0 2\n1 0\n2 2\n", Options{SelfLoops: DropSelfLoops}},
		{"d.el", "1 2\n1 2\n2 1\n", Options{Duplicates: KeepDuplicates}},
		{"e.wel", "1 2 0.5\n2 1 3\n1 2 0.25\n4 4 1\n", Options{Undirected: true}},
		{"f.el", "5 6\n6 7\n", Options{Weighted: true, Seed: 3}},
		{"g.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 1.5\n3 3 2\n4 2 1\n", Options{}},
		{"h.mtx.gz", "%%MatrixMarket matrix coordinate pattern general\n3 5 3\n1 4\n1 4\n3 1\n", Options{}},
		{"i.txt", "", Options{}},
		{"j.wel", "1 2 0.5\n1 2 0.25\n3 2 1\n2 2 4\n2 2 3\n2 1 0.5\n", Options{}},
		{"k.wel", "1 2 0.5\n1 2 0.25\n3 2 1\n2 2 4\n2 2 3\n1 2 0.5\n", Options{Duplicates: KeepDuplicates}},
		{"l.wel", "1 2 -1\n1 2 -2\n2 2 -3\n3 1 0\n", Options{AllowNegativeWeights: true, SelfLoops: DropSelfLoops}},
		{"m.el", "3 1\n2 1\n1 1\n1 1\n2 1\n", Options{Weighted: true, Seed: 5, Duplicates: KeepDuplicates}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			checkShares(t, writeFile(t, dir, tc.file, tc.content), tc.opts)
		})
	}
	t.Run("bel", func(t *testing.T) {
		g, _, err := Open("kron:7", Options{Seed: 2, Weighted: true})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteBinary(&buf, g, BinaryOptions{}); err != nil {
			t.Fatal(err)
		}
		checkShares(t, writeFile(t, dir, "k.bel", buf.String()), Options{})
	})
	for _, spec := range []string{"kron:9", "uniform:300:1000"} {
		for i, o := range []Options{{Seed: 1}, {Seed: 2, Undirected: true}, {Seed: 3, Weighted: true}} {
			t.Run(fmt.Sprintf("%s/%d", spec, i), func(t *testing.T) { checkShares(t, spec, o) })
		}
	}
}

// A text edge list's share is the same whether its later passes read the
// edges kept from the first one (ids of 32 and 64 bits, weights, gzip),
// parse the text again, or find that the edges overflow the budget
// partway.
func TestShareKeptEdges(t *testing.T) {
	dir := t.TempDir()
	var big strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&big, "%d %d %d.%d\n", 1<<40+i%97, i%89, i%7, i%10)
	}
	for _, tc := range []struct {
		file, content string
		opts          Options
	}{
		{"a.txt", "# c\n10 30\n30\t10\n10 20\n7 7\n", Options{}},
		{"b.txt.gz", "1 2\n2 3\n3 1\n1 3\n", Options{Undirected: true}},
		{"c.el", "0 2\n1 0\n2 2\n", Options{}},
		{"d.txt", "4294967296 10\n10 4294967297\n18446744073709551615 10\n", Options{}},
		{"e.wel", "1 2 0.5\n2 1 3\n1 2 0.25\n4 4 1\n", Options{}},
		{"f.wel", big.String(), Options{Duplicates: KeepDuplicates}},
	} {
		p := writeFile(t, dir, tc.file, tc.content)
		for _, keep := range []int64{0, -1, 16, 1 << 12} {
			t.Run(fmt.Sprintf("%s/keep=%d", tc.file, keep), func(t *testing.T) {
				o := tc.opts
				o.KeepBytes = keep
				checkShares(t, p, o)
			})
		}
	}
}

// Every Graphalytics dataset, as each kernel reads it.
func TestShareGraphalytics(t *testing.T) {
	for _, ds := range csrtest.GraphalyticsDatasets(t) {
		p := filepath.Join(csrtest.GraphalyticsDir(t, ds), ds+".properties")
		// The later passes from the edges the first one kept, from the
		// files (none kept), and from the files after a budget the edges
		// overflow partway.
		for i, o := range []Options{{}, {Undirected: true}, {Weighted: true}, {KeepBytes: -1}, {KeepBytes: 64, Weighted: true}} {
			t.Run(fmt.Sprintf("%s/%d", ds, i), func(t *testing.T) { checkShares(t, p, o) })
		}
	}
	t.Run("snap", func(t *testing.T) {
		checkShares(t, filepath.Join(csrtest.DataDir(t), "snap", "email-Eu-core.txt.gz"), Options{Undirected: true})
	})
	t.Run("snap-directed", func(t *testing.T) {
		checkShares(t, filepath.Join(csrtest.DataDir(t), "snap", "p2p-Gnutella08.txt.gz"), Options{Weighted: true})
	})
}

func TestShareBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ file, content, want string }{
		{"a.el", "1 2\n3 x\n", "a.el:2"},
		{"b.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n", "b.mtx:3"},
	} {
		_, _, err := OpenShare(writeFile(t, dir, tc.file, tc.content), Options{}, func([]uint64) (uint32, uint32, error) { return 0, 0, nil })
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%s: got %v, want an error naming %s", tc.file, err, tc.want)
		}
	}
	_, _, err := OpenShare("kron:4", Options{}, func([]uint64) (uint32, uint32, error) { return 3, 99, nil })
	if err == nil {
		t.Error("a share past the last vertex was accepted")
	}
}

// symmetrisedBel writes a symmetrised, weighted Kronecker graph into dir
// as a directed .bel file, as gapbs writes them: every edge listed in both
// directions with the same weight.
func symmetrisedBel(t *testing.T, dir, name string, seed uint64) string {
	t.Helper()
	sym, _, err := Open("kron:8", Options{Seed: seed, Undirected: true, Weighted: true})
	if err != nil {
		t.Fatal(err)
	}
	sym.Directed = true
	var buf bytes.Buffer
	if err := WriteBinary(&buf, sym, BinaryOptions{}); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, buf.String())
}

// A share is symmetric when its graph is undirected or its in-rows equal
// its out-rows, as for a directed input listing every edge both ways with
// the same weight; every share of such a graph is, and it is exactly when
// the whole graph equals its transpose.
func TestShareSymmetric(t *testing.T) {
	dir := t.TempDir()
	symBel := symmetrisedBel(t, dir, "sym.bel", 4)
	for _, tc := range []struct {
		name, spec string
		opts       Options
		want       bool
	}{
		{"symmetrised-bel", symBel, Options{}, true},
		{"both-ways", writeFile(t, dir, "a.el", "1 2\n2 1\n2 3\n3 2\n3 3\n"), Options{}, true},
		{"both-ways-weighted", writeFile(t, dir, "b.wel", "1 2 0.5\n2 1 0.5\n1 2 0.25\n2 1 0.25\n"), Options{}, true},
		{"both-ways-synthetic", writeFile(t, dir, "c.el", "1 2\n2 1\n"), Options{Weighted: true, Seed: 2}, true},
		{"other-weight", writeFile(t, dir, "d.wel", "1 2 0.5\n2 1 0.7\n"), Options{}, false},
		{"one-way", writeFile(t, dir, "e.el", "1 2\n2 3\n3 2\n"), Options{}, false},
		{"one-way-undirected", writeFile(t, dir, "f.el", "1 2\n2 3\n"), Options{Undirected: true}, true},
		{"kron-directed", "kron:8", Options{Seed: 4}, false},
		{"kron-undirected", "kron:8", Options{Seed: 4, Undirected: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, _, err := Open(tc.spec, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tr := full.Transpose()
			if !full.Directed {
				tr = full
			}
			if same := slices.Equal(full.Offsets, tr.Offsets) && slices.Equal(full.Dst, tr.Dst) && slices.Equal(full.Weights, tr.Weights); same != tc.want {
				t.Fatalf("the test case is wrong: the graph equals its transpose: %v", same)
			}
			n := full.N
			for _, parts := range []int{1, 3} {
				for p := range parts {
					cut := func([]uint64) (uint32, uint32, error) {
						return uint32(uint64(n) * uint64(p) / uint64(parts)), uint32(uint64(n) * uint64(p+1) / uint64(parts)), nil
					}
					sh, _, err := OpenShareWith(tc.spec, tc.opts, ShareOptions{In: true}, cut)
					if err != nil {
						t.Fatal(err)
					}
					if got := sh.Symmetric(); got != tc.want && (parts == 1 || tc.want) {
						t.Errorf("share [%d,%d): symmetric %v, want %v", sh.Lo, sh.Hi, got, tc.want)
					}
					plain, _, err := OpenShare(tc.spec, tc.opts, cut)
					if err != nil {
						t.Fatal(err)
					}
					if got := plain.Symmetric(); got != !full.Directed {
						t.Errorf("share [%d,%d) without in-edges: symmetric %v, want %v (only undirected graphs are known to be)", plain.Lo, plain.Hi, got, !full.Directed)
					}
				}
			}
		})
	}
}

// With In, a directed share whose vertices have as many in- as out-edges
// in the input is fingerprinted: if it is symmetric, In is its Graph (no
// in-rows built), else a third pass builds them; one whose degrees differ
// builds them in the second pass. Either way In and Symmetric are exact
// (checkIn).
func TestShareFingerprint(t *testing.T) {
	dir := t.TempDir()
	type path int
	const (
		fingerprinted path = iota // degrees agree, fingerprints agree: In == Graph
		thirdPass                 // degrees agree, fingerprints differ
		secondPass                // degrees differ
	)
	for _, tc := range []struct {
		name, file, content string
		opts                Options
		lo, hi              uint32 // the share; hi 0: to the last vertex
		symmetric           bool
		path                path
	}{
		{"both-ways", "a.el", "1 2\n2 1\n2 3\n3 2\n", Options{}, 0, 0, true, fingerprinted},
		{"duplicates", "b.el", "1 2\n1 2\n2 1\n2 1\n3 3\n2 3\n3 2\n", Options{}, 0, 0, true, fingerprinted},
		{"duplicates-kept", "b.el", "1 2\n1 2\n2 1\n2 1\n3 3\n2 3\n3 2\n", Options{Duplicates: KeepDuplicates}, 0, 0, true, fingerprinted},
		{"weighted-duplicates", "c.wel", "1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n2 2 1\n", Options{}, 0, 0, true, fingerprinted},
		{"weighted-duplicates-kept", "c.wel", "1 2 0.5\n2 1 0.25\n1 2 0.25\n2 1 0.5\n2 2 1\n", Options{Duplicates: KeepDuplicates}, 0, 0, true, fingerprinted},
		{"self-loops", "d.wel", "1 1 0.5\n1 2 0.25\n2 1 0.25\n1 1 0.75\n", Options{}, 0, 0, true, fingerprinted},
		{"self-loops-dropped", "d.wel", "1 1 0.5\n1 2 0.25\n2 1 0.25\n1 1 0.75\n", Options{SelfLoops: DropSelfLoops}, 0, 0, true, fingerprinted},
		{"weights-dropped", "e.wel", "1 2 0.5\n2 1 0.7\n", Options{Unweighted: true}, 0, 0, true, fingerprinted},
		{"synthetic-weights", "f.el", "1 2\n2 1\n3 1\n1 3\n", Options{Weighted: true, Seed: 2}, 0, 0, true, fingerprinted},
		{"symmetrised-bel", symmetrisedBel(t, dir, "g.bel", 5), "", Options{}, 40, 200, true, fingerprinted},
		// Only the share's degrees count: vertex 1 (dense 0) is not
		// balanced, the share of vertex 2 is, and symmetric.
		{"share-of-asymmetric", "h.el", "1 2\n2 1\n3 1\n", Options{}, 1, 2, true, fingerprinted},
		{"3-cycle", "i.el", "1 2\n2 3\n3 1\n", Options{}, 0, 0, false, thirdPass},
		{"3-cycle-weighted", "i.wel", "1 2 1\n2 3 1\n3 1 1\n1 3 2\n3 2 2\n2 1 2\n", Options{}, 0, 0, false, thirdPass},
		{"weights-swapped", "j.wel", "1 2 0.5\n2 1 0.25\n1 3 0.25\n3 1 0.5\n", Options{}, 0, 0, false, thirdPass},
		{"other-weight", "e.wel", "1 2 0.5\n2 1 0.7\n", Options{}, 0, 0, false, thirdPass},
		{"2-cycles-crossed", "k.el", "1 2\n2 1\n3 4\n4 3\n1 3\n3 2\n2 4\n4 1\n", Options{}, 0, 0, false, thirdPass},
		{"cycle-in-share", "k.el", "1 2\n2 1\n3 4\n4 3\n1 3\n3 2\n2 4\n4 1\n", Options{}, 0, 2, false, thirdPass},
		// Vertex 1 (dense 0) lists 1→2 twice and 3→1 twice: its degrees
		// agree, its edges as listed do not, its de-duplicated rows do.
		{"duplicates-uneven", "l.el", "1 2\n1 2\n1 3\n2 1\n3 1\n3 1\n", Options{}, 0, 1, true, thirdPass},
		{"duplicates-uneven-kept", "l.el", "1 2\n1 2\n1 3\n2 1\n3 1\n3 1\n", Options{Duplicates: KeepDuplicates}, 0, 1, false, thirdPass},
		{"one-way", "m.el", "1 2\n2 3\n3 2\n", Options{}, 0, 0, false, secondPass},
		{"duplicates-one-way", "n.el", "1 2\n1 2\n2 1\n", Options{}, 0, 0, true, secondPass},
		{"kron", "kron:8", "", Options{Seed: 4}, 0, 0, false, secondPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.file
			if tc.content != "" {
				spec = writeFile(t, dir, tc.file, tc.content)
			}
			full, _, err := Open(spec, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := tc.lo, tc.hi
			if hi == 0 {
				hi = full.N
			}
			// The path the degrees choose, as listed: parallel edges kept.
			raw := tc.opts
			raw.Duplicates = KeepDuplicates
			rg, _, err := Open(spec, raw)
			if err != nil {
				t.Fatal(err)
			}
			rt := rg.Transpose()
			agree := true
			for v := lo; v < hi; v++ {
				agree = agree && len(rg.Neighbors(v)) == len(rt.Neighbors(v))
			}
			if agree != (tc.path != secondPass) {
				t.Fatalf("the test case is wrong: the share's in- and out-degrees agree: %v", agree)
			}
			sh, _, err := OpenShareWith(spec, tc.opts, ShareOptions{In: true}, func([]uint64) (uint32, uint32, error) { return lo, hi, nil })
			if err != nil {
				t.Fatal(err)
			}
			checkIn(t, sh, full, full.Transpose())
			if sh.Symmetric() != tc.symmetric {
				t.Errorf("symmetric %v, want %v", sh.Symmetric(), tc.symmetric)
			}
			if got := sh.In == sh.Graph; got != (tc.path == fingerprinted) {
				t.Errorf("in-rows taken from the out-rows: %v, want %v", got, tc.path == fingerprinted)
			}
		})
	}
}

// sameIDs says whether g names its vertices as full does: the table of
// its external ids, and each vertex's both ways (a share holds its ids as
// a map, not a table, when they are a bitmap's).
func sameIDs(g, full *Graph) bool {
	if g.N != full.N || !slices.Equal(g.ExternalIDs(), full.IDs) {
		return false
	}
	for v := range g.N {
		x := full.ExternalID(v)
		if d, ok := g.DenseID(x); g.ExternalID(v) != x || !ok || d != v {
			return false
		}
	}
	return true
}

// sameShareIDs says whether sh names its vertices as full does, asked
// through the share (a staged share reads them from the staging memory):
// the table, vertices both ways (about a hundred), and an id that is not
// a vertex.
func sameShareIDs(sh *Share, full *Graph) bool {
	ids, err := sh.ExternalIDs()
	if err != nil || !slices.Equal(ids, full.ExternalIDs()) {
		return false
	}
	most := uint64(0)
	if full.N > 0 {
		most = full.ExternalID(full.N - 1)
	}
	step := max(1, full.N/97) // a staged share reads a slice of the ids per lookup
	for v := uint32(0); v < full.N; v += step {
		x := full.ExternalID(v)
		got, err := sh.ExternalID(v)
		d, ok, derr := sh.DenseID(x)
		if err != nil || derr != nil || got != x || !ok || d != v {
			return false
		}
	}
	if most < math.MaxUint64 {
		if _, ok, err := sh.DenseID(most + 1); ok || err != nil {
			return false
		}
	}
	return true
}
