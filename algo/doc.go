// Package algo holds DMG's graph algorithms: the kernel model the engine
// runs (kernel.go: Spec, Kernel, Program), the registry of kernels
// (registry.go: Algorithms, Lookup), and, independently of the engine, for
// PageRank, BFS, WCC, SSSP, CDLP, LCC, TC and BC a simple serial reference
// implementation and a serial verifier, plus reading, writing and
// validating result files in the LDBC Graphalytics output format
// (graphalytics.go) and summarising them (summary.go: Summarize). A run's
// result, one value word per vertex, is summarised and written from the
// words in place (resultwords.go: Algorithm.SummarizeResult and
// WriteResult), decoded by the kernel's Kind, with no copy of them.
//
// A kernel is a typed vertex program (Kernel[V]: Init, Contribution,
// Update) and a Spec naming its reduction (sum, minimum, or the whole
// multiset of candidates, which a Bagger's UpdateBag turns into the next
// value: CDLP's most frequent label) and edge map
// (carry the contribution, or add the weight; or Custom, with an Edger that
// sees the source, the destinations and the weights). A kernel that needs
// its neighbours' adjacency (LCC, TC) sets Spec.Triangles instead: the
// engine's triangle operator then hands it, over three iterations, each
// vertex's degree, its number of neighbours and the number of arcs between
// them. The engine owns the loops over edges and calls the kernel per
// range of vertices (Words adapts a typed kernel), so a kernel makes no
// call per edge. A kernel that is several runs of the engine in turn
// implements Phased (BC: per source, a count of shortest paths, then a
// sweep back by depth that Spec.EveryVertex and Spec.Continue allow): each
// phase starts from the values the last one left, and the kernel folds
// their results into its own. Adding a kernel is one file with its program, its
// verifier and its Algorithm entry, and one line in Algorithms.
//
// Semantics follow the LDBC Graphalytics benchmark specification (v1.0,
// section 2.3 "Algorithms") and DESIGN.md §7, except TC and BC, which
// follow the GAP benchmark suite's tc and bc (Brandes' algorithm); each
// kernel file cites the definition it implements.
//
// One file per algorithm (convention 1 of STYLE.md): pagerank.go, bfs.go,
// wcc.go, sssp.go, cdlp.go, lcc.go, tc.go and bc.go each hold the vertex program,
// ReferenceX, a deliberately simple serial implementation over
// *csr.Graph, and VerifyX, a serial check of a result vector produced by
// the engine. The verifiers share no code with the engine and, where the
// algorithm allows, check the defining properties of the result (BFS
// depths grow by one along a parent edge, SSSP distances satisfy the
// triangle inequality and are realised by a path, WCC labels are constant
// along edges and as many as the components) instead of recomputing it;
// PageRank, CDLP, LCC, TC and BC, whose results have no such property, are
// compared with their serial reference (CDLP counts labels with a map per
// vertex, LCC marks each neighbourhood in an array and tests every arc of
// each neighbour against it, TC keeps a set per vertex, BC is Brandes'
// queue and stack over sets of neighbours).
// Verifier errors name the offending vertex by its external id and say what
// was expected.
//
// graphalytics.go handles the benchmark's files, `<vertex-id> <value>` per
// line:
//
//	if err := algo.WriteOutput(path, g, depths); err != nil { ... }
//	want, err := algo.ReadOutput(dataset+"-BFS", algo.KindBFS)
//	got, err := algo.NewOutput(algo.KindBFS, g, depths)
//	err = algo.Validate(algo.KindBFS, want, got)
//
// Validate applies the Graphalytics rules: exactly the expected vertex set
// with no duplicates; BFS and CDLP exact integers (and TC's counts,
// KindTC); PR, LCC, SSSP (and BC, KindBC) within 0.0001 relative (infinity equal only to
// infinity); WCC equivalent partitions.
//
// No function panics on bad input: malformed graphs, vectors of the wrong
// length and out-of-range sources are errors (verifiers) or a nil result
// (references).
package algo
