package algo

import "math"

// The four kernels as vertex programs over the engine (DESIGN.md §7). Each
// reads like its definition; the verifiers beside the reference
// implementations (pagerank.go, bfs.go, wcc.go, sssp.go) check their
// results without sharing code with them.

// PageRankProgram: PR_0 = 1/N; PR_{i+1}(v) = (1-d)/N + d·(Σ_{u→v} PR_i(u)/deg(u) + D_i/N),
// D_i the rank held by vertices without out-edges (Graphalytics §PR).
func PageRankProgram(iterations int, damping float64) *Program {
	return &Program{
		Name: "pagerank", Reduce: Sum, Float: true, Identity: math.Float64bits(0),
		Iterations: iterations, AllActive: true,
		Init: func(v, n uint32) (uint64, bool) { return math.Float64bits(1 / float64(n)), true },
		Edge: func(val, deg uint64, _ float64) uint64 {
			return math.Float64bits(math.Float64frombits(val) / float64(deg))
		},
		Apply: func(acc, _ uint64, it *Iteration) uint64 {
			n := float64(it.N)
			return math.Float64bits((1-damping)/n + damping*(math.Float64frombits(acc)+it.Dangling/n))
		},
	}
}

// BFSProgram: depth(src) = 0, depth(v) = min_{u→v} depth(u)+1, unreachable
// vertices keep 9223372036854775807 (Graphalytics §BFS).
func BFSProgram(src uint32) *Program {
	return &Program{
		Name: "bfs", Reduce: Min, Identity: math.MaxUint64,
		Init: func(v, _ uint32) (uint64, bool) {
			if v == src {
				return 0, true
			}
			return Unreachable, false
		},
		Edge:  func(val, _ uint64, _ float64) uint64 { return val + 1 },
		Apply: func(acc, old uint64, _ *Iteration) uint64 { return min(acc, old) },
	}
}

// WCCProgram: label(v) = min over the weakly connected component of v of
// the dense ids, by min-label propagation over edges in both directions
// (Graphalytics §WCC).
func WCCProgram() *Program {
	return &Program{
		Name: "wcc", Reduce: Min, Identity: math.MaxUint64, Symmetric: true,
		Init:  func(v, _ uint32) (uint64, bool) { return uint64(v), true },
		Edge:  func(val, _ uint64, _ float64) uint64 { return val },
		Apply: func(acc, old uint64, _ *Iteration) uint64 { return min(acc, old) },
	}
}

// SSSPProgram: dist(src) = 0, dist(v) = min_{u→v} dist(u) + w(u,v), +Inf
// when unreachable (Graphalytics §SSSP). Distances are non-negative, so
// their float64 bits order like the numbers and Min works on the bits.
func SSSPProgram(src uint32) *Program {
	inf := math.Float64bits(math.Inf(1))
	return &Program{
		Name: "sssp", Reduce: Min, Float: true, Identity: math.MaxUint64, Weighted: true,
		Init: func(v, _ uint32) (uint64, bool) {
			if v == src {
				return math.Float64bits(0), true
			}
			return inf, false
		},
		Edge: func(val, _ uint64, w float64) uint64 {
			return math.Float64bits(math.Float64frombits(val) + w)
		},
		Apply: func(acc, old uint64, _ *Iteration) uint64 { return min(acc, old) },
	}
}
