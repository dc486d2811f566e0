// Package balance is DMG's two-stage workload manager (DESIGN.md §6).
//
// Stage 1, at start-up: Chunks cuts the vertex range into one contiguous
// chunk per compute node so that α·|V_i| + |E_i| is even across chunks
// (Gemini's criterion), in one pass over the degree prefix sums. It is a
// pure function: every rank computes it and the job cross-checks agreement.
// Cut makes the same cut a slice of the degrees at a time, for a staged
// read whose CNs each hold one slice: each places the boundaries that
// fall in its slice, and Bounds gathers them.
//
// Stage 2, at run time: Tasks cuts a chunk into batches of consecutive
// vertices, with hub vertices split into edge-range tasks; Run deals them to
// workers as contiguous shares of equal cost (EdgeCost), and idle workers
// steal the back half of the busiest share. Run records per-worker busy
// time so the tail (Stats.TailRatio, max/median; Tail over iterations) is
// visible. Like Chunks, Tasks is a pure function; Run does no I/O of its
// own: the engine passes the work as a function of (worker, task).
package balance
