// Package launch is the dmg command line and the one harness that owns a
// job: flags, starting the ranks (under mpirun/srun through spmd, or as
// goroutines with --local), phase agreement, timing, reports and
// verification. Kernels never parse flags or print; launch does.
//
// Error discipline: each phase ends with Job.Agree, an all-reduce in which
// every rank says whether its part failed. Either all ranks go on, or all
// stop; the lowest failing rank prints its message once ("dmg: ..."), and
// every rank exits with the same status: 2 for bad input (flags, roles,
// files, parameters), 1 for run-time failures. A rank whose peers do not
// reach the agreement within seconds aborts the job, so nothing hangs.
package launch
