// Package testbed gives tests a cluster of emulated hosts on this one
// machine: each host a set of Linux namespaces (network on a bridge,
// hostname, process ids, mounts with a private /dev/shm), Open MPI's
// daemons started there through an rsh agent, and faults to inject: a
// host's link cut and healed, a host killed (every process in its PID
// namespace). It drives scripts/testbed.sh, which a person uses the same
// way (README: a multi-host run on one machine).
//
//	bed := testbed.Shared(t, 4)             // skips, or fails under CI, when hosts cannot be made
//	cmd := bed.Mpirun(ctx, "-np", "4", "--map-by", "node", dmg, "info")
//	bed.Cut(bed.Host(2)); bed.Heal(bed.Host(2))
//
// bed.Slurm(t) runs a real Slurm on the hosts (scripts/testbed-slurm.sh:
// munged, slurmctld on the bridge, a slurmd inside each host); its Srun,
// Sbatch and Salloc start jobs as a user on a login node would:
//
//	sl := bed.Slurm(t)                     // fails, naming `make deps`, without Slurm
//	cmd := sl.Srun(ctx, "--mpi=pmix", "-N", "4", "-n", "4", dmg, "info")
//
// Only tests import it.
package testbed
