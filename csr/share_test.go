package csr

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/csr/csrtest"
)

// checkShares cuts the graph of spec into 1, 2 and 3 shares (plus an empty
// one) and checks that each share's rows are exactly the whole graph's, that
// every other row is empty, and that the shares add up to the whole.
func checkShares(t *testing.T, spec string, opts Options) {
	t.Helper()
	full, fmeta, err := Open(spec, opts)
	if err != nil {
		t.Fatal(err)
	}
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
			if g.N != n || !slices.Equal(g.IDs, full.IDs) || g.Directed != full.Directed || (g.Weights == nil) != (full.Weights == nil) {
				t.Fatalf("share [%d,%d): N %d ids %d directed %v weighted %v; whole graph %d %d %v %v", lo, hi,
					g.N, len(g.IDs), g.Directed, g.Weights != nil, n, len(full.IDs), full.Directed, full.Weights != nil)
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
					!slices.Equal(g.Weights[g.Offsets[v]:g.Offsets[v+1]], full.Weights[full.Offsets[v]:full.Offsets[v+1]]) {
					t.Fatalf("vertex %d: weights differ", v)
				}
			}
			total += g.NumEdges()
			loops += meta.DroppedSelfLoops
			dups += meta.DroppedDuplicates
			if meta.InputEdges != fmeta.InputEdges || meta.Name != fmeta.Name || meta.Format != fmeta.Format {
				t.Errorf("meta %+v, whole graph's %+v", meta, fmeta)
			}
		}
		if total != full.NumEdges() || dups != fmeta.DroppedDuplicates || loops != fmeta.DroppedSelfLoops {
			t.Fatalf("%d shares: %d edges, %d loops, %d duplicates dropped; whole graph %d, %d, %d", parts, total, loops, dups,
				full.NumEdges(), fmeta.DroppedSelfLoops, fmeta.DroppedDuplicates)
		}
	}
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

// Every Graphalytics dataset, as each kernel reads it.
func TestShareGraphalytics(t *testing.T) {
	for _, ds := range csrtest.GraphalyticsDatasets(t) {
		p := filepath.Join(csrtest.GraphalyticsDir(t, ds), ds+".properties")
		for i, o := range []Options{{}, {Undirected: true}, {Weighted: true}} {
			t.Run(fmt.Sprintf("%s/%d", ds, i), func(t *testing.T) { checkShares(t, p, o) })
		}
	}
	t.Run("snap", func(t *testing.T) {
		checkShares(t, filepath.Join(csrtest.DataDir(t), "snap", "email-Eu-core.txt.gz"), Options{Undirected: true})
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
