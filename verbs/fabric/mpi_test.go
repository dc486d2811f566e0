package fabric_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/fabric"
	"github.com/dmg-hpc/dmg/verbs/verbstest"
)

func TestMain(m *testing.M) {
	mpitest.Main(m, map[string]func() error{
		"suite": childSuite,
		"stuck": childStuck,
	})
}

// startWorld starts MPI and the role layout from DMG_TEST_ROLES.
func startWorld() (*spmd.World, error) {
	rt, err := spmd.StartMPI()
	if err != nil {
		return nil, err
	}
	roles, err := spmd.ParseRoles(os.Getenv("DMG_TEST_ROLES"))
	if err != nil {
		return nil, err
	}
	return spmd.NewWorld(rt, roles)
}

func childSuite() error {
	w, err := startWorld()
	if err != nil {
		return err
	}
	defer w.Finalize()
	return verbstest.RunRank(w, open, verbs.Config{Provider: os.Getenv("DMG_FABRIC")})
}

// childStuck: the MN stops progressing; the CN's atomic must fail within
// the timeout, naming the MN's rank, instead of hanging.
func childStuck() error {
	w, err := startWorld()
	if err != nil {
		return err
	}
	defer w.Finalize()
	net, err := fabric.Open(w, verbs.Config{PoolBytes: 4096, Provider: os.Getenv("DMG_FABRIC"), Timeout: time.Second})
	if err != nil {
		return err
	}
	if w.Role == spmd.MN {
		fabric.PauseProgress(net, true)
	}
	if err := w.Comm.Barrier(); err != nil {
		return err
	}
	if w.Role == spmd.CN {
		ep, err := net.NewEndpoint()
		if err != nil {
			return err
		}
		a, _ := verbs.MakeAddr(0, 0)
		if err := ep.(verbs.Atomics).FAA64(a, 1, nil); err != nil {
			return err
		}
		start := time.Now()
		err = ep.Flush()
		took := time.Since(start)
		if err == nil {
			return errors.New("flush to a stuck MN succeeded; expected a timeout")
		}
		if !strings.Contains(err.Error(), "MN 0 (rank 1)") || took > 5*time.Second {
			return errors.Errorf("flush to a stuck MN: %v after %v; expected an error naming MN 0 (rank 1) within ~1s", err, took)
		}
		if ep.Flush() == nil || ep.Read(make([]byte, 1), a) == nil {
			return errors.New("endpoint usable after a timed-out flush")
		}
	}
	if err := w.Comm.Barrier(); err != nil {
		return err
	}
	if w.Role == spmd.MN {
		fabric.PauseProgress(net, false)
	}
	return net.Close()
}

func TestMPISuite(t *testing.T) {
	for _, c := range []struct {
		prov  string
		roles string
	}{
		{"shm", "cn:2,mn:2"},
		{"tcp", "cn:2,mn:1"},
	} {
		t.Run(c.prov+"/"+c.roles, func(t *testing.T) {
			roles, err := spmd.ParseRoles(c.roles)
			if err != nil {
				t.Fatal(err)
			}
			mpitest.Run(t, roles.Size(), "suite", "DMG_FABRIC="+c.prov, "DMG_TEST_ROLES="+c.roles)
		})
	}
}

func TestMPIStuckPeer(t *testing.T) {
	for _, prov := range []string{"shm", "tcp"} {
		t.Run(prov, func(t *testing.T) {
			mpitest.Run(t, 2, "stuck", "DMG_FABRIC="+prov, "DMG_TEST_ROLES=cn:1,mn:1")
		})
	}
}
