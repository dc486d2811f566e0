package launch_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

// Each kernel on generated graphs, under mpirun over shm, agrees with its
// serial verifier (--verify fails the run otherwise): BC from one source
// and from several; integer weights, stored in one and two bytes.
func TestKronVerified(t *testing.T) {
	five := []string{"pagerank", "bfs", "wcc", "sssp", "lcc"}
	w8, w16 := undirectedWELOf(t, 255), undirectedWELOf(t, 60000)
	for _, tc := range []struct {
		graph string
		extra []string
		algos []string
		store string // in the store line
	}{
		{"kron:14", nil, five, ""}, {"kron:12", []string{"--weighted"}, five, "float32 weights"},
		{"kron:14", []string{"--refrd-puller", "--refrd-min", "4"}, five, ""},
		{"kron:12", nil, []string{"tc", "bc"}, ""}, {"kron:12", []string{"--source", "0,3,9,4000"}, []string{"bc"}, ""},
		{w8, []string{"--weighted"}, []string{"sssp"}, "lists as 5-byte records, uint8 weights"},
		{w16, []string{"--weighted", "--compress"}, []string{"sssp"}, "uint16 weights"},
	} {
		for _, a := range tc.algos {
			t.Run(filepath.Base(tc.graph)+"/"+a+strings.Join(tc.extra, ""), func(t *testing.T) {
				args := append([]string{"--roles", "cn:2,mn:2", "run", "--algo", a, "--graph", tc.graph, "--verify"}, tc.extra...)
				res := mpitest.Exec(t, 4, nil, dmgBin(t), args...)
				if res.ExitCode != 0 {
					t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
				}
				if !strings.Contains(res.Stdout, "verified: the serial verifier accepts the result") {
					t.Fatalf("no verification line:\n%s", res.Stdout)
				}
				if a == "sssp" && !strings.Contains(res.Stdout, tc.store) {
					t.Fatalf("the store line does not say %q:\n%s", tc.store, res.Stdout)
				}
			})
		}
	}
}

// Bad input to a run: one line from one rank, exit 2, every rank gone fast,
// and nothing written at --out.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	neg := filepath.Join(dir, "neg.wel")
	if err := os.WriteFile(neg, []byte("1 2 0.5\n2 3 -1.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.el")
	if err := os.WriteFile(bad, []byte("1 2\n2 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "keep.out")
	if err := os.WriteFile(existing, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown algorithm", []string{"--algo", "louvain", "--graph", "kron:6"}, `unknown algorithm "louvain"`},
		{"no algorithm", []string{"--graph", "kron:6"}, "--algo is required"},
		{"source not in graph", []string{"--algo", "bfs", "--graph", "kron:6", "--source", "999999"}, "source vertex 999999 is not a vertex"},
		{"negative weight", []string{"--algo", "sssp", "--graph", neg}, "negative"},
		{"malformed file", []string{"--algo", "bfs", "--graph", bad}, "bad.el:2"},
		{"missing file", []string{"--algo", "bfs", "--graph", filepath.Join(dir, "nope.el")}, "nope.el"},
		{"missing out dir", []string{"--algo", "bfs", "--graph", "kron:6", "--out", filepath.Join(dir, "no/such/dir/x")}, "does not exist"},
		{"mn-mem too small", []string{"--algo", "bfs", "--graph", "kron:10", "--mn-mem", "4KiB"}, "--mn-mem"},
		{"bad mn-mem", []string{"--algo", "bfs", "--graph", "kron:6", "--mn-mem", "lots"}, "not a size"},
		{"unknown fabric", []string{"--algo", "bfs", "--graph", "kron:6", "--fabric", "carrier-pigeon"}, "carrier-pigeon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--roles", "cn:2,mn:1", "run", "--out", existing}, tc.args...)
			if strings.Contains(strings.Join(tc.args, " "), "--out") {
				args = append([]string{"--roles", "cn:2,mn:1", "run"}, tc.args...)
			}
			res := mpitest.Exec(t, 3, nil, dmgBin(t), args...)
			if res.ExitCode == 0 {
				t.Fatalf("exit 0\n%s", res.Stdout)
			}
			lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "dmg: ") || !strings.Contains(lines[0], tc.want) {
				t.Fatalf("stderr should be one line containing %q, got:\n%s", tc.want, res.Stderr)
			}
			if res.ExitCode != 2 {
				t.Errorf("exit %d, want 2 (%s)", res.ExitCode, lines[0])
			}
			if res.Elapsed.Seconds() > 30 { // no hang (at load 10: 20–26 s)
				t.Errorf("took %v", res.Elapsed)
			}
			if b, _ := os.ReadFile(existing); string(b) != "precious\n" {
				t.Errorf("--out file was modified: %q", b)
			}
		})
	}
}

