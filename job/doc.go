// Package job runs one DMG job on every rank of a world: it reads or
// generates the graph (each compute node only its share, and for directed
// graphs the engine pulls on, its share's in-edges), cuts it into chunks
// (package balance, stage 1), lays it out on the memory nodes (package
// csr; the reverse adjacency after the out-adjacency, then the engine's
// regions), sizes and opens the data path (package verbs), loads each
// chunk, and hands over to the engine (package rank). Execute is a
// pipeline of named steps (execute.go: params, read, settle, layout, open,
// load, compute), each ending at the job's boundary (rank.Config.Sync), so
// all ranks go on or all stop.
//
//	out, err := job.Execute(world, job.Config{Algo: "bfs", Graph: "kron:16", Open: open, Engine: rank.Config{Sync: sync}})
//
// The memory nodes never read the input: CN 0 tells them the job's shape
// and its layouts, and the other CNs check theirs are the same.
//
// With Config.Pool the job holds compute nodes alone, on a served pool
// (package pool): a load stores its graph there under a name, in extents
// the catalogue gives it, with a descriptor of its layouts (attach.go); a
// run takes the graph's lease, reads the descriptor and computes without
// the input (poolrun.go), after cutting the graph anew from the pool when
// it has another compute-node count than any cut the pool holds
// (recut.go). A run keeps checkpoints of its values and frontier in the
// pool, and a later run of any compute-node count resumes the newest
// unfinished one of the same graph, kernel and parameters
// (checkpoint.go).
package job
