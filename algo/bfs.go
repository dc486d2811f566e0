// Breadth-first search, as defined by the LDBC Graphalytics benchmark
// specification (v1.0, arXiv:2011.15028), §2.3.1 "Breadth-First Search
// (BFS)", and DESIGN.md §7: the output of each vertex is its depth, the
// number of edges on a shortest path from the source following edge
// direction (the source has depth 0); a vertex the source cannot reach has
// depth 9223372036854775807 (math.MaxInt64).

package algo

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
)

// Unreachable is the BFS depth of a vertex the source does not reach
// (Graphalytics: 9223372036854775807).
const Unreachable = math.MaxInt64

// BFS is the vertex program: the source has depth 0; a vertex reached in
// iteration i from a vertex of depth i-1 takes depth i; every candidate of
// one iteration is the same depth, so it is a traversal (Spec.Traversal).
type BFS struct{ Source uint32 }

func (BFS) Spec() Spec {
	return Spec{Reduce: Min, Identity: math.MaxUint64, Traversal: true, Monotone: true}
}

func (b BFS) Init(v, _ uint32) (uint64, bool) {
	if v == b.Source {
		return 0, true
	}
	return Unreachable, false
}

func (BFS) Contribution(depth uint64, _ uint32) uint64 { return depth + 1 }

func (BFS) Update(acc, old uint64, _ *Iteration) uint64 { return min(acc, old) }

func bfsAlgorithm() Algorithm {
	return Algorithm{
		Name: "bfs", Kind: KindBFS, Source: true,
		SourceProperty: func(m *csr.Meta) (uint64, bool) { return m.BFSSource, m.HasBFSSource },
		Configure:      noParams,
		New:            func(p Params) Program { return Words[uint64](BFS{Source: p.Source}) },
		Verify: func(g *csr.Graph, p Params, vals []uint64) error {
			return VerifyBFS(g, p.Source, Ints(vals))
		},
		Sampled:  func(p Params, s *Sample) (string, error) { return CheckBFSSample(p.AllSources(), s) },
		SampleAt: atEnd,
	}
}

// CheckBFSSample checks a sample of a BFS run too large for VerifyBFS: a
// source has depth 0, and every other sampled vertex's depth is one more
// than the least of its in-neighbours' (unreachable when they all are),
// as the sample read them at the run's end. It returns what it checked.
func CheckBFSSample(sources []uint32, s *Sample) (string, error) {
	reached := 0
	for i, v := range s.Vertices {
		got := int64(s.Final[i])
		want := unreachable
		if slices.Contains(sources, v) {
			want = 0
		} else {
			for k := s.Off[i]; k < s.Off[i+1]; k++ {
				if d := int64(s.Values[k]); d != unreachable {
					want = min(want, d+1)
				}
			}
		}
		if got != want {
			return "", errors.Errorf("algo: BFS vertex %d has depth %d, want %d from its %d in-neighbours' depths", s.IDs[i], got, want, s.Off[i+1]-s.Off[i])
		}
		if got != unreachable {
			reached++
		}
	}
	return fmt.Sprintf("%d vertices (%d reached, %d in-edges): each one deeper than its shallowest in-neighbour on DM", len(s.Vertices), reached, len(s.In)), nil
}

// unreachable is the BFS depth of a vertex the source cannot reach,
// 9223372036854775807 in Graphalytics. The verifier keeps its own constant
// rather than sharing the engine's.
const unreachable int64 = math.MaxInt64

