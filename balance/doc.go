// Package balance is DMG's two-stage workload manager (DESIGN.md §6).
//
// Stage 1, at start-up: Chunks cuts the vertex range into one contiguous
// chunk per compute node so that α·|V_i| + |E_i| is even across chunks
// (Gemini's criterion), in one pass over the degree prefix sums. It is a
// pure function: every rank computes it and the job cross-checks agreement.
//
// Stage 2, at run time: Tasks cuts a chunk into batches of consecutive
// vertices, with hub vertices split into edge-range tasks, and Scheduler
// lets workers claim tasks dynamically and steal from each other, recording
// per-worker busy time so the tail (max/median) is visible.
package balance
