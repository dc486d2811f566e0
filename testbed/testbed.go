package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bed is a running test bed of emulated hosts.
type Bed struct {
	script string
	n      int
}

var (
	mu     sync.Mutex
	shared *Bed
)

// script is scripts/testbed.sh of this checkout.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "scripts", "testbed.sh")
}

// Available says whether hosts can be made here, and if not, why.
func Available() (bool, string) {
	out, err := exec.Command(script(), "check").CombinedOutput()
	if err != nil {
		return false, strings.TrimSpace(string(out))
	}
	return true, ""
}

// Shared brings up (once per test binary) a test bed of at least n hosts
// and returns it; Teardown removes it. Where hosts cannot be made, the test
// skips with the reason, unless CI is set: there it fails, since nothing in
// CI may skip silently.
func Shared(t testing.TB, n int) *Bed {
	t.Helper()
	if testing.Short() {
		t.Skip("test bed of emulated hosts: not with -short")
	}
	if ok, why := Available(); !ok {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI must run the tests across hosts)", why)
		}
		t.Skip(why)
	}
	mu.Lock()
	defer mu.Unlock()
	if shared == nil || shared.n < n {
		out, err := exec.Command(script(), "up", strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			t.Fatalf("testbed up %d: %v\n%s", n, err, out)
		}
		shared = &Bed{script: script(), n: n}
	}
	// A host killed by an earlier test comes back, a cut link is healed,
	// what an earlier test left running ends.
	if out, err := exec.Command(script(), "reset").CombinedOutput(); err != nil {
		t.Fatalf("testbed reset: %v\n%s", err, out)
	}
	return shared
}

// Teardown removes the shared test bed, if one was brought up (call it
// from TestMain after the tests).
func Teardown() {
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		if slurmUp {
			slurmDown() // Slurm's daemons, then the hosts
		} else {
			exec.Command(script(), "down").Run()
		}
		shared = nil
	}
}

// Host is the name of host i (1-based).
func (b *Bed) Host(i int) string { return fmt.Sprintf("dmg%s-h%d", id(), i) }

// Hosts lists hosts 1..k, comma-separated (for mpirun --host).
func (b *Bed) Hosts(k int) string {
	h := make([]string, k)
	for i := range h {
		h[i] = b.Host(i + 1)
	}
	return strings.Join(h, ",")
}

func id() string {
	if v := os.Getenv("DMG_TESTBED_ID"); v != "" {
		return v
	}
	return "1"
}

// Script is the path of scripts/testbed.sh.
func (b *Bed) Script() string { return b.script }

// Mpirun is `testbed.sh mpirun args...`: mpirun over the hosts, with
// the environment Open MPI needs here (root, oversubscription).
func (b *Bed) Mpirun(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, b.script, append([]string{"mpirun"}, args...)...)
	cmd.Env = append(os.Environ(), "OMPI_MCA_orte_execute_quiet=1")
	return cmd
}

// Exec runs a shell command on host h and returns its combined output.
func (b *Bed) Exec(h, command string) (string, error) {
	out, err := exec.Command(b.script, "exec", h, command).CombinedOutput()
	return string(out), err
}

// Cut takes host h's link down; Heal brings it back.
func (b *Bed) Cut(h string) error  { return b.do("cut", h) }
func (b *Bed) Heal(h string) error { return b.do("heal", h) }

// Blip cuts host h's link for d, then heals it (one call at real-time
// priority, so that the heal is on time on a busy machine).
func (b *Bed) Blip(h string, d time.Duration) error {
	// At real-time priority from its start (the script raises itself
	// too, where chrt is missing): the job's retries during the cut
	// starve an ordinary process, and the cut lasts as long as they do.
	args := []string{b.script, "blip", h, strconv.FormatFloat(d.Seconds(), 'f', 3, 64)}
	if chrt, err := exec.LookPath("chrt"); err == nil {
		args = append([]string{chrt, "-f", "50"}, args...)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("testbed blip %s: %v: %s", h, err, out)
	}
	return nil
}

// Kill kills host h: every process in its PID namespace. Shared brings it
// back for the next test.
func (b *Bed) Kill(h string) error { return b.do("kill", h) }

func (b *Bed) do(verb, h string) error {
	if out, err := exec.Command(b.script, verb, h).CombinedOutput(); err != nil {
		return fmt.Errorf("testbed %s %s: %v: %s", verb, h, err, out)
	}
	return nil
}

// Procs lists what runs on host h, beyond its init: "pid command" of
// each live (not zombie) process in its PID namespace.
func (b *Bed) Procs(h string) []string {
	var procs []string
	for _, p := range b.procs(h) {
		if p.state != 'Z' && p.state != 'X' {
			procs = append(procs, fmt.Sprintf("%d %s", p.pid, p.comm))
		}
	}
	return procs
}

// PidOf finds the pid, as this machine sees it, of the live process on
// host h whose command line contains every word of match (0: none).
func (b *Bed) PidOf(h string, match ...string) int {
	for _, p := range b.procs(h) {
		if p.state == 'Z' || p.state == 'X' {
			continue
		}
		all := true
		for _, m := range match {
			all = all && strings.Contains(p.cmdline, m)
		}
		if all {
			return p.pid
		}
	}
	return 0
}

type proc struct {
	pid     int
	comm    string
	state   byte
	cmdline string
}

// procs lists the processes in host h's PID namespace but its init
// (none when the host is down), read from this machine's /proc.
func (b *Bed) procs(h string) []proc {
	raw, err := os.ReadFile(filepath.Join(stateDir(), h+".pid"))
	if err != nil {
		return nil
	}
	init, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", init))
	if err != nil {
		return nil
	}
	if self, _ := os.Readlink("/proc/self/ns/pid"); ns == self { // the init is gone, its pid reused
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == init {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err != nil || l != ns {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < 0 || end+2 >= len(s) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, proc{pid: pid, comm: s[open+1 : end], state: s[end+2], cmdline: strings.ReplaceAll(string(cmdline), "\x00", " ")})
	}
	return out
}

// stateDir is scripts/testbed.sh's state directory.
func stateDir() string { return "/run/dmg-testbed-" + id() }
