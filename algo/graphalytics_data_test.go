package algo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/csr/csrtest"
)

// TestGraphalyticsDatasets runs each reference implementation on every
// Graphalytics dataset in the shared data that has the matching reference
// output, and validates the result with the Graphalytics rules (through
// NewOutput, ReadOutput and Validate, and WriteOutput and back). It also
// checks that each verifier accepts the reference result and, for BFS, WCC
// and SSSP, the output Graphalytics itself published, so the verifiers agree
// with an implementation they share nothing with.
func TestGraphalyticsDatasets(t *testing.T) {
	root := filepath.Join(csrtest.DataDir(t), "graphalytics")
	checked := map[Kind]int{}
	for _, name := range csrtest.GraphalyticsDatasets(t) {
		dir := filepath.Join(root, name)
		var g *csr.Graph
		var meta *csr.Meta
		for _, kind := range []Kind{KindBFS, KindPR, KindWCC, KindSSSP, KindCDLP, KindLCC} {
			path := filepath.Join(dir, name+"-"+kind.String())
			if _, err := os.Stat(path); err != nil {
				continue
			}
			checked[kind]++
			t.Run(name+"/"+kind.String(), func(t *testing.T) {
				if g == nil {
					var err error
					if g, meta, err = csr.Open(filepath.Join(dir, name+".properties"), csr.Options{Workers: 1}); err != nil {
						t.Fatal(err)
					}
				}
				want, err := ReadOutput(path, kind)
				if err != nil {
					t.Fatal(err)
				}
				switch kind {
				case KindBFS:
					if !meta.HasBFSSource {
						t.Fatalf("%s has no BFS source", name)
					}
					src := denseID(t, g, meta.BFSSource)
					got := ReferenceBFS(g, src)
					validate(t, kind, want, g, got)
					if err := VerifyBFS(g, src, got); err != nil {
						t.Errorf("VerifyBFS rejects the reference: %v", err)
					}
					if err := VerifyBFS(g, src, denseValues(t, g, want.IDs, want.Ints)); err != nil {
						t.Errorf("VerifyBFS rejects the Graphalytics output: %v", err)
					}
				case KindPR:
					if !meta.HasPR {
						t.Fatalf("%s has no PageRank parameters", name)
					}
					got := ReferencePageRank(g, meta.PRIterations, meta.PRDamping)
					validate(t, kind, want, g, got)
					if err := VerifyPageRank(g, meta.PRIterations, meta.PRDamping, got); err != nil {
						t.Errorf("VerifyPageRank rejects the reference: %v", err)
					}
					// Not VerifyPageRank on the published output: the
					// test-pr-* outputs differ from an exact float64
					// evaluation of the definition by up to 1.3e-6 relative
					// (the example-* ones agree to 2e-16), well inside the
					// Graphalytics 1e-4 but outside PageRankTolerance.
				case KindWCC:
					got := ReferenceWCC(g)
					validate(t, kind, want, g, got)
					if err := VerifyWCC(g, got); err != nil {
						t.Errorf("VerifyWCC rejects the reference: %v", err)
					}
					labels := denseValues(t, g, want.IDs, want.Ints)
					ulabels := make([]uint64, len(labels))
					for i, l := range labels {
						ulabels[i] = uint64(l)
					}
					if err := VerifyWCC(g, ulabels); err != nil {
						t.Errorf("VerifyWCC rejects the Graphalytics output: %v", err)
					}
				case KindCDLP:
					if !meta.HasCDLP {
						t.Fatalf("%s has no CDLP parameters", name)
					}
					// CDLP reads the graph symmetrised with both
					// directions of a pair joined both ways kept.
					sym, _, err := csr.Open(filepath.Join(dir, name+".properties"), csr.Options{Workers: 1, Undirected: true, Duplicates: csr.KeepDuplicates})
					if err != nil {
						t.Fatal(err)
					}
					got := ReferenceCDLP(sym, meta.CDLPIterations)
					ext := make([]uint64, len(got))
					for v, l := range got {
						ext[v] = sym.ExternalID(uint32(l))
					}
					validate(t, kind, want, sym, ext)
					if err := VerifyCDLP(sym, meta.CDLPIterations, got); err != nil {
						t.Errorf("VerifyCDLP rejects the reference: %v", err)
					}
					bad := append([]uint64(nil), got...)
					bad[len(bad)-1] = (bad[len(bad)-1] + 1) % uint64(len(bad))
					if err := VerifyCDLP(sym, meta.CDLPIterations, bad); err == nil {
						t.Errorf("VerifyCDLP accepts a result with one label changed")
					}
				case KindLCC:
					got := ReferenceLCC(g)
					validate(t, kind, want, g, got)
					if err := VerifyLCC(g, got); err != nil {
						t.Errorf("VerifyLCC rejects the reference: %v", err)
					}
					// Not VerifyLCC on the published output: the test-lcc-*
					// values have 12 digits, outside LCCTolerance.
					bad := append([]float64(nil), got...)
					for v := range bad {
						if bad[v] > 0 {
							bad[v] *= 1 + 1e-6
							break
						}
					}
					if err := VerifyLCC(g, bad); err == nil {
						t.Errorf("VerifyLCC accepts a result with one coefficient off by 1e-6 relative")
					}
				case KindSSSP:
					if !meta.HasSSSPSource {
						t.Fatalf("%s has no SSSP source", name)
					}
					if g.Weights == nil {
						t.Fatalf("%s loaded without weights", name)
					}
					src := denseID(t, g, meta.SSSPSource)
					got := ReferenceSSSP(g, src)
					validate(t, kind, want, g, got)
					if err := VerifySSSP(g, src, got); err != nil {
						t.Errorf("VerifySSSP rejects the reference: %v", err)
					}
					if err := VerifySSSP(g, src, denseValues(t, g, want.IDs, want.Floats)); err != nil {
						t.Errorf("VerifySSSP rejects the Graphalytics output: %v", err)
					}
				}
			})
		}
	}
	for _, kind := range []Kind{KindBFS, KindPR, KindWCC, KindSSSP, KindCDLP, KindLCC} {
		if checked[kind] == 0 {
			t.Errorf("no Graphalytics dataset under %s has a %v output", root, kind)
		}
	}
}

