package launch_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/fabric"
)

// A served pool over shm outlives any number of its clients' endpoints.
// libfabric 1.17's shm gives every endpoint that reaches an MN one of 256
// slots in the MN's peer map for the MN's lifetime; past that, an atomic's
// answer went astray and every later job's lease CAS timed out (after
// about 36 jobs of two CNs). The MN now forgets departed endpoints
// (verbs/fabric/reclaim.go). Here 400 endpoints, one after another at 50
// a second, each reach the serve job's MN with an atomic (which needs the
// MN's answer) and close; every atomic completes, and a few seconds later
// the MN maps none of their regions.
func TestPoolShmClientsReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	s := startServe(t, 1, "--fabric", "shm")
	rts, err := spmd.NewLocal(1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := spmd.NewWorld(rts[0], spmd.Roles{CN: 1})
	if err != nil {
		t.Fatal(err)
	}
	net, err := fabric.Attach(w, s.file.Provider, s.file.Addrs(), verbs.Config{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	mn := mnPid(t, s.file.MNs[0].Name)
	a, err := verbs.MakeAddr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	const endpoints = 400
	most := 0
	for i := range endpoints {
		ep, err := net.NewEndpoint()
		if err != nil {
			t.Fatalf("endpoint %d: %v", i, err)
		}
		var prev uint64
		if err = ep.(verbs.Atomics).FAA64(a, 0, &prev); err == nil {
			err = ep.Flush()
		}
		if err != nil {
			t.Fatalf("endpoint %d of %d: the MN's answer to an atomic: %v", i, endpoints, err)
		}
		if err := ep.Close(); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			most = max(most, len(clientRegions(t, mn)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := clientRegions(t, mn)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the serve job's MN (pid %d) still maps %d departed client regions 5 s after the last closed, e.g. %s", mn, len(left), left[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d endpoints; the MN mapped at most %d client regions at once", endpoints, most)
}

// mnPid is the pid of the serve job's MN whose shm endpoint name is name.
func mnPid(t *testing.T, name []byte) int {
	t.Helper()
	pid, _, _, ok := verbs.ParseRuntimeName(string(bytes.TrimRight(name, "\x00")))
	if !ok {
		t.Fatalf("the pool file's MN name %q is not a runtime name", name)
	}
	return pid
}

// clientRegions lists the other processes' shm endpoint regions that
// process pid maps.
func clientRegions(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatalf("the serve job's MN: %v", err)
	}
	var out []string
	for _, m := range verbs.MappedRuntime(b) {
		if m.PID != pid {
			out = append(out, m.Name)
		}
	}
	return out
}
