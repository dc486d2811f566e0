package testbed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Slurm is a real Slurm cluster on the shared test bed: munged, slurmctld
// on the bridge and one slurmd inside each host (scripts/testbed-slurm.sh).
// Its commands run on this machine, outside the hosts, as a login node's
// would; the jobs' tasks run on the hosts.
type Slurm struct {
	bed  *Bed
	conf string
}

// slurmUp says Slurm was brought up: Teardown then ends its daemons
// before the hosts (under mu).
var slurmUp bool

// slurmScript is scripts/testbed-slurm.sh of this checkout.
func slurmScript() string { return filepath.Join(filepath.Dir(script()), "testbed-slurm.sh") }

// slurmCommands are what testbed-slurm.sh and the tests run.
var slurmCommands = []string{"munged", "slurmctld", "slurmd", "sinfo", "srun", "sbatch", "salloc", "scancel"}

// Slurm brings Slurm up on the bed's hosts (at once when it already runs:
// a slurmd that died with its host is started again) and returns it. A
// missing Slurm fails the test, naming what installs it. When the test
// fails, its jobs are cancelled, so that the next test finds idle nodes.
func (b *Bed) Slurm(t testing.TB) *Slurm {
	t.Helper()
	for _, c := range slurmCommands {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("testbed: %s is not installed: `make deps` installs slurm-wlm and munge", c)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	out, err := exec.Command(slurmScript(), "up", strconv.Itoa(b.n)).CombinedOutput()
	if err != nil {
		t.Fatalf("testbed-slurm up %d: %v\n%s", b.n, err, out)
	}
	slurmUp = true
	s := &Slurm{bed: b, conf: filepath.Join(strings.TrimSpace(lastLine(string(out))), "slurm.conf")}
	t.Cleanup(func() {
		if t.Failed() {
			s.Command(context.Background(), "scancel", "--user", "root").Run()
		}
	})
	return s
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// Conf is the path of the cluster's slurm.conf.
func (s *Slurm) Conf() string { return s.conf }

// Env is this process's environment for Slurm's commands: SLURM_CONF
// pointing at the cluster, none of a surrounding job's SLURM_, PMI or
// Open MPI rank variables, and what Open MPI needs here (root, its
// daemons and TCP traffic on the bridge's network, as testbed.sh mpirun
// sets) for an mpirun inside an allocation.
func (s *Slurm) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SLURM_") || strings.HasPrefix(kv, "PMI") || strings.HasPrefix(kv, "OMPI_COMM_WORLD") {
			continue
		}
		env = append(env, kv)
	}
	net := "10.214." + id() + ".0/24"
	return append(env, "SLURM_CONF="+s.conf,
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_orte_execute_quiet=1",
		"OMPI_MCA_oob_tcp_if_include="+net, "OMPI_MCA_btl_tcp_if_include="+net)
}

// Command is a Slurm command (or any other) with Env. When ctx ends it
// gets SIGTERM, as from a user's kill, so that srun and salloc end their
// steps and allocation, then SIGKILL 10 s later.
func (s *Slurm) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = s.Env()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// Srun is `srun args...` on the cluster.
func (s *Slurm) Srun(ctx context.Context, args ...string) *exec.Cmd {
	return s.Command(ctx, "srun", args...)
}

// Sbatch is `sbatch args...` on the cluster (add --wait to wait for the job).
func (s *Slurm) Sbatch(ctx context.Context, args ...string) *exec.Cmd {
	return s.Command(ctx, "sbatch", args...)
}

// Salloc is `salloc args...` on the cluster: its command runs on this
// machine with the allocation's environment.
func (s *Slurm) Salloc(ctx context.Context, args ...string) *exec.Cmd {
	return s.Command(ctx, "salloc", args...)
}

// slurmDown ends Slurm's daemons and the hosts (Teardown, under mu).
func slurmDown() {
	exec.Command(slurmScript(), "down").Run()
	slurmUp = false
}
