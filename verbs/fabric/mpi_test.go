package fabric_test

import (
	"fmt"
	"os"
	"strconv"
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

// yieldMPI stops Open MPI from busy-polling in barriers: an MN waiting in
// MPI would otherwise starve its own progress thread on shared cores
// (shm atomics drop from ~400k/s to ~300/s here).
const yieldMPI = "OMPI_MCA_mpi_yield_when_idle=1"

func TestMain(m *testing.M) {
	mpitest.Main(m, map[string]func() error{
		"suite": childSuite,
		"stuck": childStuck,
		"bench": childBench,
	})
}

func childSuite() error {
	w, err := mpitest.World()
	if err != nil {
		return err
	}
	return mpitest.Finish(w, verbstest.RunRank(w, open, verbs.Config{Provider: os.Getenv("DMG_FABRIC")}))
}

// childStuck: the MN stops progressing; the CN's atomic must fail within
// the timeout, naming the MN's rank, instead of hanging.
func childStuck() error {
	w, err := mpitest.World()
	if err != nil {
		return err
	}
	return mpitest.Finish(w, stuck(w))
}

func stuck(w *spmd.World) error {
	net, err := fabric.Open(w, verbs.Config{PoolBytes: 4096, Provider: os.Getenv("DMG_FABRIC"), Timeout: time.Second})
	if err != nil {
		return err
	}
	// The endpoint is made while the MN progresses: over tcp a new
	// endpoint's first atomics are part of making it (Network.warm).
	var ep verbs.Endpoint
	if w.Role == spmd.CN {
		if ep, err = net.NewEndpoint(); err != nil {
			return err
		}
	}
	if err := w.Comm.Barrier(); err != nil {
		return err
	}
	if w.Role == spmd.MN {
		fabric.PauseProgress(net, true)
	}
	if err := w.Comm.Barrier(); err != nil {
		return err
	}
	if w.Role == spmd.CN {
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
		// Over shm the error tells a stopped MN from a wedged lock or a
		// lost operation: the MN's progress stopped, nobody holds its
		// lock, and the FAA waits in its queue, unanswered.
		if os.Getenv("DMG_FABRIC") == "shm" {
			for _, want := range []string{"queue lock free", "1 command queued", "this endpoint's: 0 responses unread"} {
				if !strings.Contains(err.Error(), want) {
					return errors.Errorf("flush to a stuck shm MN: %v; expected it to say %q", err, want)

				}
			}
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
			mpitest.Run(t, roles.Size(), "suite", "DMG_FABRIC="+c.prov, "DMG_TEST_ROLES="+c.roles, yieldMPI)
		})
	}
}

func TestMPIStuckPeer(t *testing.T) {
	for _, prov := range []string{"shm", "tcp"} {
		t.Run(prov, func(t *testing.T) {
			mpitest.Run(t, 2, "stuck", "DMG_FABRIC="+prov, "DMG_TEST_ROLES=cn:1,mn:1", yieldMPI)
		})
	}
}

// childBench runs verbs.Bench on CN 0 against MN 0 and prints the table
// (DMG_BENCH_MS per case, default 20 ms).
func childBench() error {
	w, err := mpitest.World()
	if err != nil {
		return err
	}
	return mpitest.Finish(w, bench(w))
}

func bench(w *spmd.World) error {
	net, err := fabric.Open(w, verbs.Config{PoolBytes: 1 << 20, Provider: os.Getenv("DMG_FABRIC")})
	if err != nil {
		return err
	}
	if w.Role == spmd.CN && w.Index == 0 {
		ms, _ := strconv.Atoi(os.Getenv("DMG_BENCH_MS"))
		if ms == 0 {
			ms = 20
		}
		t0 := time.Now()
		ep, err := net.NewEndpoint()
		if err != nil {
			return err
		}
		t1 := time.Now()
		base, _ := verbs.MakeAddr(0, 0)
		res, err := verbs.Bench(ep, verbs.BenchConfig{Base: base, Span: 1 << 20, Duration: time.Duration(ms) * time.Millisecond})
		if err != nil {
			return err
		}
		t2 := time.Now()
		if err := ep.Close(); err != nil {
			return err
		}
		fmt.Printf("provider %s: endpoint %v, bench %v, close %v\n", net.Provider(), t1.Sub(t0), t2.Sub(t1), time.Since(t2))
		if err := res.WriteTable(os.Stdout); err != nil {
			return err
		}
		if len(res.Rows) != 4*4+4+2*(4+1) {
			return errors.Errorf("bench produced %d rows, want %d", len(res.Rows), 4*4+4+2*(4+1))
		}
		for _, r := range res.Rows {
			if r.Ops == 0 || r.OpsPerSec <= 0 {
				return errors.Errorf("bench row %+v measured nothing", r)
			}
		}
	}
	return net.Close()
}

func TestMPIBench(t *testing.T) {
	for _, prov := range []string{"shm", "tcp"} {
		t.Run(prov, func(t *testing.T) {
			res := mpitest.Run(t, 2, "bench", "DMG_FABRIC="+prov, "DMG_TEST_ROLES=cn:1,mn:1", yieldMPI)
			if !strings.Contains(res.Stdout, "call per op") {
				t.Errorf("bench table lacks the per-op-call rows:\n%s", res.Stdout)
			}
			t.Logf("\n%s", res.Stdout)
		})
	}
}
