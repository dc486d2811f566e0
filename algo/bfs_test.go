package algo

import (
	"math"
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

// bfsGraph: 10→11, 10→12, 11→13, 12→13, 13→14, 14→11 reachable from 10;
// 15⇄16 and 15→10 not reachable; 17 isolated. Dense ids 0..7.
func bfsGraph(t testing.TB) *csr.Graph {
	return makeGraph(t, 8, []uint64{10, 11, 12, 13, 14, 15, 16, 17}, true, false, []edge{
		{0, 1, 0}, {0, 2, 0}, {1, 3, 0}, {2, 3, 0}, {3, 4, 0}, {4, 1, 0},
		{5, 6, 0}, {6, 5, 0}, {5, 0, 0},
	})
}

const inf64 = math.MaxInt64

func TestReferenceBFS(t *testing.T) {
	tests := []struct {
		name string
		g    *csr.Graph
		src  uint32
		want []int64
	}{
		{"directed", bfsGraph(t), 0, []int64{0, 1, 1, 2, 3, inf64, inf64, inf64}},
		{"directed from 15", bfsGraph(t), 5, []int64{1, 2, 2, 3, 4, 0, 1, inf64}},
		{"undirected path", makeGraph(t, 4, nil, false, false, []edge{{0, 1, 0}, {1, 2, 0}}), 2, []int64{2, 1, 0, inf64}},
		{"single vertex", makeGraph(t, 1, nil, true, false, nil), 0, []int64{0}},
		{"self loop", makeGraph(t, 2, nil, true, false, []edge{{0, 0, 0}, {0, 1, 0}}), 0, []int64{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ReferenceBFS(tc.g, tc.src)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ReferenceBFS = %v, want %v", got, tc.want)
			}
			if err := VerifyBFS(tc.g, tc.src, got); err != nil {
				t.Fatalf("VerifyBFS rejects the reference: %v", err)
			}
		})
	}
	if got := ReferenceBFS(bfsGraph(t), 8); got != nil {
		t.Errorf("ReferenceBFS with source out of range = %v, want nil", got)
	}
	if got := ReferenceBFS(nil, 0); got != nil {
		t.Errorf("ReferenceBFS(nil) = %v, want nil", got)
	}
}

func TestVerifyBFS(t *testing.T) {
	g := bfsGraph(t)
	correct := []int64{0, 1, 1, 2, 3, inf64, inf64, inf64}
	verify := func(d []int64) error { return VerifyBFS(g, 0, d) }
	checkCorruptions(t, correct, verify, []corruption[int64]{
		{"source not zero", func(d []int64) { d[0] = 1 }, "source vertex 10 has depth 1, want 0"},
		{"source unreachable", func(d []int64) { d[0] = inf64 }, "source vertex 10"},
		{"second zero", func(d []int64) { d[3] = 0 }, "vertex 13 has depth 0"},
		{"negative", func(d []int64) { d[2] = -1 }, "vertex 12 has depth -1"},
		{"too deep", func(d []int64) { d[4] = 4 }, "vertex 14 has depth 4, want at most 3"},
		{"too shallow", func(d []int64) { d[4] = 2 }, "vertex 14 has depth 2, but no in-neighbour has depth 1"},
		{"reachable marked unreachable", func(d []int64) { d[4] = inf64 }, "vertex 14 is marked unreachable, want depth at most 3"},
		{"unreachable with in-edges reached", func(d []int64) { d[5], d[6] = 1, 2 }, "vertex 15 has depth 1, but no in-neighbour has depth 0"},
		{"unreachable cycle reached", func(d []int64) { d[5], d[6] = 3, 4 }, "vertex 15 has depth 3"},
		{"isolated reached", func(d []int64) { d[7] = 2 }, "vertex 17 has depth 2"},
		{"subtree shifted", func(d []int64) { d[3], d[4] = 3, 4 }, "vertex 13 has depth 3, want at most 2"},
		{"all unreachable but source", func(d []int64) {
			for v := 1; v < len(d); v++ {
				d[v] = inf64
			}
		}, "vertex 11 is marked unreachable"},
	})

	t.Run("bad arguments", func(t *testing.T) {
		for name, err := range map[string]error{
			"short":     VerifyBFS(g, 0, correct[:7]),
			"source":    VerifyBFS(g, 8, correct),
			"nil graph": VerifyBFS(nil, 0, correct),
			"malformed": VerifyBFS(&csr.Graph{N: 2, Offsets: []uint64{0, 1, 1}, Dst: []uint32{5}}, 0, []int64{0, inf64}),
		} {
			if err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	})
}

func TestCheckBFSSample(t *testing.T) {
	g := bfsGraph(t)
	depth := ReferenceBFS(g, 0)
	words := make([]uint64, len(depth))
	for v, d := range depth {
		words[v] = uint64(d)
	}
	checkSampleCorruptions(t, func() *Sample { return sampleFrom(g, words, words, false) },
		func(s *Sample) (string, error) { return CheckBFSSample([]uint32{0}, s) }, []sampleCorruption{
			{"source not 0", "vertex 10 has depth 1", func(s *Sample) { s.Final[0] = 1 }},
			{"one too deep", "vertex 13 has depth 3, want 2", func(s *Sample) { s.Final[3] = 3 }},
			{"reached, unreachable", "vertex 15 has depth 4", func(s *Sample) { s.Final[5] = 4 }},
			{"unreached, reachable", "want 1", func(s *Sample) { s.Final[2] = uint64(inf64) }},
			{"a neighbour's depth off", "vertex 14 has depth 3, want 4", func(s *Sample) { s.Values[s.Off[4]] = 3 }},
		})
}
