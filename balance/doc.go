// Package balance is DMG's two-stage workload manager (DESIGN.md §6).
//
// Stage 1, at start-up (chunks.go): Chunks cuts the vertex range into one
// contiguous chunk per compute node so that α·|V_i| + |E_i| is even across
// chunks (Gemini's criterion; DefaultAlpha is Gemini's α), in one pass over
// the degrees. It is a pure function: every CN computes it and the job
// cross-checks agreement. A Cut makes the same cut a slice of the degrees
// at a time, for a staged read whose CNs each hold one slice: Cut.Slice
// places the boundaries that fall in a slice, and Cut.Bounds gathers them.
// Imbalance is a cut's max/mean chunk cost.
//
// Stage 2, at run time (tasks.go, queue.go, schedule.go): Tasks cuts a
// chunk into batches of consecutive vertices, with hub vertices split into
// edge-range tasks. A Queue, for workers that live for the whole job, deals
// a phase's tasks (Reset) to the workers as contiguous shares of equal
// cost, each worker takes its next task with Next, and (with stealing on)
// idle workers steal the back half of the busiest share; Run does the same
// for one set of tasks on goroutines of its own. A task costs its edges
// plus α per vertex (EdgeCost over a vertex range, ListCost over a sparse
// frontier's list, both for uint32 or uint64 degrees; TaskAlpha is the
// engine's α). Per-worker busy time is recorded (Stats) so the tail
// (Stats.TailRatio, max/median; Tail over iterations) is visible. Like
// Chunks, Tasks is a pure function; neither Queue nor Run does I/O of its
// own: the caller runs the tasks.
package balance
