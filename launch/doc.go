// Package launch is the dmg command line and the one harness that owns a
// job: flags, starting the ranks (under mpirun/srun through spmd, or as
// goroutines with --local), phase agreement, timing, reports and
// verification. Kernels never parse flags or print; launch does.
//
// A run's work is package job's (Execute: read, partition, lay out,
// load) and package rank's (the engine); launch wires the flags into
// job.Config and prints what comes back. pool.go is the served pool's
// side: dmg serve (MNs alone), the attach of a load or run (--pool-file),
// and dmg ls and dmg stop, which run in one process without a launcher.
//
// Error discipline: each phase ends with Job.Sync (Agree when it carries
// nothing else), one all-reduce in which every rank says whether its part
// failed — the engine's iteration boundaries add their counters to the
// same all-reduce. Either all ranks go on, or all stop; the lowest failing
// rank prints its message once ("dmg: ..."), and every rank exits with the
// same status: 2 for bad input (flags, roles, files, parameters), 1 for
// run-time failures. A rank whose peers do not reach the agreement within
// seconds aborts the job, so nothing hangs.
package launch
