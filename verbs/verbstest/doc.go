// Package verbstest is the conformance suite every verbs backend runs (in
// the manner of gonum's testblas): the same checks, collective over every
// rank of a job, against memfab in plain unit tests and against the
// libfabric backend under mpirun with each provider.
//
// In-process backends use Run, which starts an in-process job per check:
//
//	verbstest.Run(t, opener, spmd.Roles{CN: 3, MN: 2})
//
// Multi-process backends call RunRank on every rank of an MPI job (from an
// mpitest child); it opens the network once and runs every check in turn,
// separated by barriers, and returns the first failure.
//
// The checks: reads and writes at pool edges (seen by the MN through Pool),
// out-of-range and misaligned addresses rejected before posting, concurrent
// FAA from every CN summing exactly (and handing out every previous value
// once), concurrent CAS increments losing nothing, mixed batches across
// MNs, zero-length operations, large transfers, counters adding up, read
// merging, and several endpoints per CN in parallel.
package verbstest
