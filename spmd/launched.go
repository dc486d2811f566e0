package spmd

import (
	"os"
	"strconv"
)

// launchVars are the environment variables through which launchers tell a
// process its rank before MPI is initialised: Open MPI's mpirun, PMIx and
// PMI-2 launchers (srun --mpi=pmix|pmi2), and Slurm itself.
var launchVars = [][2]string{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMIX_RANK", ""},
	{"PMI_RANK", "PMI_SIZE"},
	{"SLURM_PROCID", "SLURM_NTASKS"},
}

// Launched tells whether a parallel launcher started this process, and if
// so its rank (and the world size when the launcher says). It reads only the
// environment, so it works before MPI starts: DMG uses it to print argument
// errors on rank 0 only and to refuse a run that was neither launched by
// mpirun/srun nor given --local.
func Launched() (launched bool, rank, size int) {
	for _, kv := range launchVars {
		r, ok := os.LookupEnv(kv[0])
		if !ok {
			continue
		}
		rank, err := strconv.Atoi(r)
		if err != nil {
			continue
		}
		size = -1
		if kv[1] != "" {
			if s, err := strconv.Atoi(os.Getenv(kv[1])); err == nil {
				size = s
			}
		}
		return true, rank, size
	}
	return false, 0, 1
}
