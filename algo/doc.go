// Package algo holds DMG's graph algorithms: the vertex programs the engine
// runs (Program, in program.go and programs.go), and, independently of the
// engine, for PageRank, BFS, WCC and SSSP a simple serial reference
// implementation and a serial verifier, plus reading, writing and
// validating result files in the LDBC Graphalytics output format.
//
// Semantics follow the LDBC Graphalytics benchmark specification (v1.0,
// section 2.3 "Algorithms") and DESIGN.md §7; each kernel file cites the
// definition it implements.
//
// One file per algorithm (convention 1 of STYLE.md): pagerank.go, bfs.go,
// wcc.go and sssp.go each hold ReferenceX, a deliberately simple serial
// implementation over *csr.Graph, and VerifyX, a serial check of a result
// vector produced by the engine. The verifiers share no code with the engine
// and, where the algorithm allows, check the defining properties of the
// result (BFS depths grow by one along a parent edge, SSSP distances satisfy
// the triangle inequality and are realised by a path, WCC labels are constant
// along edges and as many as the components) instead of recomputing it.
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
// with no duplicates; BFS and CDLP exact integers; PR, LCC and SSSP within
// 0.0001 relative (infinity equal only to infinity); WCC equivalent
// partitions.
//
// No function panics on bad input: malformed graphs, vectors of the wrong
// length and out-of-range sources are errors (verifiers) or a nil result
// (references).
package algo
