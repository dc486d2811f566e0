package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// threadNices is the nice value of every thread of this process, from
// /proc/self/task/*/stat (field 19).
func threadNices(t *testing.T) map[string]int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil || len(stats) == 0 {
		t.Skipf("no /proc/self/task here (%v)", err)
	}
	out := map[string]int{}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		// The command name, in parentheses, may hold spaces: count fields
		// after its closing parenthesis (field 3 is the first after it).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		n, err := strconv.Atoi(f[19-3])
		if err != nil {
			t.Fatalf("%s: nice field %q", p, f[19-3])
		}
		out[p] = n
	}
	return out
}

// renice reaches every thread of the process, not only the one that calls
// it, and the threads started afterwards inherit it. It runs in a child
// process, so that the test binary's other tests keep their priority.
func TestReniceEveryThread(t *testing.T) {
	if os.Getenv("DMG_RENICE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReniceEveryThread$", "-test.v")
		cmd.Env = append(os.Environ(), "DMG_RENICE_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	before := threadNices(t)
	if len(before) < 2 {
		t.Fatalf("%d threads; the Go runtime runs several", len(before))
	}
	renice(7)
	for p, n := range threadNices(t) {
		if n != 7 {
			t.Errorf("%s: nice %d after renice(7)", p, n)
		}
	}
	// Threads started now: each goroutine locked to its thread and parked
	// holds that thread, so more of them than the process had threads
	// make the runtime start new ones.
	before = threadNices(t)
	release, parked := make(chan struct{}), make(chan struct{})
	for range len(before) + 2 {
		go func() {
			runtime.LockOSThread()
			parked <- struct{}{}
			<-release
		}()
	}
	for range len(before) + 2 {
		<-parked
	}
	after := threadNices(t)
	close(release)
	started := 0
	for p, n := range after {
		if _, old := before[p]; old {
			continue
		}
		started++
		if n != 7 {
			t.Errorf("%s: nice %d on a thread started after renice(7)", p, n)
		}
	}
	if started == 0 {
		t.Fatalf("no thread started: %d before, %d with the locked goroutines", len(before), len(after))
	}
}
