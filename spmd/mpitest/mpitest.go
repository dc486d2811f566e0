// Package mpitest runs parts of a Go test binary as real MPI ranks under
// mpirun, so integration tests exercise the true launch and data paths.
//
// In the test package:
//
//	func TestMain(m *testing.M) {
//		mpitest.Main(m, map[string]func() error{"fabric": fabricRank})
//	}
//
//	func TestFabricShm(t *testing.T) {
//		mpitest.Run(t, 3, "fabric", "DMG_FABRIC=shm")
//	}
//
// Run re-executes the test binary under mpirun with np ranks; in each rank
// Main sees the child's name in the environment and runs that function
// instead of the tests, exiting 0 on success and 1 (after printing the error)
// otherwise. A child starts MPI itself (spmd.StartMPI).
package mpitest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/spmd"
)

// ChildEnv names the child function a re-executed test binary runs.
const ChildEnv = "DMG_MPITEST_CHILD"

// defaultTimeout bounds one mpirun; a hang is a failure, never a stuck CI job.
const defaultTimeout = 120 * time.Second

// Main runs the named child when this process is an mpitest rank, and the
// tests otherwise. It does not return.
func Main(m *testing.M, children map[string]func() error) {
	if name := os.Getenv(ChildEnv); name != "" {
		fn, ok := children[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "mpitest: unknown child %q\n", name)
			os.Exit(3)
		}
		if err := fn(); err != nil {
			fmt.Fprintf(os.Stderr, "mpitest: child %s: %+v\n", name, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Env is the environment that lets Open MPI run here as root and on more
// ranks than cores, and keeps it quiet.
func Env() []string {
	return []string{
		"OMPI_ALLOW_RUN_AS_ROOT=1",
		"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1",
		"OMPI_MCA_orte_execute_quiet=1",
		// Keep MPI's own transport on shared memory and loopback TCP so
		// tests do not wander onto other interfaces.
		"OMPI_MCA_btl=self,vader,tcp",
		"OMPI_MCA_btl_tcp_if_include=lo",
		"OMPI_MCA_oob_tcp_if_include=lo",
		"OMPI_MCA_pml=ob1",
	}
}

// Mpirun finds mpirun, or fails the test (never skips: the integration
// tests are the proof that the real path works).
func Mpirun(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpitest: mpirun not found on PATH (install openmpi-bin; `make deps` does): %v", err)
	}
	return p
}

// Result is what one mpirun produced.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
	Elapsed        time.Duration
}

// Exec (skipped under -short) runs `mpirun -np np cmd args...` with the test environment plus env,
// bounded by a timeout, and returns what happened without judging it.
func Exec(t testing.TB, np int, env []string, cmd string, args ...string) Result {
	t.Helper()
	if testing.Short() {
		t.Skip("mpitest: mpirun integration test; runs without -short (make test-integration)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), defaultTimeout)
	defer cancel()
	full := append([]string{"-np", strconv.Itoa(np)}, cmd)
	full = append(full, args...)
	c := exec.CommandContext(ctx, Mpirun(t), full...)
	c.Env = append(append(os.Environ(), Env()...), env...)
	c.WaitDelay = 5 * time.Second
	var so, se bytes.Buffer
	c.Stdout, c.Stderr = &so, &se
	start := time.Now()
	err := c.Run()
	res := Result{Stdout: so.String(), Stderr: se.String(), Elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("mpitest: mpirun -np %d %s %v timed out after %v\nstdout:\n%s\nstderr:\n%s",
			np, cmd, args, defaultTimeout, res.Stdout, res.Stderr)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			res.ExitCode = ee.ExitCode()
		} else {
			t.Fatalf("mpitest: running mpirun: %v", err)
		}
	}
	return res
}

// Run re-executes the current test binary under mpirun with np ranks as the
// named child and fails t unless every rank succeeds. It returns the output.
func Run(t testing.TB, np int, child string, env ...string) Result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("mpitest: %v", err)
	}
	res := Exec(t, np, append([]string{ChildEnv + "=" + child}, env...), self, "-test.run=^$")
	if res.ExitCode != 0 {
		t.Fatalf("mpitest: child %s on %d ranks exited %d\nstdout:\n%s\nstderr:\n%s",
			child, np, res.ExitCode, res.Stdout, res.Stderr)
	}
	return res
}

// RolesEnv names the role layout a child's World takes (cn:C,mn:M).
const RolesEnv = "DMG_TEST_ROLES"

// World starts MPI in a child and the role layout from RolesEnv.
func World() (*spmd.World, error) {
	rt, err := spmd.StartMPI()
	if err != nil {
		return nil, err
	}
	roles, err := spmd.ParseRoles(os.Getenv(RolesEnv))
	if err != nil {
		return nil, err
	}
	return spmd.NewWorld(rt, roles)
}

// Finish ends a child: Finalize on success; on failure print the error and
// abort the job, so ranks waiting in collectives do not hang and the error
// is not lost behind a Finalize that never returns.
func Finish(w *spmd.World, err error) error {
	if err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: %+v\n", w.Rank(), err)
		w.Abort(1)
		return err
	}
	return w.Finalize()
}
