//go:build !nompi

package spmd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/pkg/errors"
)

func TestMain(m *testing.M) {
	mpitest.Main(m, map[string]func() error{
		"collectives": mpiCollectives,
		"abort":       mpiAbort,
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