// --out and --json write complete files, in-process.
func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	out, js := filepath.Join(dir, "pr.out"), filepath.Join(dir, "pr.json")
	_, errOut, code := runLocal(t, "--local", "--roles", "cn:2,mn:2", "run", "--algo", "pagerank", "--graph", "kron:8", "--out", out, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 256 {
		t.Errorf("%d output lines, want 256", n)
	}
	j, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"algo"`, `"vertices"`, `"edges"`, `"cn"`, `"mn"`, `"mode"`, `"load_s"`, `"partition_s"`, `"compute_s"`, `"total_s"`,
		`"iterations"`, `"dense"`, `"active_vertices"`, `"active_edges"`, `"seconds"`, `"reads"`, `"writes"`, `"atomics"`,
		`"bytes_read"`, `"bytes_written"`, `"doorbells"`, `"cn_cache_bytes_max"`, `"mn_pool_bytes"`} {
		if !strings.Contains(string(j), key) {
			t.Errorf("JSON report lacks %s", key)
		}
	}
	// The set-up before the first iteration is part of the compute time.
	var r struct {
		Times struct {
			Compute float64 `json:"compute_s"`
			Setup   float64 `json:"setup_s"`
		} `json:"times"`
	}
	if err := json.Unmarshal(j, &r); err != nil {
		t.Fatal(err)
	}
	if r.Times.Setup <= 0 || r.Times.Setup > r.Times.Compute {
		t.Errorf("set-up %gs of a compute of %gs", r.Times.Setup, r.Times.Compute)
	}
}

// `--json -` puts the JSON alone on stdout (a parser reads it whole) and
// the text report on stderr; both say what ran: version, command line,
// parameters with the source and how it was chosen.
func TestJSONOnStdout(t *testing.T) {
	res := mpitest.Exec(t, 2, nil, dmgBin(t), "--roles", "cn:1,mn:1", "--json", "-", "run", "--algo", "bfs", "--graph", "kron:10", "--seed", "7")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	var rep struct {
		Version, Command string
		Parameters       struct {
			Source     *uint64
			SourceFrom string `json:"source_from"`
			Seed       uint64
		}
		Summary struct {
			Text    string
			Reached uint64
		}
		CNCache uint64   `json:"cn_cache_bytes_max"`
		CNRSS   uint64   `json:"cn_peak_rss_bytes"`
		MNRSS   uint64   `json:"mn_peak_rss_bytes"`
		MNUsed  []uint64 `json:"mn_used_bytes"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, res.Stdout)
	}
	// Each process's peak resident set holds at least its cache (a CN)
	// or its pool's used bytes (an MN), and a Go runtime; far below 4 GiB
	// on kron:10.
	if rep.CNRSS < max(rep.CNCache, 4<<20) || rep.CNRSS > 4<<30 || len(rep.MNUsed) == 0 || rep.MNRSS < max(rep.MNUsed[0], 4<<20) || rep.MNRSS > 4<<30 {
		t.Errorf("peak RSS: CN %d bytes (cache %d), MN %d bytes (used %v)", rep.CNRSS, rep.CNCache, rep.MNRSS, rep.MNUsed)
	}
	if !strings.Contains(res.Stderr, "per CN (budget 1.0 GiB, --cn-mem), ") || !strings.Contains(res.Stderr, " per MN (the largest)") {
		t.Errorf("text report lacks the peak RSS:\n%s", res.Stderr)
	}
	if rep.Version == "" || !strings.Contains(rep.Command, "--algo bfs") || rep.Parameters.Source == nil ||
		rep.Parameters.SourceFrom != "most out-edges" || rep.Parameters.Seed != 7 {
		t.Errorf("report does not say what ran: %+v", rep)
	}
	if rep.Summary.Reached == 0 || rep.Summary.Reached > 1024 || !strings.Contains(rep.Summary.Text, "vertices reached, depth at most") {
		t.Errorf("BFS summary %+v", rep.Summary)
	}
	for _, want := range []string{"DMG bfs on kron:10", "parameters: source ", "(most out-edges), seed 7; dmg ", "result: " + rep.Summary.Text} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("text report on stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
}

