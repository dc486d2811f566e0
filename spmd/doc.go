// Package spmd is DMG's control plane: how the ranks of one job find each
// other, agree on roles, and synchronise.
//
// A job is started either by a parallel launcher (mpirun, srun) with one
// process per rank — StartMPI, over gompi and Open MPI — or in one process
// with one goroutine per rank — NewLocal/RunLocal, for tests and --local.
// Both give a Runtime whose World communicator offers the few collectives
// DMG needs: barriers between phases, the all-gather of fabric endpoint
// addresses and memory keys ("QP exchange"), broadcasts, and small
// reductions. No graph data ever travels through spmd; package verbs moves
// it with one-sided operations. Under MPI the world's barrier and
// all-reduces are non-blocking collectives waited for with sleeps once the
// wait is long, so a rank waiting through another's phase (a memory node
// through an iteration) leaves the cores to the ranks computing.
//
// Roles: with --roles cn:C,mn:M world ranks 0..C-1 are compute nodes and
// C..C+M-1 memory nodes. NewWorld checks the layout against the world size
// and splits one communicator per role. A serve job holds memory nodes
// alone and a job attached to its pool compute nodes alone
// (ParseRolesFor with MNOnly, CNOnly); every other job needs both.
//
// Errors: a collective interrupted by Runtime.Abort on another rank returns
// ErrAborted (in-process); under MPI, Abort ends every process.
package spmd
