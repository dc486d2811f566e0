// Package rank is the per-rank engine of DMG: what a compute node does in
// each iteration of a vertex program, over a graph stored on the memory
// nodes (Store) and reached through package verbs.
//
// Each CN owns a contiguous chunk of vertices (balance.Chunks). Its cache is
// the current values and next-iteration accumulators of that chunk only, so
// CN memory is about |V|·16 B/#CN, not |V|. An iteration:
//
//  1. push: workers claim batches of consecutive vertices of the chunk; for
//     a batch with active vertices, one READ fetches its offsets and one
//     merged, doorbell-batched READ the edge lists of its active vertices.
//     Each edge's candidate goes to the local cache when the destination is
//     in the chunk, and otherwise is combined per destination and applied to
//     the destination's inbox word on its MN with remote CAS (direct remote
//     update; collaborative update comes with package update);
//  2. barrier, then apply: the CN reads its chunk's inbox words (large
//     READs), folds them into the cache, applies the program, writes the new
//     values back to DM with large WRITEs and resets the inbox;
//  3. small all-reductions: active vertices and edges (the dense/sparse
//     classification at |E|/20 is logged per iteration), dangling mass.
//
// MNs take part in the collectives while their pools serve the fabric.
package rank