// validate checks a reference result against the expected output with the
// Graphalytics rules, both directly and through a written output file.
func validate[T Value](t *testing.T, kind Kind, want *Output, g *csr.Graph, got []T) {
	t.Helper()
	out, err := NewOutput(kind, g, got)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(kind, want, out); err != nil {
		t.Error(err)
	}
	path := filepath.Join(t.TempDir(), "out")
	if err := WriteOutput(path, g, got); err != nil {
		t.Fatal(err)
	}
	back, err := ReadOutput(path, kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(kind, want, back); err != nil {
		t.Errorf("after writing and reading back: %v", err)
	}
}

func denseID(t *testing.T, g *csr.Graph, ext uint64) uint32 {
	t.Helper()
	v, ok := g.DenseID(ext)
	if !ok {
		t.Fatalf("vertex %d is not in the graph", ext)
	}
	return v
}

// denseValues arranges an output's values by dense id.
func denseValues[T any](t *testing.T, g *csr.Graph, ids []uint64, vals []T) []T {
	t.Helper()
	if len(ids) != int(g.N) {
		t.Fatalf("output has %d vertices, graph %d", len(ids), g.N)
	}
	out := make([]T, g.N)
	for i, id := range ids {
		out[denseID(t, g, id)] = vals[i]
	}
	return out
}

// TestVerifiersAcceptReferencesOnKronecker runs every verifier on its
// reference result over generated skewed graphs, directed and undirected,
// weighted: the verifiers must hold up beyond hand-made graphs.
func TestVerifiersAcceptReferencesOnKronecker(t *testing.T) {
	for _, undirected := range []bool{false, true} {
		g, _, err := csr.Open("kron:11", csr.Options{Weighted: true, Undirected: undirected, Workers: 1, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		var src uint32
		for g.Degree(src) == 0 {
			src++
		}
		if err := VerifyBFS(g, src, ReferenceBFS(g, src)); err != nil {
			t.Errorf("undirected=%v: %v", undirected, err)
		}
		if err := VerifySSSP(g, src, ReferenceSSSP(g, src)); err != nil {
			t.Errorf("undirected=%v: %v", undirected, err)
		}
		if err := VerifyWCC(g, ReferenceWCC(g)); err != nil {
			t.Errorf("undirected=%v: %v", undirected, err)
		}
		if err := VerifyPageRank(g, 20, 0.85, ReferencePageRank(g, 20, 0.85)); err != nil {
			t.Errorf("undirected=%v: %v", undirected, err)
		}
	}
}
