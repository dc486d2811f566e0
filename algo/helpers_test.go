package algo

import (
	"slices"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
)

// edge is a test edge between dense ids.
type edge struct {
	u, v uint32
	w    float64
}

// makeGraph builds a small csr.Graph by hand: n vertices with external ids
// ids (nil for identity), the given edges (both directions stored when
// undirected), destinations sorted per vertex, weights kept when weighted.
func makeGraph(t testing.TB, n uint32, ids []uint64, directed, weighted bool, edges []edge) *csr.Graph {
	t.Helper()
	adj := make([][]edge, n)
	for _, e := range edges {
		if e.u >= n || e.v >= n {
			t.Fatalf("makeGraph: edge %d→%d outside %d vertices", e.u, e.v, n)
		}
		adj[e.u] = append(adj[e.u], e)
		if !directed && e.u != e.v {
			adj[e.v] = append(adj[e.v], edge{e.v, e.u, e.w})
		}
	}
	g := &csr.Graph{N: n, Offsets: make([]uint64, n+1), IDs: ids, Directed: directed}
	for u := range adj {
		slices.SortFunc(adj[u], func(a, b edge) int { return int(a.v) - int(b.v) })
		for _, e := range adj[u] {
			g.Dst = append(g.Dst, e.v)
			if weighted {
				g.Weights = append(g.Weights, e.w)
			}
		}
		g.Offsets[u+1] = uint64(len(g.Dst))
	}
	if weighted && g.Weights == nil {
		g.Weights = []float64{}
	}
	return g
}

// corruption is one deliberate corruption of a correct result and a
// fragment the verifier's error must contain.
type corruption[T any] struct {
	name   string
	mutate func(r []T)
	want   string
}

// checkCorruptions runs verify on the correct result (which must pass) and
// on each corruption of it (each must fail with an "algo: " error containing
// the corruption's fragment).
func checkCorruptions[T any](t *testing.T, correct []T, verify func([]T) error, cases []corruption[T]) {
	t.Helper()
	if err := verify(slices.Clone(correct)); err != nil {
		t.Fatalf("correct result rejected: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := slices.Clone(correct)
			c.mutate(r)
			err := verify(r)
			if err == nil {
				t.Fatalf("corruption not caught")
			}
			if !strings.HasPrefix(err.Error(), "algo: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want prefix \"algo: \" and %q", err, c.want)
			}
		})
	}
}

// sampleCorruption is one deliberate corruption of a true sample and a
// fragment the sampled check's error must contain.
type sampleCorruption struct {
	name, want string
	bend       func(s *Sample)
}

// checkSampleCorruptions runs check on a fresh true sample (which must
// pass) and on each corruption of one.
func checkSampleCorruptions(t *testing.T, fresh func() *Sample, check func(*Sample) (string, error), cases []sampleCorruption) {
	t.Helper()
	if _, err := check(fresh()); err != nil {
		t.Fatalf("a true sample rejected: %v", err)
	}
	for _, c := range cases {
		s := fresh()
		c.bend(s)
		if _, err := check(s); err == nil || !strings.HasPrefix(err.Error(), "algo: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// denseIndex maps the external ids of g to dense ids.
func denseIndex(g *csr.Graph) map[uint64]uint32 {
	m := make(map[uint64]uint32, g.N)
	for v := uint32(0); v < g.N; v++ {
		m[g.ExternalID(v)] = v
	}
	return m
}

// contains reports whether err's message contains s.
func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }
