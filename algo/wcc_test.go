package algo

import (
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

// wccGraph: directed, weak components {20,21,22} (20→21, 22→21),
// {23,24} (23⇄24), {25}, {26,27} (26→27). Dense ids 0..7.
func wccGraph(t testing.TB) *csr.Graph {
	return makeGraph(t, 8, []uint64{20, 21, 22, 23, 24, 25, 26, 27}, true, false, []edge{
		{0, 1, 0}, {2, 1, 0}, {3, 4, 0}, {4, 3, 0}, {6, 7, 0},
	})
}

func TestReferenceWCC(t *testing.T) {
	tests := []struct {
		name string
		g    *csr.Graph
		want []uint64
	}{
		{"directed weak", wccGraph(t), []uint64{20, 20, 20, 23, 23, 25, 26, 26}},
		{"edge into smaller id", makeGraph(t, 3, []uint64{9, 5, 7}, true, false, []edge{{0, 1, 0}, {2, 0, 0}}), []uint64{5, 5, 5}},
		{"undirected", makeGraph(t, 4, nil, false, false, []edge{{3, 1, 0}}), []uint64{0, 1, 2, 1}},
		{"empty", makeGraph(t, 0, nil, true, false, nil), []uint64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ReferenceWCC(tc.g)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ReferenceWCC = %v, want %v", got, tc.want)
			}
			if err := VerifyWCC(tc.g, got); err != nil {
				t.Fatalf("VerifyWCC rejects the reference: %v", err)
			}
		})
	}
}

func TestVerifyWCC(t *testing.T) {
	g := wccGraph(t)
	correct := []uint64{20, 20, 20, 23, 23, 25, 26, 26}
	verify := func(l []uint64) error { return VerifyWCC(g, l) }
	checkCorruptions(t, correct, verify, []corruption[uint64]{
		{"split against edge direction", func(l []uint64) { l[2] = 99 }, "vertex 21 has label 20 but its neighbour 22 has label 99"},
		{"split along edge", func(l []uint64) { l[7] = 27 }, "vertex 27 has label 27 but its neighbour 26 has label 26"},
		{"merge isolated", func(l []uint64) { l[5] = 20 }, "vertices 20 and 25 share label 20 but are in different weak components: want 4 distinct labels"},
		{"merge two components", func(l []uint64) { l[6], l[7] = 23, 23 }, "vertices 23 and 26 share label 23"},
		{"all one label", func(l []uint64) {
			for v := range l {
				l[v] = 1
			}
		}, "share label 1"},
	})
	// Label values are arbitrary.
	relabelled := []uint64{7, 7, 7, 0, 0, 1 << 63, 3, 3}
	if err := verify(relabelled); err != nil {
		t.Errorf("relabelled result rejected: %v", err)
	}
	t.Run("bad arguments", func(t *testing.T) {
		if err := VerifyWCC(g, correct[:3]); err == nil {
			t.Error("short result accepted")
		}
		if err := VerifyWCC(&csr.Graph{N: 1}, []uint64{0}); err == nil {
			t.Error("graph without offsets accepted")
		}
	})
}

func TestCheckWCCSample(t *testing.T) {
	g := wccGraph(t)
	labels := ReferenceWCC(g)
	for v := range labels {
		labels[v] -= 20 // the engine's labels are dense ids
	}
	checkSampleCorruptions(t, func() *Sample { return sampleFrom(g, labels, labels, true) }, CheckWCCSample, []sampleCorruption{
		{"split along an edge", "vertex 21 has label 1 but its neighbour", func(s *Sample) { s.Final[1] = 1 }},
		{"above its own id", "vertex 25 has label 6, above", func(s *Sample) { s.Final[5] = 6 }},
		{"a neighbour's label off", "its neighbour (dense id 4) has label 0", func(s *Sample) { s.Values[s.Off[3]] = 0 }},
	})
}