// dmg --version names the build.
func TestVersion(t *testing.T) {
	out, _, code := runLocal(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "dmg version ") || len(strings.TrimSpace(out)) <= len("dmg version ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

// A rank that dies mid-run ends the whole job within seconds, with a
// non-zero exit: no rank is left waiting for it.
func TestDeadPeerEndsJob(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	// An MN, which rank 0 names; and rank 0 itself, which rank 1 names.
	for _, c := range []struct {
		rank int
		want string
	}{{3, "rank 3 (mn 1, pid %d on "}, {0, "rank 0 (cn 0, pid %d on "}} {
		t.Run(fmt.Sprintf("rank%d", c.rank), func(t *testing.T) {
			// The run is endless and computing before the victim is
			// chosen: a run that could end first left the test looking
			// for ranks that had already exited.
			cmd, out, done := startComputing(t, "cn:2,mn:2", 4, "--iterations", "1000000")
			pids := rankPIDs(t, cmd.Process.Pid)
			victim, ok := pids[c.rank]
			if !ok {
				cmd.Process.Kill()
				t.Fatalf("no pid for rank %d", c.rank)
			}
			killed := time.Now()
			if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
				t.Fatalf("kill %d: %v", victim, err)
			}
			select {
			case err := <-done:
				if err == nil {
					t.Fatalf("job exited 0 after rank %d was killed:\n%s", victim, out.String())
				}
				if d := time.Since(killed); d > 20*time.Second {
					t.Errorf("job took %v to end after a rank died", d)
				}
				want := fmt.Sprintf(c.want, victim)
				if n := strings.Count(out.String(), "dmg: "); n != 1 || !strings.Contains(out.String(), want) {
					t.Errorf("%d \"dmg: \" lines; want one naming the dead rank (%q):\n%s", n, want, out.String())
				}
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("job still running 60 s after a rank died:\n%s", out.String())
			}
			ranksGone(t, pids)
		})
	}
}

// SIGTERM or SIGINT to the ranks (what a batch system sends) ends the job:
// one line from rank 0 naming the signal and the phase, exit status
// 128 + the signal, every process gone within seconds, the old output
// untouched and no temporary left beside it.
func TestInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	for _, c := range []struct {
		sig  syscall.Signal
		name string
		code int
	}{{syscall.SIGTERM, "SIGTERM", 143}, {syscall.SIGINT, "SIGINT", 130}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			outPath := filepath.Join(dir, "pr.out")
			if err := os.WriteFile(outPath, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd, stderr, done := startComputing(t, "cn:1,mn:1", 2, "--iterations", "1000000", "--out", outPath)
			pids := rankPIDs(t, cmd.Process.Pid)
			if len(pids) != 2 {
				cmd.Process.Kill()
				t.Fatalf("ranks %v; want 2", pids)
			}
			sent := time.Now()
			for _, pid := range pids {
				syscall.Kill(pid, c.sig)
			}
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 15 s after %s", c.name)
			}
			if took := time.Since(sent); took > 10*time.Second {
				t.Errorf("took %v to end", took)
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			want := "dmg: interrupted by " + c.name + " after "
			if n := strings.Count(stderr.String(), want); n != 1 || !strings.Contains(stderr.String(), "while computing; no output written") {
				t.Errorf("%d lines %q (want 1, naming the phase):\n%s", n, want, stderr.String())
			}
			if b, err := os.ReadFile(outPath); err != nil || string(b) != "old\n" {
				t.Errorf("--out after the interrupt: %q, %v; want it untouched", b, err)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
				t.Errorf("temporaries left: %v", left)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer the test reads while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rankPIDs maps the world ranks of an mpirun's children to their pids
// (from OMPI_COMM_WORLD_RANK in their environment).
func rankPIDs(t *testing.T, mpirun int) map[int]int {
	t.Helper()
	b, _ := exec.Command("pgrep", "-P", strconv.Itoa(mpirun)).Output()
	out := map[int]int{}
	for _, p := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(p)
		env, err := os.ReadFile(filepath.Join("/proc", p, "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if v, ok := strings.CutPrefix(kv, "OMPI_COMM_WORLD_RANK="); ok {
				r, _ := strconv.Atoi(v)
				out[r] = pid
			}
		}
	}
	return out
}

// ranksGone fails the test if a rank of an ended job (pids, by rank) is
// still alive (a zombie has ended) 3 s later; it kills what it finds.
func ranksGone(t *testing.T, pids map[int]int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left := map[int]int{}
		for r, pid := range pids {
			if _, live := liveSession(pid); live {
				left[r] = pid
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for r, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("rank %d (pid %d) still running 3 s after the job ended", r, pid)
			}
			return
		}
	}
}

// startComputing starts a long PageRank under mpirun with -v and waits
// until rank 0 logs its third iteration.
func startComputing(t *testing.T, roles string, np int, extra ...string) (*exec.Cmd, *syncBuffer, chan error) {
	t.Helper()
	args := append([]string{"-q", "-np", strconv.Itoa(np), dmgBin(t), "--roles", roles, "-v", "run", "--algo", "pagerank", "--graph", "kron:14"}, extra...)
	cmd := exec.Command(mpitest.Mpirun(t), args...)
	cmd.Env = append(os.Environ(), mpitest.Env()...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "iter 2 ") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run never reached its third iteration:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, stderr, done
}

// stopAndAwaitEnd stops rank victim of the job cmd (its processes pids)
// and waits for the job to end: within timeout plus 5 s, with a non-zero
// status. It returns the job's stderr.
func stopAndAwaitEnd(t *testing.T, cmd *exec.Cmd, done chan error, stderr *syncBuffer, pids map[int]int, victim int, timeout time.Duration) string {
	t.Helper()
	stopped := time.Now()
	syscall.Kill(pids[victim], syscall.SIGSTOP)
	select {
	case <-done:
	case <-time.After(timeout + 15*time.Second):
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		t.Fatalf("still running %v after SIGSTOP of rank %d:\n%s", time.Since(stopped), victim, stderr.String())
	}
	if took := time.Since(stopped); took > timeout+5*time.Second {
		t.Errorf("ended %v after the stop; want within %v", took, timeout+5*time.Second)
	}
	if cmd.ProcessState.ExitCode() == 0 {
		t.Errorf("exit 0 after rank %d was stopped", victim)
	}
	return stderr.String()
}

// A frozen peer (SIGSTOP), CN or MN, ends the job within --peer-timeout
// plus a few seconds, with one line naming it; every process goes. A
// stopped MN is seen by its own word not moving: over shm the CNs' READs
// and WRITEs of its table are copied by the CNs themselves, so the table
// still answers.
func TestPeerStalled(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	const timeout = 6 * time.Second
	for _, c := range []struct {
		rank int
		want string
	}{{1, "rank 1 (cn 1 on "}, {2, "rank 2 (mn 0 on "}} {
		t.Run(fmt.Sprintf("rank%d", c.rank), func(t *testing.T) {
			cmd, stderr, done := startComputing(t, "cn:2,mn:2", 4, "--iterations", "1000000", "--peer-timeout", timeout.String())
			pids := rankPIDs(t, cmd.Process.Pid)
			if _, ok := pids[c.rank]; !ok {
				cmd.Process.Kill()
				t.Fatalf("no pid for rank %d in %v", c.rank, pids)
			}
			msg := stopAndAwaitEnd(t, cmd, done, stderr, pids, c.rank, timeout)
			if n := strings.Count(msg, "peers stalled: "); n != 1 || !strings.Contains(msg, c.want) {
				t.Errorf("%d stall lines; want one containing %q:\n%s", n, c.want, msg)
			}
			ranksGone(t, pids)
		})
	}
}

// Before the fabric is up (the heartbeats are in DM), a stopped peer on
// the same host is seen in /proc: here a rank is stopped while the CNs
// still build a kron:21 graph (seconds; the others then wait for it at
// the fabric's opening), and it ends the job within --peer-timeout plus a
// few seconds.
func TestPeerStoppedWhileReading(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	const timeout = 4 * time.Second
	for _, c := range []struct {
		rank int
		want string
	}{{1, "rank 1 (cn 1, pid "}, {2, "rank 2 (mn 0, pid "}} {
		t.Run(fmt.Sprintf("rank%d", c.rank), func(t *testing.T) {
			cmd := exec.Command(mpitest.Mpirun(t), "-q", "-np", "4", dmgBin(t), "--roles", "cn:2,mn:2", "run", "--algo", "bfs", "--graph", "kron:21", "--peer-timeout", timeout.String())
			cmd.Env = append(os.Environ(), mpitest.Env()...)
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var pids map[int]int
			for deadline := time.Now().Add(30 * time.Second); len(pids) < 4; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("ranks %v never all started", pids)
				}
				pids = rankPIDs(t, cmd.Process.Pid)
			}
			time.Sleep(500 * time.Millisecond) // every rank past MPI's start, the CNs building the graph
			msg := stopAndAwaitEnd(t, cmd, done, stderr, pids, c.rank, timeout)
			syscall.Kill(pids[c.rank], syscall.SIGKILL)
			if n := strings.Count(msg, "peers stalled: "); n != 1 || !strings.Contains(msg, c.want) || !strings.Contains(msg, "has been stopped for") {
				t.Errorf("%d stall lines; want one naming %q as stopped:\n%s", n, c.want, msg)
			}
		})
	}
}