// ReferenceBFS returns the depth of every vertex from src with a plain
// queue-based breadth-first search. It returns nil if g is nil or malformed
// or src is not a vertex of g.
func ReferenceBFS(g *csr.Graph, src uint32) []int64 {
	if checkGraph(g) != nil || src >= g.N {
		return nil
	}
	depth := make([]int64, g.N)
	for v := range depth {
		depth[v] = unreachable
	}
	depth[src] = 0
	queue := []uint32{src}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range g.Neighbors(u) {
			if depth[v] == unreachable {
				depth[v] = depth[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return depth
}

// VerifyBFS checks depth, one entry per vertex of g, as the BFS result from
// src without recomputing it. It checks that
//
//   - the source has depth 0 and every other entry is either positive or
//     unreachable;
//   - no edge u→v from a reached u has depth[v] > depth[u]+1 (so every
//     vertex reachable from the source is reached, no deeper than its true
//     depth);
//   - every reached vertex other than the source has an in-neighbour at
//     depth-1 (so, following those parents down to depth 0, every reached
//     vertex is really reachable, no shallower than its true depth).
//
// Together these hold exactly for the true BFS depths. The error names the
// first offending vertex by external id.
func VerifyBFS(g *csr.Graph, src uint32, depth []int64) error {
	if err := checkGraph(g); err != nil {
		return err
	}
	if uint64(len(depth)) != uint64(g.N) {
		return errors.Errorf("algo: BFS result has %d entries, want one per vertex (%d)", len(depth), g.N)
	}
	if src >= g.N {
		return errors.Errorf("algo: BFS source %d is not a vertex (graph has %d)", src, g.N)
	}
	if depth[src] != 0 {
		return errors.Errorf("algo: BFS source vertex %d has depth %d, want 0", g.ExternalID(src), depth[src])
	}
	for v, d := range depth {
		if uint32(v) != src && d <= 0 {
			return errors.Errorf("algo: BFS vertex %d has depth %d, want a positive depth or %d (unreachable); only the source %d has depth 0",
				g.ExternalID(uint32(v)), d, unreachable, g.ExternalID(src))
		}
	}
	hasParent := make([]bool, g.N)
	hasParent[src] = true
	for u := uint32(0); u < g.N; u++ {
		du := depth[u]
		if du == unreachable {
			continue
		}
		for _, v := range g.Neighbors(u) {
			switch dv := depth[v]; {
			case dv == unreachable:
				return errors.Errorf("algo: BFS vertex %d is marked unreachable, want depth at most %d: it has an in-edge from vertex %d at depth %d",
					g.ExternalID(v), du+1, g.ExternalID(u), du)
			case dv > du+1:
				return errors.Errorf("algo: BFS vertex %d has depth %d, want at most %d: it has an in-edge from vertex %d at depth %d",
					g.ExternalID(v), dv, du+1, g.ExternalID(u), du)
			case dv == du+1:
				hasParent[v] = true
			}
		}
	}
	for v, ok := range hasParent {
		if !ok && depth[v] != unreachable {
			return errors.Errorf("algo: BFS vertex %d has depth %d, but no in-neighbour has depth %d: want an in-neighbour one level closer to the source, or depth %d if unreachable",
				g.ExternalID(uint32(v)), depth[v], depth[v]-1, unreachable)
		}
	}
	return nil
}

// checkGraph checks the structural invariants the references and verifiers
// rely on, so that a malformed graph is an error rather than a panic.
func checkGraph(g *csr.Graph) error {
	if g == nil {
		return errors.New("algo: graph is nil")
	}
	if uint64(len(g.Offsets)) != uint64(g.N)+1 {
		return errors.Errorf("algo: graph has %d offsets, want N+1 = %d", len(g.Offsets), uint64(g.N)+1)
	}
	if g.Offsets[0] != 0 || g.Offsets[g.N] != uint64(len(g.Dst)) {
		return errors.Errorf("algo: graph offsets span [%d, %d), want [0, %d)", g.Offsets[0], g.Offsets[g.N], len(g.Dst))
	}
	for v := uint32(0); v < g.N; v++ {
		if g.Offsets[v] > g.Offsets[v+1] {
			return errors.Errorf("algo: graph offsets decrease at vertex %d", v)
		}
	}
	for i, d := range g.Dst {
		if d >= g.N {
			return errors.Errorf("algo: graph edge %d points to vertex %d, want < %d", i, d, g.N)
		}
	}
	if g.Weights != nil && len(g.Weights) != len(g.Dst) {
		return errors.Errorf("algo: graph has %d weights for %d edges", len(g.Weights), len(g.Dst))
	}
	if g.IDs != nil && uint64(len(g.IDs)) != uint64(g.N) {
		return errors.Errorf("algo: graph has %d external ids for %d vertices", len(g.IDs), g.N)
	}
	return nil
}
