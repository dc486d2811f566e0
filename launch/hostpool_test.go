package launch_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/testbed"
)

// servePool starts a serve job of mn:2 on hosts 1 and 2 whose launcher
// notices a lost host only after a minute (keepalive), so that the pool
// rides out a short partition, and loads kron:12 as "a" and "b" from hosts
// 3 and 4.
func servePool(t *testing.T, bed *testbed.Bed) *served {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pool.json")
	env := []string{"OMPI_MCA_oob_tcp_keepalive_time=60"}
	sp := startOnHostsEnv(t, bed, 10*time.Minute, "1,2", 2, env, "--roles", "mn:2", "serve", "--pool-file", path, "--mn-mem", "256MiB")
	s := waitServe(t, path, sp, 2)
	s.job = onHosts(bed, "3,4")
	for _, name := range []string{"a", "b"} {
		s.load(t, 2, name, []string{"--graph", "kron:12"})
	}
	return s
}

// The pool's MN host cut off while an attached job computes: the job ends
// within --peer-timeout + 5 s with one line naming the pool's MN, and
// once the link is back the serve job serves its other graph to a new
// job, with the right results.
func TestHostsPoolMNCut(t *testing.T) {
	bed := testbed.Shared(t, 6)
	s := servePool(t, bed)
	p := startOnHosts(t, bed, 2*time.Minute, "3,4", 2, "--roles", "cn:2", "-v", "run", "--pool-file", s.path, "--name", "a",
		"--algo", "pagerank", "--iterations", "100000", "--peer-timeout", faultTimeout.String(), "--timeout", faultTimeout.String())
	waitLog(t, p, "iter 2 ")
	if err := bed.Cut(bed.Host(2)); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	ended := p.wait(faultTimeout + 5*time.Second)
	took := time.Since(cut)
	if err := bed.Heal(bed.Host(2)); err != nil {
		t.Fatal(err)
	}
	if !ended {
		t.Fatalf("still running %v after the pool's MN host was cut (--peer-timeout %v): %s", took.Round(time.Millisecond), faultTimeout, p)
	}
	<-p.done
	lines := dmgLines(p.err.String())
	t.Logf("pool MN host cut while computing → job ended after %.1f s, exit %d: %s", took.Seconds(), p.code, strings.Join(lines, " | "))
	if p.code == 0 || len(lines) != 1 || !strings.Contains(lines[0], "MN 1 of the pool") {
		t.Errorf("want a failed job and one dmg line naming MN 1 of the pool: %s", p)
	}
	noneLeft(t, bed, 5*time.Second, 3, 4) // hosts 1 and 2 hold the serve job
	if s.p.exited() {
		t.Fatalf("the serve job ended with its host's link: %s", s.p)
	}
	s.job = onHosts(bed, "5,6")
	got, q := s.run(t, 2, "b", "bfs")
	if q.code != 0 {
		t.Fatalf("the pool's other graph after the cut healed: %s", q)
	}
	samePoolResults(t, "bfs on b after the cut", "bfs", got, oneJob(t, 2, []string{"--graph", "kron:12"}, "bfs"))
	s.stop(t)
}

// The tcp provider's defect on libfabric 1.17 (docs/design.md: over tcp,
// a job that connects stalls a running job's connections), across hosts:
// a PageRank holder computes on "a" from hosts 3 and 4 while jobs from
// hosts 5 and 6 connect to the pool (runs on "b", dmg ls). The holder may
// be stalled, but is never wrong: it ends with the right results, or
// within its --timeout + 5 s with one line naming the MN it lost.
func TestHostsPoolConnectWhileComputing(t *testing.T) {
	bed := testbed.Shared(t, 6)
	s := servePool(t, bed)
	const iterations, timeout = 1000, 6 * time.Second
	out := filepath.Join(t.TempDir(), "holder.out")
	p := startOnHosts(t, bed, 2*time.Minute, "3,4", 2, "--roles", "cn:2", "-v", "run", "--pool-file", s.path, "--name", "a",
		"--algo", "pagerank", "--iterations", strconv.Itoa(iterations), "--timeout", timeout.String(), "--out", out)
	waitLog(t, p, "iter 2 ")
	s.job = onHosts(bed, "5,6")
	others := 0
	for !p.exited() && others < 6 {
		if _, q := s.run(t, 2, "b", "bfs"); q.code != 0 {
			t.Errorf("a run on the other graph while the holder computes: %s", q)
		}
		s.ls(t)
		others++
	}
	<-p.done
	lines := dmgLines(p.err.String())
	t.Logf("holder: exit %d after %v, %d jobs connected meanwhile %s", p.code, p.elapsed.Round(time.Millisecond), others, strings.Join(lines, " | "))
	switch {
	case p.code == 0:
		if !strings.Contains(p.err.String(), fmt.Sprintf("iter %d ", iterations-1)) {
			t.Errorf("the holder ended early with exit 0: %s", p)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		samePoolResults(t, "the holder", "pagerank", got, oneJob(t, 2, []string{"--graph", "kron:12"}, "pagerank", "--iterations", strconv.Itoa(iterations)))
	case len(lines) != 1 || !strings.Contains(lines[0], "of the pool"):
		t.Errorf("a stalled holder must end with one line naming the pool's MN: %s", p)
	}
	if others == 0 {
		t.Errorf("no job connected while the holder computed")
	}
	s.stop(t)
}

// dmgLines are stderr's "dmg: " lines.
func dmgLines(stderr string) []string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "dmg: ") {
			lines = append(lines, l)
		}
	}
	return lines
}
