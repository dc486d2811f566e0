package algo

import (
	"math"
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

// prGraph: 0→1, 0→2, 1→2; 2 is dangling. External ids 30, 31, 32.
func prGraph(t testing.TB) *csr.Graph {
	return makeGraph(t, 3, []uint64{30, 31, 32}, true, false, []edge{{0, 1, 0}, {0, 2, 0}, {1, 2, 0}})
}

// prRing: a directed 5-cycle with a chord and a dangling sink, so ranks keep
// changing for many iterations.
func prRing(t testing.TB) *csr.Graph {
	return makeGraph(t, 6, nil, true, false, []edge{
		{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 4, 0}, {4, 0, 0}, {0, 2, 0}, {3, 5, 0},
	})
}

func TestReferencePageRank(t *testing.T) {
	tests := []struct {
		name  string
		g     *csr.Graph
		iters int
		d     float64
		want  []float64
	}{
		// PR_1 by hand, in 1/180ths: (1-d)/N = 9/180, d·D_0/N = 17/180.
		{"one iteration", prGraph(t), 1, 0.85, []float64{26.0 / 180, 51.5 / 180, 102.5 / 180}},
		{"zero iterations", prGraph(t), 0, 0.85, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{"no damping", prGraph(t), 3, 0, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{"undirected star", makeGraph(t, 3, nil, false, false, []edge{{0, 1, 0}, {0, 2, 0}}), 1, 0.85,
			// centre: 0.05 + 0.85·(2/3); leaves: 0.05 + 0.85·(1/6).
			[]float64{0.05 + 0.85*2.0/3, 0.05 + 0.85/6, 0.05 + 0.85/6}},
		{"all dangling", makeGraph(t, 4, nil, true, false, nil), 5, 0.85, []float64{0.25, 0.25, 0.25, 0.25}},
		{"empty", makeGraph(t, 0, nil, true, false, nil), 5, 0.85, []float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ReferencePageRank(tc.g, tc.iters, tc.d)
			if len(got) != len(tc.want) {
				t.Fatalf("ReferencePageRank = %v, want %v", got, tc.want)
			}
			for v := range got {
				if math.Abs(got[v]-tc.want[v]) > 1e-15 {
					t.Fatalf("ReferencePageRank = %v, want %v", got, tc.want)
				}
			}
			if err := VerifyPageRank(tc.g, tc.iters, tc.d, got); err != nil {
				t.Fatalf("VerifyPageRank rejects the reference: %v", err)
			}
		})
	}
}

// buggyPageRank is PageRank with a switchable mistake, to show the verifier
// catches each semantic error an engine could make.
func buggyPageRank(g *csr.Graph, iterations int, d float64, dropDangling, unnormalisedTeleport bool) []float64 {
	n := float64(g.N)
	r := make([]float64, g.N)
	for v := range r {
		r[v] = 1 / n
	}
	for it := 0; it < iterations; it++ {
		next := make([]float64, g.N)
		dangling := 0.0
		for u := uint32(0); u < g.N; u++ {
			if g.Degree(u) == 0 {
				dangling += r[u]
			}
			for _, v := range g.Neighbors(u) {
				next[v] += r[u] / float64(g.Degree(u))
			}
		}
		if dropDangling {
			dangling = 0
		}
		base := (1 - d) / n
		if unnormalisedTeleport {
			base = 1 - d
		}
		for v := range next {
			next[v] = base + d*(next[v]+dangling/n)
		}
		r = next
	}
	return r
}

func TestVerifyPageRank(t *testing.T) {
	g := prRing(t)
	const iters, d = 10, 0.85
	correct := ReferencePageRank(g, iters, d)
	verify := func(r []float64) error { return VerifyPageRank(g, iters, d, r) }
	checkCorruptions(t, correct, verify, []corruption[float64]{
		{"one rank off by 1e-6", func(r []float64) { r[3] *= 1 + 1e-6 }, "vertex 3 has rank"},
		{"two ranks swapped", func(r []float64) { r[1], r[2] = r[2], r[1] }, "vertex 1 has rank"},
		{"all scaled", func(r []float64) {
			for v := range r {
				r[v] *= 1.01
			}
		}, "vertex 0 has rank"},
		{"NaN", func(r []float64) { r[4] = math.NaN() }, "vertex 4 has rank NaN"},
		{"negative", func(r []float64) { r[0] = -r[0] }, "vertex 0 has rank -"},
		{"infinite", func(r []float64) { r[5] = math.Inf(1) }, "vertex 5 has rank +Inf"},
		{"one iteration too few", func(r []float64) { copy(r, ReferencePageRank(g, iters-1, d)) }, "want"},
		{"one iteration too many", func(r []float64) { copy(r, ReferencePageRank(g, iters+1, d)) }, "want"},
		{"wrong damping", func(r []float64) { copy(r, ReferencePageRank(g, iters, 0.8)) }, "want"},
		{"dangling mass dropped", func(r []float64) { copy(r, buggyPageRank(g, iters, d, true, false)) }, "want"},
		{"teleport not divided by N", func(r []float64) { copy(r, buggyPageRank(g, iters, d, false, true)) }, "want"},
	})
	// The buggy implementation with both switches off is PageRank; a
	// different summation order must pass.
	if err := verify(buggyPageRank(g, iters, d, false, false)); err != nil {
		t.Errorf("reordered PageRank rejected: %v", err)
	}
	near := slices.Clone(correct)
	near[2] *= 1 + 1e-12
	if err := verify(near); err != nil {
		t.Errorf("rounding difference rejected: %v", err)
	}
	t.Run("bad arguments", func(t *testing.T) {
		for name, err := range map[string]error{
			"short":               VerifyPageRank(g, iters, d, correct[:5]),
			"negative iterations": VerifyPageRank(g, -1, d, correct),
			"damping above 1":     VerifyPageRank(g, iters, 1.5, correct),
			"damping NaN":         VerifyPageRank(g, iters, math.NaN(), correct),
			"nil graph":           VerifyPageRank(nil, iters, d, correct),
		} {
			if err == nil {
				t.Errorf("%s: accepted", name)
			}
		}
	})
}

// prSample is the sample of a PageRank run of iters iterations on g that
// reads every vertex: final ranks PR_iters, and the in-neighbours'
// PR_{iters-1}.
func prSample(g *csr.Graph, iters int, d float64) *Sample {
	final, prev := ReferencePageRank(g, iters, d), ReferencePageRank(g, iters-1, d)
	words := func(r []float64) []uint64 {
		w := make([]uint64, len(r))
		for i, x := range r {
			w[i] = math.Float64bits(x)
		}
		return w
	}
	s := sampleFrom(g, words(final), words(prev), false)
	for v := range g.N {
		s.Sum += final[v]
		if g.Degree(v) == 0 {
			s.Dangling += prev[v]
		}
	}
	return s
}

// sampleFrom is the sample of every vertex of g with final values final
// and, as the probe read them, the values prev of their in-neighbours
// (found by scanning every out-list; with both, their out-neighbours
// too, as on the symmetric graph a kernel reads).
func sampleFrom(g *csr.Graph, final, prev []uint64, both bool) *Sample {
	s := &Sample{N: g.N, Off: []int{0}}
	for v := range g.N {
		s.Vertices = append(s.Vertices, v)
		s.IDs = append(s.IDs, g.ExternalID(v))
		s.Final = append(s.Final, final[v])
		add := func(u uint32) {
			s.In = append(s.In, u)
			s.Values = append(s.Values, prev[u])
			s.Degrees = append(s.Degrees, uint32(g.Degree(u)))
		}
		for u := range g.N {
			for _, w := range g.Neighbors(u) {
				if w == v {
					add(u)
				}
			}
		}
		if both {
			for _, w := range g.Neighbors(v) {
				add(w)
			}
		}
		s.Off = append(s.Off, len(s.In))
	}
	return s
}

func TestCheckPageRankSample(t *testing.T) {
	g := prRing(t)
	const iters, d = 10, 0.85
	f := func(x uint64, by float64) uint64 { return math.Float64bits(math.Float64frombits(x) * by) }
	checkSampleCorruptions(t, func() *Sample { return prSample(g, iters, d) },
		func(s *Sample) (string, error) { return CheckPageRankSample(d, s) }, []sampleCorruption{
			{"a final rank off by 1e-6", "vertex 3 has rank", func(s *Sample) { s.Final[3] = f(s.Final[3], 1+1e-6) }},
			{"a neighbour's rank off", "vertex 1 has rank", func(s *Sample) { s.Values[s.Off[1]] = f(s.Values[s.Off[1]], 1.01) }},
			{"an in-edge missing", "vertex 2 has rank", func(s *Sample) { s.Degrees[s.Off[2]] *= 2 }},
			{"dangling mass dropped", "has rank", func(s *Sample) { s.Dangling = 0 }},
			{"one iteration too many", "has rank", func(s *Sample) { copy(s.Final, prSample(g, iters+1, d).Final) }},
			{"mass lost", "sum to", func(s *Sample) { s.Sum -= 1e-4 }},
			{"a neighbour of out-degree 0", "out-degree 0", func(s *Sample) { s.Degrees[0] = 0 }},
		})
}
