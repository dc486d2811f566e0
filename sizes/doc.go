// Package sizes checks, before anything is allocated, every size that
// comes from a flag or a file header (vertices, matrix rows, workers ×
// inflight goroutines, in-process ranks) against what this machine can
// hold: its physical memory, or its cgroup's limit when lower. A size too
// large is an *Error naming the size, what it would cost and the limit —
// bad input, reported in one line — instead of an out-of-memory crash.
//
// The costs are lower bounds, measured (see each constant): a size
// refused here could not have run; a size accepted may still fail later,
// with the engine's own capacity checks.
package sizes