// A peer stopped for less than --peer-timeout is slow, not stalled: the
// job finishes.
func TestShortStopSurvived(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	cmd, stderr, done := startComputing(t, "cn:2,mn:1", 3, "--iterations", "400", "--peer-timeout", "10s")
	pids := rankPIDs(t, cmd.Process.Pid)
	victim := pids[1]
	syscall.Kill(victim, syscall.SIGSTOP)
	time.Sleep(4 * time.Second)
	syscall.Kill(victim, syscall.SIGCONT)
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("did not finish:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d after a 4 s stop with --peer-timeout 10s:\n%s", code, stderr.String())
	}
}

// A CN whose share's rows exceed --load-mem builds and loads them window
// by window, each in a pass over the text input of its own, under mpirun
// over shm: the results are those of a load that builds them whole, bit
// for bit (a directed graph, whose in-rows are windowed too, and a
// weighted kernel), with the same edges and vertices in place. The
// unweighted rows are laid out from their degrees (job's fromDegrees),
// without a sweep to measure them: the lists of a graph without parallel
// edges take as much DM as measured ones, a generator's (whose parallel
// edges the rooms count) at least as much.
func TestLoadMemWindows(t *testing.T) {
	dir := t.TempDir()
	g, _, err := csr.Open("kron:15", csr.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for v := range g.N {
		for _, d := range g.Neighbors(v) {
			fmt.Fprintf(&b, "%d %d\n", v, d)
		}
	}
	el := filepath.Join(dir, "k15.el")
	if err := os.WriteFile(el, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ algo, graph string }{{"pagerank", el}, {"sssp", el}, {"pagerank", "kron:15"}, {"wcc", "kron:15"}} {
		t.Run(tc.algo+"/"+filepath.Base(tc.graph), func(t *testing.T) {
			var outs [2][]byte
			type report struct {
				Windows int `json:"load_windows"`
				Graph   struct {
					Edges uint64 `json:"edges"`
				} `json:"graph"`
				Lists   uint64  `json:"dm_list_bytes"`
				InPlace float64 `json:"in_place_share"`
			}
			var reps [2]report
			for i, mem := range []string{"1GiB", "1MiB"} {
				out, js := filepath.Join(dir, tc.algo+mem+".out"), filepath.Join(dir, tc.algo+mem+".json")
				res := mpitest.Exec(t, 4, nil, dmgBin(t), "--roles", "cn:2,mn:2", "--json", js, "run", "--algo", tc.algo, "--graph", tc.graph, "--load-mem", mem, "--out", out)
				if res.ExitCode != 0 {
					t.Fatalf("--load-mem %s: exit %d\n%s%s", mem, res.ExitCode, res.Stdout, res.Stderr)
				}
				rep := &reps[i]
				if err := readJSON(js, rep); err != nil {
					t.Fatal(err)
				}
				if (i == 0) != (rep.Windows == 1) || rep.Windows < 1 {
					t.Fatalf("--load-mem %s: CN 0 loaded in %d windows", mem, rep.Windows)
				}
				if outs[i], err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatalf("--load-mem 1MiB gives other results than 1GiB")
			}
			whole, win := reps[0], reps[1]
			if whole.Graph.Edges != win.Graph.Edges || whole.InPlace != win.InPlace {
				t.Errorf("--load-mem 1MiB: %+v; 1GiB: %+v", win, whole)
			}
			if (tc.graph == el) != (win.Lists == whole.Lists) || win.Lists < whole.Lists {
				t.Errorf("lists of %d bytes windowed, %d whole", win.Lists, whole.Lists)
			}
		})
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
