//go:build !nompi

package spmd_test

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/pkg/errors"
)

func TestMain(m *testing.M) {
	mpitest.Main(m, map[string]func() error{
		"collectives": mpiCollectives,
		"abort":       mpiAbort,
		"idle-wait":   mpiIdleWait,
	})
}

func rolesFromEnv() (spmd.Roles, error) {
	return spmd.ParseRoles(os.Getenv("DMG_TEST_ROLES"))
}

func mpiCollectives() error {
	rt, err := spmd.StartMPI()
	if err != nil {
		return err
	}
	roles, err := rolesFromEnv()
	if err != nil {
		return err
	}
	if ok, rank, _ := spmd.Launched(); !ok || rank != rt.World().Rank() {
		return errors.Errorf("Launched() disagrees with MPI rank %d", rt.World().Rank())
	}
	if !strings.Contains(rt.Library(), "Open MPI") {
		return errors.Errorf("library %q", rt.Library())
	}
	for range 2 {
		if err := spmd.ExerciseComm(rt, roles); err != nil {
			return err
		}
	}
	return rt.Finalize()
}

// mpiAbort: rank 1 aborts while the others wait in a barrier forever.
func mpiAbort() error {
	rt, err := spmd.StartMPI()
	if err != nil {
		return err
	}
	if rt.World().Rank() == 1 {
		rt.Abort(7)
	}
	return rt.World().Barrier()
}

// mpiIdleWait: the last rank reaches a barrier and an all-reduce a second
// after the others, which must wait for it without spending the second's
// CPU (Open MPI's blocking collectives poll and yield, a core each while
// nothing else runs), and still sum right.
func mpiIdleWait() error {
	rt, err := spmd.StartMPI()
	if err != nil {
		return err
	}
	w := rt.World()
	last := w.Rank() == w.Size()-1
	cpu := func() time.Duration {
		var u syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	for _, step := range []string{"barrier", "all-reduce"} {
		if last {
			time.Sleep(time.Second)
		}
		c0, t0 := cpu(), time.Now()
		v := []float64{float64(w.Rank() + 1)}
		if step == "barrier" {
			err = w.Barrier()
		} else {
			err = w.AllReduceFloat64(v, spmd.Sum)
		}
		if err != nil {
			return err
		}
		if n := float64(w.Size()); step != "barrier" && v[0] != n*(n+1)/2 {
			return errors.Errorf("rank %d: the all-reduce summed %v, want %v", w.Rank(), v[0], n*(n+1)/2)
		}
		if used, waited := cpu()-c0, time.Since(t0); !last && used > waited*3/10 {
			return errors.Errorf("rank %d: waiting %v in a %s took %v of CPU", w.Rank(), waited, step, used)
		}
	}
	return rt.Finalize()
}

func TestMPIWaitsIdle(t *testing.T) {
	mpitest.Run(t, 3, "idle-wait")
}

func TestMPICollectives(t *testing.T) {
	for _, roles := range []string{"cn:1,mn:1", "cn:2,mn:1", "cn:3,mn:2"} {
		t.Run(roles, func(t *testing.T) {
			r, _ := spmd.ParseRoles(roles)
			mpitest.Run(t, r.Size(), "collectives", "DMG_TEST_ROLES="+roles)
		})
	}
}

func TestMPIAbortEndsEveryRank(t *testing.T) {
	self, _ := os.Executable()
	res := mpitest.Exec(t, 3, []string{mpitest.ChildEnv + "=abort"}, self, "-test.run=^$")
	if res.ExitCode == 0 {
		t.Fatalf("aborted job exited 0\n%s%s", res.Stdout, res.Stderr)
	}
	if res.Elapsed.Seconds() > 20 {
		t.Fatalf("aborted job took %v to end", res.Elapsed)
	}
}
