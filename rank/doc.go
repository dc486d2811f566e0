// Package rank is the per-rank engine of DMG: what a compute node (CN)
// does in each iteration of a vertex program (algo.Program) over a graph
// stored on the memory nodes (Store), reached through package verbs, and
// what a memory node (MN) does meanwhile. Package job prepares the store
// and calls Run.
//
// Each CN owns a contiguous chunk [lo, hi) of the vertices (balance,
// stage 1). Its cache is that chunk's current values, accumulators,
// contributions, out-degrees and frontier: about 28 bytes per own vertex,
// |V|/C per CN, whatever the number of workers, plus 8 bytes per other
// vertex where the value pull runs, plus the copies of the chunk's index
// entries once read (entrycache.go; within a quarter of Config.CNMem).
// The large arrays come from package hugemem (on transparent huge pages
// where hugemem.Advised says they pay). A
// kernel with a multiset reduction (CDLP) adds a bag, a slot per edge end
// of the chunk (bag.go), in place of the accumulators. A kernel that reads its neighbours'
// adjacency (algo.Spec.Triangles: LCC, TC) runs the triangle operator
// (triangles.go, with lists.go to read whole lists of any vertex set) in
// place of the fetch path: each worker adds its buffers, bounded by a
// task's neighbourhoods and 4 MiB of oriented lists, not by |V|; its
// oriented lists live on DM, beside the graph. The workers are goroutines
// made once per job (a gang), each with its endpoint, read merger, fetch
// path and update coordinator (package update); no goroutine, buffer or
// endpoint is made per iteration. A Phased kernel (algo.Phased: BC) is
// several runs in turn over the same store and endpoints (Run); a later
// phase starts from the values the last left on DM (algo.Spec.Continue,
// read by every CN before any writes), and its iterations and counts add
// to one Result. A run may keep its state (values and next frontier) at
// boundaries its Cadence chooses (Config.Checkpoint), and start from a
// kept one instead of Init's (Config.Resume; checkpoint.go).
//
// What an iteration does is decided by a policy (policy.go): a pure
// value made once per run from the kernel, the mode's abilities, the
// knobs and the store, whose plan for each iteration follows from the
// boundary's sums (dense or sparse, pull or push, bottom-up, remote or
// value pull, relax, by reference or by value) and is printed in the
// iteration log. What a kernel asks of the job (the layout, in-edges, a
// puller) is answered once by NeedsOf; the ablation switches are listed
// once in AllAblations.
//
// One iteration is bulk-synchronous:
//
//  1. Push. Workers claim tasks (balance.Queue, stage 2 with stealing):
//     runs of the chunk's vertices in a dense iteration, runs of the
//     sorted frontier list in a sparse one. A task's index entries come in
//     one merged READ (none when the CN keeps them all), then the list
//     segments the iteration needs in one more (in-place entries carry
//     their edges). Edges are routed by segment, never one by one: the
//     entry holds each list's segment lengths per chunk. A packed list (dmstore.LayoutConfig.Packed) is
//     read whole, decoded, and cut at the chunk bounds, as an in-place
//     one is; none of its segments goes by reference.
//     - Dense iterations pull the local segment: a vertex gathers, from
//     its in-neighbours in the chunk, their contributions (the identity
//     for inactive ones), so no accumulator is written by two workers and
//     no atomic is needed (traversals skip reached vertices and stop at
//     the first active in-neighbour). On a symmetric graph the out-lists
//     are the in-lists; a directed graph's in-lists are a second layout
//     (Store.In).
//     - Segments for other chunks go to the update coordinator: in dense
//     iterations by reference (RefRD, long segments, not fetched) or by
//     value (ValRD, pre-combined pairs in mailbox blocks); in sparse ones
//     by direct remote update (CAS on the destination's inbox word, the
//     first toucher logging it, candidates of monotone kernels dropped
//     when not below the current value; a traversal's for reached
//     vertices, against the chunks' reached bitmaps, when they are many),
//     except a hub's long segments,
//     which go by value as in a dense iteration (Config.SparseValRDMin).
//     - The value pull (valuepull.go; Config.NoValuePull turns it off):
//     a dense pull iteration with a third of the edges active sends
//     nothing either: each CN reads the other chunks' contributions from
//     DM in bulk (a word per vertex of the graph, within
//     Config.ValuePullMax) and pulls its vertices' whole in-lists; for
//     Relax kernels (WCC, SSSP) a lowered value is read at once by the
//     CN's later pulls (Gauss–Seidel), as it is in the local pull of a
//     dense iteration without it; a kernel whose values are vertex ids
//     (WCC) gathers them from a 4-byte copy of the words
//     (Config.NoNarrow turns it off). Multiset kernels gather a task's bag
//     and the baselines run them this way too.
//     - With Config.RemotePull (off by default), a dense pull iteration
//     sends nothing: each CN also pulls for the other chunks' vertices
//     the segment of their in-lists its own chunk holds, into partial
//     words written to their inboxes (rpull.go).
//     - Sparse iterations push the local segment with one CAS per edge
//     (Ligra's sparse push), recording the vertices they touch.
//  2. Barrier. (When the MNs apply ValRD pairs, they do it now, and a
//     second barrier follows.)
//  3. Apply. Each worker owns a lane: a 64-aligned range of the chunk.
//     The workers read the RefRD segments and ValRD blocks cooperatively
//     and each folds the part that falls in its lane, then turns its
//     lane's accumulators into the next values (Program.Update), sets the
//     next frontier's bits and contributions. A sparse apply writes the
//     values it changed back to DM in large WRITEs; a dense iteration's
//     wait, behind, until a push prunes against them or the run ends
//     (lazyValues, catchUpValues), and a traversal's all wait for the
//     end (valuesUnread). A sparse apply visits only the touched
//     vertices: those the workers took from the identity, those the
//     touched log names (whose inbox words it reads and resets) and those
//     the ValRD pairs of hub segments name.
//  4. One fused all-reduce: the next frontier's vertices and edges
//     (dense or sparse next, at |E|/Config.DenseDivisor), the dangling
//     mass, the failure flag, the counters and the NIC model's loads.
//
// The inner loops over edges are package reduce's, specialised per
// reduction and edge map; kernels are called per range of vertices, never
// per edge. The triangle operator's three iterations (degrees, oriented
// neighbourhoods, triangles) go through the same phases: its credits for
// other chunks are integer-sum candidates on the update coordinator's
// paths, folded by the same apply. The baselines (DESIGN.md §8) are the same engine with another
// fetch path and update path: naive.go and famgraph.go beside dmg.go,
// chosen once as a mode.
package rank
