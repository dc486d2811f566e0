// Package csr is DMG's graph formats: it turns graph inputs into an
// in-memory CSR (Graph), reads a compute node's share of one, and writes
// graphs back (WriteBinary, ConvertStaged). It knows nothing of the
// fabric: package dmstore lays a CSR out on the memory nodes.
//
// csr splits into reader, generator and builder (STYLE.md, after GAP):
//
//   - Readers (graphalytics.go, text.go, mtx.go, binary.go) parse one input
//     format each into an edge list (EdgeList) on dense ids, with a table
//     of the external 64-bit ids (ids.go maps a text edge list's). The
//     format is picked from the file name by Open; a trailing ".gz" is
//     decompressed transparently. Text inputs are parsed in parallel
//     (see Text inputs below).
//   - Generators (generate.go) produce Graph500 Kronecker ("kron:SCALE[:EF]")
//     and uniform random ("uniform:N:M") edge lists. Every block of edges is
//     seeded on its own, so the output does not depend on the number of
//     goroutines or ranks that generate it.
//   - The builder (build.go, Build) is the only code that makes CSR: from
//     an edge list on dense uint32 ids it symmetrises undirected inputs,
//     applies the self-loop and duplicate policies and sorts every
//     adjacency list by destination, in parallel and with a deterministic
//     result.
//
// # Usage
//
//	g, meta, err := csr.Open("data/graphalytics/example-directed/example-directed.properties", csr.Options{})
//	src, ok := g.DenseID(meta.BFSSource) // external → dense
//
//	g, _, err := csr.Open("kron:20", csr.Options{Seed: 1, Weighted: true})
//
// # Shares
//
// A compute node reads only its share of the graph (OpenShare): a first
// pass over the input counts every vertex's degrees, the caller's
// partition picks the vertex range [lo, hi), and a second pass keeps the
// out-edges of those vertices, so memory is O(|V|) plus the share's edges.
// A share's graphs hold the rows of its own vertices only (Graph.Lo), and
// its Degrees are theirs.
// A text edge list takes a first pass that parses it to collect its ids;
// that pass keeps the parsed edges while they fit Options.KeepBytes
// (kept.go), and the later passes then read them instead of parsing the
// text again. A Graphalytics input's first pass keeps its edges likewise.
// A share whose rows do not fit ShareOptions.RowBytes is windowed
// (window.go): OpenShareWith builds no rows, and Share.Windows builds
// them a window of vertices at a time, in a pass each, for a caller that
// measures and loads them window by window (dmstore's SizeRange,
// LoadOptions.Lo and Hi), or lays them out from Degrees and InDegrees
// and loads them in one sweep (dmstore's RoomRange); a share built
// whole is its one window. A staged read's windows, which read only
// their own records, are cut at ShareOptions.WindowBytes, a cache's
// size, once the share is windowed.
// OpenShareWith with ShareOptions.In also keeps their in-edges (Share.In):
// exactly the rows [lo, hi) of the transpose of the graph Open builds,
// with the same self-loops and parallel edges and each edge weighing what
// its source's out-row keeps. Undirected graphs get no Share.In, their
// out-rows holding both directions; Share.Symmetric tells when a directed
// input (such as a symmetrised .bel file) needs no reverse adjacency
// either. Such a share is found without building its in-rows: when every
// vertex of [lo, hi) has as many in- as out-edges in the input, the
// second pass sums a 64-bit hash of every in-edge and compares the sum
// with that of the out-edges; if they agree, Share.In is the share's
// Graph itself, else a third pass builds the in-rows. The check is
// probabilistic: a share that is not symmetric passes it with
// probability about 2^-64. It costs a hash per in- and per out-edge of
// the share, against a random scatter of every in-edge and a sort of the
// in-rows (0.1 s against 0.9 s for 16 M edges); a share whose degrees
// differ builds its in-rows in the second pass, and one whose degrees
// agree but whose edges do not pays a third pass.
//
// # Staged reads
//
// With several compute nodes, a text edge list (SNAP, .el, .wel) or a
// generator is read staged (staged.go, OpenStaged): each CN parses only
// its byte range of the file, cut at line starts (a gzipped file, which
// cannot be cut, is parsed by CN 0 alone), or generates only its range
// of the generator's blocks (a generator's ids are dense, all of them
// vertices: steps 2 and 3 below find nothing to map), and what the CNs
// parsed meets through staging
// memory in DM that the job provides (Stage: collective steps, and a
// linear space of bytes on the memory nodes, which take the steps with
// ServeStaged). The id map is cut into C slices of the id space
// (idslices.go): CN k merges slice k of every CN's ids (bitmaps ORed, or
// sorted lists merged when the ids are too sparse for a bitmap), and
// every CN maps its edges a slice at a time, so no CN holds more than a
// slice of the ids; each CN counts its edges' degrees a slice of the
// vertices at a time and sums one slice of everyone's; the cut is placed
// slice by slice (Cutter), so no CN holds a word per vertex of the graph
// (a staged share's ids are read from the staging memory: Share.
// ExternalID, DenseID, ExternalIDs); a CN whose edges outgrow
// Options.KeepBytes parses its range once more to spill them to the
// staging memory, and its later passes read them there instead of
// parsing it again (spill.go); each CN sends every edge to the region of
// its source's chunk, and of its destination's when in-rows or an
// undirected graph need it, while those of its own chunk stay in its
// kept edges. An edge goes as a record of 6 bytes where the ids have
// at most 27 bits, the end in its part as an offset (records.go), else
// 8, 16 with weights. The share's passes then read its chunk's region
// (and its own kept edges): its windows too, without parsing the text
// again. A bad
// line names its line in the whole file (the lines of the ranges before
// it added) on every rank. FuzzStaged compares staged shares, for 1 to 6
// CNs and every option, with the serial whole-graph reader.
//
// # Text inputs
//
// The text readers (SNAP and .el/.wel edge lists, Graphalytics .v and .e
// files, Matrix Market entries) cut their input into blocks of whole
// lines, about 1 MiB each (textblock.go). One goroutine reads the file
// in order and up to Options.Workers goroutines parse the blocks; the
// parsed blocks are then taken in input order, so the result (edges,
// ids, errors) is the same for any number of workers and any cut. Every
// block counts its lines, so an error names the line of the whole file
// even when its block starts mid-file. A gzipped input cannot be cut
// before it is decompressed: it streams through one decompressor, in the
// reading goroutine, and only the parsing of its blocks is parallel. A
// line is parsed in place, without allocating: a fast path takes plain
// lines (decimal ids, blanks, a plain decimal weight), and any other line
// (a comment, an unusual one, a malformed one) goes to the careful
// per-line parser, which gives the same edges and every error message.
// Dense ids come from a bitmap of the external ids with a count of its
// set bits per word, when the largest id is small enough (a bitmap of
// at most 16 bytes per edge endpoint plus 64 MiB; ids.go); a sparse id
// space falls back to sorting the ids and binary searches.
//
// WriteBinary stores a graph as a binary edge list (.bel) with its id
// table, its weights and, optionally, the Graphalytics properties of its
// input (BinaryOptions.Properties), whose algorithm parameters the .bel
// reader restores. `dmg convert` writes a graph it built keeping every
// parallel edge (KeepDuplicates), so that reading the .bel gives what
// reading the input gives: the same graph, ids, degrees and parameters.
// A text edge list it converts without building the graph
// (ConvertStaged): the staged read's first two steps collect the ids of
// each rank's byte range (one rank alone: Solo) and agree on the id map,
// then every rank writes its range's edges as records on dense ids, in
// input order, at its offset of the file.
//
// # Vertex ids
//
// Dense ids are assigned in ascending order of the external ids, whatever the
// order of the input file (for Graphalytics, the .v file may list vertices in
// any order). Graph.ExternalID and ExternalIDs map back (a staged
// share's: Share.ExternalID); Graph.IDs is nil when the external ids are
// exactly 0..N-1, or when a share holds them as a bitmap instead of a
// table. For edge lists without a vertex file (SNAP, .el, .wel, binary
// without id table) the vertex set is the set of ids that appear in an edge.
// Matrix Market ids are 1-based: dense id i is external id i+1, and every row
// or column index up to max(rows, cols) is a vertex.
//
// # Policies
//
// Self-loops are kept by default (SNAP and Graphalytics count them) and can be
// dropped with Options.SelfLoops = DropSelfLoops. Parallel edges are dropped
// by default, keeping the smallest weight (Graphalytics graphs are simple, so
// this never changes their reference outputs; it also merges the two
// listings of an undirected edge listed in both directions), and can be kept
// with Options.Duplicates = KeepDuplicates. Weights are ordered totally (−0
// before +0, which the readers turn into 0 anyway; they reject NaN), so which
// copy is kept does not depend on the order of the input. Undirected graphs
// store every edge in both directions with the same weight; a self-loop is
// stored once.
//
// # Errors
//
// Bad input yields a single *InputError naming the file, the line (or byte
// offset for binary files) and what was expected; IsInputError tells the CLI
// to exit with status 2. An empty input is a valid graph with zero vertices.
// Of several bad lines, the first in the file is reported, as a
// line-by-line reader would (FuzzParallelText checks the parallel path
// against one).
//
// OpenProgress is Open with a callback that follows the bytes read of the
// input files (for a progress bar).
package csr
