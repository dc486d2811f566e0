package launch_test

// Integration tests of served pools: `dmg serve` (memory nodes alone),
// jobs of compute nodes alone that load graphs into it and run on them
// (--pool-file, --name), dmg ls / --drop / stop, leases, and the faults a
// pool meets. Every job is a real mpirun over the real libfabric providers
// (shm, tcp); the results are compared with one-job runs of the same graph.
//
// Every mpirun is started in a session of its own (Setsid): Open MPI puts
// each rank in a process group of its own, but the ranks stay in mpirun's
// session, so killing the session leaves no process behind.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
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
	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/dmg-hpc/dmg/verbs/fabric"
)

// mpiProc is an mpirun of dmg, started in a session of its own.
type mpiProc struct {
	cmd      *exec.Cmd
	out, err *syncBuffer
	done     chan struct{}
	start    time.Time
	elapsed  time.Duration
	code     int
	timedOut bool
	args     []string
}

// sessionPIDs lists the live (not zombie) processes of session sid.
func sessionPIDs(sid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if sess, live := liveSession(pid); live && sess == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// liveSession reports whether process pid exists and is not a zombie,
// and if so its session.
func liveSession(pid int) (session int, live bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	session, _ = strconv.Atoi(f[3])
	return session, true
}

// killSession kills every process of session sid (an mpirun and its ranks).
func killSession(sid int) {
	for i := 0; i < 50; i++ {
		pids := sessionPIDs(sid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startMPI starts `mpirun -np np dmg args...`, bounded by limit; the
// test's cleanup kills whatever is left of it.
func startMPI(t *testing.T, limit time.Duration, np int, args ...string) *mpiProc {
	t.Helper()
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	return startLauncher(t, limit, []string{mpitest.Mpirun(t), "-np", strconv.Itoa(np)}, mpitest.Env(), args...)
}

// startLauncher starts launcher... dmg args..., bounded by limit, in a
// session of its own with env added; the test's cleanup kills whatever is
// left of it on this host.
func startLauncher(t *testing.T, limit time.Duration, launcher, env []string, args ...string) *mpiProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	full := append(append(launcher[1:len(launcher):len(launcher)], dmgBin(t)), args...)
	cmd := exec.CommandContext(ctx, launcher[0], full...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	p := &mpiProc{cmd: cmd, out: &syncBuffer{}, err: &syncBuffer{}, done: make(chan struct{}), args: args}
	cmd.Stdout, cmd.Stderr = p.out, p.err
	cmd.Cancel = func() error {
		killSession(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		p.elapsed = time.Since(p.start)
		p.timedOut = ctx.Err() != nil
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		cancel()
		close(p.done)
	}()
	t.Cleanup(func() {
		killSession(cmd.Process.Pid)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	})
	return p
}

// hung describes a job that did not get somewhere in time: each of its
// processes' state and kernel wait, and its dmg ranks' goroutines (they
// print them on SIGQUIT, and end).
func (p *mpiProc) hung() string {
	var b strings.Builder
	pids := sessionPIDs(p.cmd.Process.Pid)
	for _, pid := range pids {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
		fmt.Fprintf(&b, "pid %d: %s (wchan %s)\n", pid, strings.TrimSpace(string(stat)), wchan)
	}
	for _, pid := range pids {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == builtBinary {
			syscall.Kill(pid, syscall.SIGQUIT)
		}
	}
	p.wait(5 * time.Second)
	return b.String() + p.String()
}

// wait waits up to d for the job to end.
func (p *mpiProc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *mpiProc) String() string {
	return fmt.Sprintf("mpirun dmg %s: exit %d after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(p.args, " "), p.code, p.elapsed.Round(time.Millisecond), p.out.String(), p.err.String())
}

// mpi runs `mpirun -np np dmg args...` to its end (at most limit).
func mpi(t *testing.T, limit time.Duration, np int, args ...string) *mpiProc {
	t.Helper()
	p := startMPI(t, limit, np, args...)
	<-p.done
	if p.timedOut {
		t.Fatalf("timed out after %v: %s", limit, p)
	}
	return p
}

// dmgPlain runs dmg as a plain process (ls, stop), bounded by limit.
func dmgPlain(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, dmgBin(t), args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.Env = cleanEnv()
	// A dmg still running at the limit prints its goroutines (SIGQUIT)
	// into the failure: where it waits.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("dmg %v still running after %v\nstdout:\n%s\nstderr:\n%s", args, limit, so.String(), se.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return so.String(), se.String(), code, took
}

// served is a running `dmg serve` job.
type served struct {
	path string
	p    *mpiProc
	file *pool.File
	job  jobFunc // how load and run start their jobs (mpi unless set)
}

// jobFunc runs a job of np ranks to its end (at most limit).
type jobFunc func(t *testing.T, limit time.Duration, np int, args ...string) *mpiProc

// startServe starts a serve job of mns memory nodes with its own pool
// file and waits (30 s at most) for the file and the ready line.
func startServe(t *testing.T, mns int, extra ...string) *served {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pool.json")
	args := append([]string{"--roles", fmt.Sprintf("mn:%d", mns), "serve", "--pool-file", path, "--mn-mem", "256MiB"}, extra...)
	s := waitServe(t, path, startMPI(t, 10*time.Minute, mns, args...), mns)
	t.Cleanup(func() {
		if t.Failed() { // what the MNs said (a lock taken back, a client forgotten) explains most pool failures
			t.Logf("the serve job, so far:\nstdout:\n%s\nstderr:\n%s", s.p.out.String(), s.p.err.String())
		}
	})
	return s
}

// waitServe waits (30 s at most) for serve job p's pool file and ready
// line, and checks them.
func waitServe(t *testing.T, path string, p *mpiProc, mns int) *served {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(path)
		if err == nil && strings.Contains(p.out.String(), "ready;") {
			break
		}
		select {
		case <-p.done:
			t.Fatalf("serve ended before its pool was ready: %s", p)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pool file %s 30 s after the start of serve (stat: %v):\n%s", path, err, p.hung())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := strings.Count(p.out.String(), "dmg serve: pool of "); n != 1 {
		t.Errorf("%d ready lines, want 1:\n%s", n, p.out.String())
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("pool file mode %v, want 0600 (it holds the pools' keys)", st.Mode().Perm())
	}
	f, err := pool.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the pool file: %v", err)
	}
	if len(f.MNs) != mns {
		t.Fatalf("pool file lists %d MNs, want %d", len(f.MNs), mns)
	}
	return &served{path: path, p: p, file: f, job: mpi}
}

// load stores a graph in the pool with a job of cn compute nodes.
func (s *served) load(t *testing.T, cn int, name string, graph []string) {
	t.Helper()
	args := append([]string{"--roles", fmt.Sprintf("cn:%d", cn), "load", "--pool-file", s.path, "--name", name}, graph...)
	p := s.job(t, 60*time.Second, cn, args...)
	if p.code != 0 || !strings.Contains(p.out.String(), "DMG load ") {
		t.Fatalf("load %q: %s", name, p)
	}
}

// run runs algo on graph name with a job of cn compute nodes, writing its
// results to a file; it returns them (nil if the run failed) and the job.
func (s *served) run(t *testing.T, cn int, name, algo string, extra ...string) ([]byte, *mpiProc) {
	t.Helper()
	out := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%s-cn%d.out", name, algo, cn))
	args := append([]string{"--roles", fmt.Sprintf("cn:%d", cn), "run", "--pool-file", s.path, "--name", name, "--algo", algo, "--out", out}, extra...)
	p := s.job(t, 40*time.Second, cn, args...)
	if p.code != 0 {
		return nil, p
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v after %s", err, p)
	}
	return b, p
}

// ls is `dmg ls --pool-file PATH --json`, decoded.
type lsJSON struct {
	Graphs []struct {
		Name     string `json:"name"`
		State    string `json:"state"`
		Vertices uint64 `json:"vertices"`
		Edges    uint64 `json:"edges"`
		CNs      int    `json:"cns"`
		Holder   string `json:"holder"`
		Jobs     int    `json:"jobs"`
	} `json:"graphs"`
	Runs []struct {
		Graph  string `json:"graph"`
		Kernel string `json:"kernel"`
		State  string `json:"state"`
		Done   int    `json:"iterations_done"`
		CNs    int    `json:"cns"`
		Region struct {
			MN  int    `json:"mn"`
			Off uint64 `json:"off"`
		} `json:"region"`
	} `json:"runs"`
	MNs int `json:"mns"`
}

func (s *served) ls(t *testing.T) lsJSON {
	t.Helper()
	so, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path, "--json")
	if code != 0 {
		t.Fatalf("dmg ls --json: exit %d\n%s%s", code, so, se)
	}
	var l lsJSON
	if err := json.Unmarshal([]byte(so), &l); err != nil {
		t.Fatalf("dmg ls --json: %v\n%s", err, so)
	}
	return l
}

// stop ends the serve job with dmg stop and checks it ended well.
func (s *served) stop(t *testing.T) {
	t.Helper()
	so, se, code, _ := dmgPlain(t, 30*time.Second, "stop", "--pool-file", s.path)
	if code != 0 {
		t.Fatalf("dmg stop: exit %d\n%s%s", code, so, se)
	}
	if !s.p.wait(20 * time.Second) {
		t.Fatalf("serve still running 20 s after dmg stop:\n%s%s", s.p.out.String(), s.p.err.String())
	}
	if s.p.code != 0 {
		t.Errorf("serve ended with exit %d after dmg stop, want 0: %s", s.p.code, s.p)
	}
	if !strings.Contains(s.p.out.String(), "stopped by dmg stop") {
		t.Errorf("serve does not say it was stopped:\n%s", s.p.out.String())
	}
	if _, err := os.Stat(s.path); !os.IsNotExist(err) {
		t.Errorf("pool file still there after the serve job ended (stat: %v)", err)
	}
	time.Sleep(500 * time.Millisecond)
	if left := sessionPIDs(s.p.cmd.Process.Pid); len(left) > 0 {
		t.Errorf("processes of the serve job left: %v", left)
	}
}

// The results of one-job runs, by their arguments, shared by the tests.
var (
	oneJobMu   sync.Mutex
	oneJobOuts = map[string][]byte{}
)

// oneJob is the results of `mpirun -np cn+2 dmg --roles cn:C,mn:2 run
// GRAPH --algo A --out FILE`.
func oneJob(t *testing.T, cn int, graph []string, algo string, extra ...string) []byte {
	t.Helper()
	args := append(append([]string{"--roles", fmt.Sprintf("cn:%d,mn:2", cn), "run", "--algo", algo}, graph...), extra...)
	key := strings.Join(args, "\x00")
	oneJobMu.Lock()
	defer oneJobMu.Unlock()
	if b, ok := oneJobOuts[key]; ok {
		return b
	}
	dir, err := os.MkdirTemp("", "dmg-pool-ref")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "ref.out")
	p := mpi(t, 60*time.Second, cn+2, append(args, "--out", out)...)
	if p.code != 0 {
		t.Fatalf("one-job reference run: %s", p)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	oneJobOuts[key] = b
	return b
}

// samePoolResults compares a run's results with the one-job run's: byte for
// byte, or for PageRank within 1e-12 per vertex.
func samePoolResults(t *testing.T, what, algo string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	if len(want) == 0 {
		t.Fatalf("%s: the one-job run wrote no results", what)
	}
	gl, wl := strings.Split(strings.TrimSpace(string(got)), "\n"), strings.Split(strings.TrimSpace(string(want)), "\n")
	if algo != "pagerank" || len(gl) != len(wl) {
		t.Fatalf("%s: results differ from the one-job run's (%d lines vs %d)%s", what, len(gl), len(wl), firstDiff(gl, wl))
	}
	worst := 0.0
	for i := range gl {
		gf, wf := strings.Fields(gl[i]), strings.Fields(wl[i])
		if len(gf) != 2 || len(wf) != 2 || gf[0] != wf[0] {
			t.Fatalf("%s: line %d %q, one-job run %q", what, i+1, gl[i], wl[i])
		}
		g, err1 := strconv.ParseFloat(gf[1], 64)
		w, err2 := strconv.ParseFloat(wf[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: line %d %q vs %q: %v %v", what, i+1, gl[i], wl[i], err1, err2)
		}
		worst = math.Max(worst, math.Abs(g-w))
		if !(math.Abs(g-w) <= 1e-12) {
			t.Fatalf("%s: vertex %s: %v, one-job run %v (|diff| %g > 1e-12)", what, gf[0], g, w, math.Abs(g-w))
		}
	}
	t.Logf("%s: PageRank not byte-identical to the one-job run; largest |diff| %g", what, worst)
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("; first difference at line %d: %q vs %q", i+1, a[i], b[i])
		}
	}
	return ""
}

// oneLine requires stderr to be one "dmg: " line containing want.
func oneLine(t *testing.T, what, stderr, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "dmg: ") || !strings.Contains(lines[0], want) {
		t.Errorf("%s: stderr should be one \"dmg: \" line containing %q, got:\n%s", what, want, stderr)
	}
}

// undirectedWEL writes kron:12 as an undirected weighted edge list, each
// edge once (u ≤ v) with its synthetic weight: a graph without parallel
// edges, which CDLP (a multigraph kernel) accepts from the pool.
func undirectedWEL(t *testing.T) string {
	t.Helper()
	return undirectedWELOf(t, 0)
}

// undirectedWELOf is undirectedWEL with integer weights 1..most when most
// > 0 (the weights in (0, 1] scaled and rounded up), which the layouts
// store in one or two bytes.
func undirectedWELOf(t *testing.T, most int) string {
	t.Helper()
	g, _, err := csr.Open("kron:12", csr.Options{Undirected: true, Weighted: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for v := range g.N {
		ws := g.EdgeWeights(v)
		for i, d := range g.Neighbors(v) {
			w := ws[i]
			if most > 0 {
				w = math.Ceil(w * float64(most))
			}
			if v <= d {
				fmt.Fprintf(&b, "%d %d %s\n", v, d, strconv.FormatFloat(w, 'g', -1, 64))
			}
		}
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("k12u-%d.wel", most))
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every kernel, over shm and tcp, on graphs a job of compute nodes alone
// stored in a served pool: the results of the one-job runs; a kernel that
// does not fit the stored graph is refused; dmg ls lists the graphs, --drop
// frees one, dmg stop ends the pool.
func TestPoolKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	wel := undirectedWELOf(t, 255) // stored in one byte a weight
	graphs := []struct {
		name  string
		graph []string
		algos []string
	}{
		{"d", []string{"--graph", "kron:12"}, []string{"bfs", "pagerank", "lcc"}},
		{"u", []string{"--graph", wel, "--undirected", "--weighted"}, []string{"sssp", "wcc", "cdlp", "lcc"}},
	}
	for _, fab := range []string{"shm", "tcp"} {
		t.Run(fab, func(t *testing.T) {
			s := startServe(t, 2, "--fabric", fab)
			if !strings.Contains(s.file.Provider, fab) {
				t.Errorf("pool file provider %q, want %s", s.file.Provider, fab)
			}
			for _, g := range graphs {
				s.load(t, 2, g.name, g.graph)
			}
			l := s.ls(t)
			if len(l.Graphs) != 2 || l.MNs != 2 {
				t.Fatalf("dmg ls --json after two loads: %+v", l)
			}
			for i, g := range l.Graphs {
				if g.Name != graphs[i].name || g.State != "ready" || g.CNs != 2 || g.Vertices == 0 || g.Edges == 0 || g.Holder != "" {
					t.Errorf("dmg ls --json graph %d: %+v; want %q ready, 2 CNs, no holder", i, g, graphs[i].name)
				}
			}
			for _, g := range graphs {
				algos := g.algos
				if fab != "shm" { // the path, not every kernel again
					algos = algos[:1]
				}
				for _, a := range algos {
					got, p := s.run(t, 2, g.name, a)
					if p.code != 0 {
						t.Errorf("%s on %q: %s", a, g.name, p)
						continue
					}
					samePoolResults(t, fmt.Sprintf("%s/%s on %q", fab, a, g.name), a, got, oneJob(t, 2, g.graph, a))
				}
			}
			// Kernels that do not fit the stored graph (the check is the
			// job's, whatever the fabric: over shm only).
			for _, c := range []struct{ algo, name, want string }{
				{"wcc", "d", `wcc reads its graph undirected but "d" was loaded directed`},
				{"sssp", "d", `sssp needs weights but "d" was loaded without them`},
			} {
				if fab != "shm" {
					break
				}
				_, p := s.run(t, 2, c.name, c.algo)
				if p.code != 2 {
					t.Errorf("%s on %q: exit %d, want 2: %s", c.algo, c.name, p.code, p)
				}
				oneLine(t, c.algo+" on "+c.name, p.err.String(), c.want)
			}
			// The table.
			so, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path)
			if code != 0 || !strings.Contains(so, "NAME") || !strings.Contains(so, "HELD BY") {
				t.Errorf("dmg ls: exit %d\n%s%s", code, so, se)
			}
			for _, name := range []string{"d", "u"} {
				if !strings.Contains(so, "\n"+name+" ") || !strings.Contains(so, "ready") {
					t.Errorf("dmg ls does not list %q as ready:\n%s", name, so)
				}
			}
			// Drop one.
			so, se, code, _ = dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path, "--drop", "d")
			if code != 0 || !strings.Contains(so, `dropped "d"`) {
				t.Errorf("dmg ls --drop d: exit %d\n%s%s", code, so, se)
			}
			l = s.ls(t)
			if len(l.Graphs) != 1 || l.Graphs[0].Name != "u" {
				t.Errorf("after --drop d, dmg ls --json: %+v; want only \"u\"", l.Graphs)
			}
			if fab == "shm" {
				_, p := s.run(t, 2, "d", "bfs")
				if p.code != 2 {
					t.Errorf("bfs on the dropped graph: exit %d, want 2: %s", p.code, p)
				}
				oneLine(t, "bfs on the dropped graph", p.err.String(), `holds no graph "d"`)
			}
			s.stop(t)
		})
	}
}

// dropWhenFree drops graph name, retrying while runs read it, for up to
// limit; the pool then holds no graph.
func (s *served) dropWhenFree(t *testing.T, name string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		_, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path, "--drop", name)
		if code == 0 {
			break
		}
		if !strings.Contains(se, "is read by") || time.Now().After(deadline) {
			t.Fatalf("dmg ls --drop %s: exit %d:\n%s", name, code, se)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if l := s.ls(t); len(l.Graphs) != 0 {
		t.Errorf("dmg ls --json after dropping %s: %+v; want no graph", name, l.Graphs)
	}
}

// startHolder starts a PageRank on graph name that logs its iterations,
// and waits until it computes (its third iteration), holding the lease.
func (s *served) startHolder(t *testing.T, name string, iterations int) *mpiProc {
	t.Helper()
	p := startMPI(t, 2*time.Minute, 2, "--roles", "cn:2", "-v", "run", "--pool-file", s.path, "--name", name, "--algo", "pagerank", "--iterations", strconv.Itoa(iterations))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.err.String(), "iter 2 ") {
		select {
		case <-p.done:
			t.Fatalf("the holder ended before its third iteration: %s", p)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the holder did not reach its third iteration in 30 s:\n%s", p.err.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// Runs read a graph together, each holding it through a Job slot of its
// own: a second run computes while the first does, and a drop fails,
// naming the runs, until they end; a holder killed with -9 keeps its hold
// until its heartbeat expires (pool.StaleAfter, 10 s), while new runs
// still compute the right results (over shm and tcp: the pool's MNs
// outlive a job that dies on them).
func TestPoolLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	graph := []string{"--graph", "kron:13"}
	want := oneJob(t, 2, graph, "bfs")

	t.Run("shared", func(t *testing.T) {
		s := startServe(t, 2)
		s.load(t, 2, "g", graph)
		h := s.startHolder(t, "g", 100000)
		// Three more runs at once on the graph the holder reads, one on
		// 2 CNs and two on 1 (g is cut anew for 1 CN meanwhile, once: the
		// second waits for the first's cut): each computes, its results
		// those of a job alone.
		dir := t.TempDir()
		cns := []int{2, 1, 1}
		var runs []*mpiProc
		for i, cn := range cns {
			out := filepath.Join(dir, fmt.Sprintf("run%d.out", i))
			runs = append(runs, startMPI(t, 90*time.Second, cn, "--roles", fmt.Sprintf("cn:%d", cn), "-v", "run", "--pool-file", s.path, "--name", "g", "--algo", "bfs", "--out", out))
		}
		waited := 0
		for i, p := range runs {
			<-p.done
			if p.code != 0 {
				t.Fatalf("run %d of three at once beside a holder: %s", i, p)
			}
			if strings.Contains(p.err.String(), "waiting for its cut") {
				waited++
			}
		}
		if waited > 1 {
			t.Errorf("%d runs waited for another's cut; the cutter cannot", waited)
		}
		t.Logf("%d of the two cn:1 runs waited for the other's cut", waited)
		for i, cn := range cns {
			got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run%d.out", i)))
			if err != nil {
				t.Fatal(err)
			}
			samePoolResults(t, fmt.Sprintf("bfs on cn:%d beside a holder and two other runs", cn), "bfs", got, want)
		}
		if h.exited() {
			t.Fatalf("the holder ended before the other runs did: %s", h)
		}
		if l := s.ls(t); len(l.Graphs) != 2 || l.Graphs[0].Jobs+l.Graphs[1].Jobs != 1 || l.Graphs[0].Holder != "" || l.Graphs[1].Holder != "" {
			t.Errorf("dmg ls --json while a run reads g: %+v; want g and one cut for 1 CN (two runs cut it at once), read by one run, no writer", l.Graphs)
		}
		// A drop while the holder reads g: refused, naming it; g stays.
		_, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path, "--drop", "g")
		if code == 0 || !strings.Contains(se, `graph "g" is read by 1 run(s): job 0x`) {
			t.Errorf("dmg ls --drop g while a run reads it: exit %d; want a refusal naming the run:\n%s", code, se)
		}
		if l := s.ls(t); len(l.Graphs) != 2 || l.Graphs[0].Holder != "" || l.Graphs[1].Holder != "" {
			t.Errorf("dmg ls --json after a refused drop: %+v; want g and its cut for 1 CN there, their leases given back", l.Graphs)
		}
		if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if !h.wait(10 * time.Second) {
			t.Fatalf("holder still running 10 s after SIGTERM: %s", h)
		}
		// Once the holder is gone (at once if its SIGTERM gave its hold
		// up, else when its heartbeat expires), the drop frees g.
		s.dropWhenFree(t, "g", pool.StaleAfter+5*time.Second)
		s.stop(t)
	})

	// A holder ended by SIGTERM (scancel, a user's kill of mpirun) gives
	// its lease back before Open MPI's SIGKILL a second later, and says so
	// in its one line: the next run computes at once.
	for _, fab := range []string{"tcp", "shm"} {
		t.Run("holder terminated/"+fab, func(t *testing.T) {
			s := startServe(t, 2, "--fabric", fab)
			s.load(t, 2, "g", graph)
			h := s.startHolder(t, "g", 100000)
			if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if !h.wait(10 * time.Second) {
				t.Fatalf("holder still running 10 s after SIGTERM: %s", h)
			}
			var said []string
			for _, l := range strings.Split(h.err.String(), "\n") {
				if strings.HasPrefix(l, "dmg: ") {
					said = append(said, l)
				}
			}
			// The release is a CAS the MN must answer within undoGrace; on
			// a loaded machine it may not, and then the line says so and
			// the lease expires with its heartbeat.
			released := len(said) == 1 && strings.Contains(said[0], `the lease of graph "g" was released`)
			late := len(said) == 1 && strings.Contains(said[0], `the lease of graph "g" was not released within`)
			if len(said) != 1 || !strings.Contains(said[0], "interrupted by SIGTERM") || !released && !late {
				t.Errorf("a holder ended by SIGTERM said %q; want one line saying whether the lease of graph \"g\" was released", said)
			}
			if released {
				if l := s.ls(t); len(l.Graphs) != 1 || l.Graphs[0].Jobs != 0 {
					t.Errorf("dmg ls --json after the holder's SIGTERM, which said the lease was released: %+v; want g read by no run", l.Graphs)
				}
			} else {
				t.Logf("the lease was not released within the grace: %q", said)
			}
			if fab == "tcp" {
				// A job connecting right after another's were cut can lose
				// a connection to libfabric 1.17's tcp provider (the tcp
				// connection defect, docs/design.md): the next run is
				// checked over shm.
				s.stop(t)
				return
			}
			got, p := s.run(t, 2, "g", "bfs")
			if p.code != 0 {
				t.Fatalf("a run after the holder's SIGTERM: %s", p)
			}
			samePoolResults(t, "bfs after a terminated holder", "bfs", got, want)
			s.stop(t)
		})
	}

	// A holder killed with -9 keeps its lease until it expires. Over shm
	// it is killed inside an operation, holding an MN's queue lock
	// (libfabric 1.17 queues under a spin lock in the MN's region, and a
	// random kill of a computing holder wedged the pool 2 times in 20):
	// the MN takes its lock back, says so, and the pool answers.
	for _, fab := range []string{"tcp", "shm"} {
		t.Run("holder killed/"+fab, func(t *testing.T) {
			s := startServe(t, 2, "--fabric", fab)
			s.load(t, 2, "g", graph)
			h := s.startHolder(t, "g", 100000)
			var held []int
			if fab == "shm" {
				held = freezeHoldingLock(t, s.file, h.cmd.Process.Pid)
			}
			killSession(h.cmd.Process.Pid) // kill -9 of the ranks and mpirun
			killed := time.Now()
			if !h.wait(10 * time.Second) {
				t.Fatalf("killed holder not reaped")
			}
			// The dead holder's lease is still fresh, and the pool answers.
			so, se, code, took := dmgPlain(t, 20*time.Second, "ls", "--pool-file", s.path, "--json")
			answered := time.Since(killed)
			var l lsJSON
			if code != 0 || json.Unmarshal([]byte(so), &l) != nil || len(l.Graphs) != 1 || l.Graphs[0].Jobs != 1 {
				t.Fatalf("dmg ls --json %v after the holder was killed: exit %d; want g still read by it:\n%s%s", took, code, so, se)
			}
			if fab == "shm" {
				// A line for each MN whose lock the holder died in. dmg
				// ls's probe makes an atomic on every MN, so it answered
				// after the MNs took their locks back; their lines come
				// through serve's stderr pipe, and may follow by a moment.
				// Another dead client may have left a lock too: a CI run
				// saw MN 1 take one back from other pids (most likely the
				// loading job's ranks, which had exited) beside MN 0's
				// from the holder's. Such lines are logged, not counted
				// against the holder's.
				t.Logf("dmg ls answered %v after the kill", took.Round(time.Millisecond))
				const tookBack = "took its shm queue lock back from a client that died"
				said, lines := s.p.err.String(), func(said string) bool {
					n := strings.Count(said, tookBack)
					for _, m := range held {
						if !strings.Contains(said, fmt.Sprintf("dmg: MN %d took its shm queue lock back", m)) {
							return false
						}
					}
					return n >= len(held)
				}
				for end := time.Now().Add(20 * time.Second); !lines(said) && time.Now().Before(end); said = s.p.err.String() {
					time.Sleep(50 * time.Millisecond)
				}
				switch {
				case lines(said):
					if n := strings.Count(said, tookBack); n > len(held) {
						t.Logf("%d locks taken back, %d of them the holder's (MNs %v):\n%s", n, len(held), held, said)
					}
				case answered < fabric.LockSpin:
					// No MN took a lock back, yet the pool answered: the
					// lock seen taken for a second at every look was freed
					// by a live process, the MN's own progress kept from a
					// core by a loaded host (CI, other packages' tests on
					// both cores: dmg ls took 418 ms, no line), not a dead
					// holder's, which only a take-back frees (a dead
					// holder's lock never given back fails the dmg ls
					// above). The cases are told apart by time, which is
					// not airtight: a take-back's look may begin before
					// the kill when another departed client is mapped (one
					// was seen noted 356 ms after it), so a fast take-back
					// that said nothing would pass here.
					t.Logf("no MN took a lock back, and dmg ls answered %v after the kill (under %v): the lock seen taken was the MN's own", answered.Round(time.Millisecond), fabric.LockSpin)
				default:
					t.Errorf("serve's lines on taking locks back, 20 s after dmg ls answered; want one for each of MNs %v:\n%s", held, said)
				}
				t.Logf("the locks taken back %v after the kill", time.Since(killed).Round(time.Millisecond))
			}
			// A new run computes at once beside the dead holder's hold.
			got, p := s.run(t, 2, "g", "bfs")
			if p.code != 0 {
				t.Fatalf("a run right after the holder was killed: %s", p)
			}
			samePoolResults(t, "bfs after a killed holder", "bfs", got, want)
			// A drop waits for the dead hold to expire.
			_, se, code, _ = dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path, "--drop", "g")
			if code == 0 && time.Since(killed) < pool.StaleAfter-2*time.Second {
				t.Errorf("dmg ls --drop g %v after the holder was killed succeeded; want it refused until its hold expires (about %v)", time.Since(killed), pool.StaleAfter)
			} else if code != 0 && !strings.Contains(se, `graph "g" is read by 1 run(s)`) {
				t.Errorf("dmg ls --drop g after the holder was killed: exit %d; want a refusal naming the dead run:\n%s", code, se)
			}
			if code != 0 {
				s.dropWhenFree(t, "g", pool.StaleAfter+5*time.Second)
			}
			since := time.Since(killed)
			if since < pool.StaleAfter-2*time.Second {
				t.Errorf("g dropped %v after the kill; want the dead hold kept for about %v", since, pool.StaleAfter)
			}
			t.Logf("hold expired; g dropped %v after the kill", since.Round(time.Millisecond))
			s.stop(t)
		})
	}
}

// freezeHoldingLock stops (SIGSTOP) the processes of session sid, a job
// computing on the shm pool of pool file f, at a moment when one of them
// holds an MN's queue lock: it stops and resumes them until then, a
// few tries.
func freezeHoldingLock(t *testing.T, f *pool.File, sid int) []int {
	t.Helper()
	for try := 1; try <= 1000; try++ {
		pids := sessionPIDs(sid)
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGSTOP)
		}
		// Each of the holder's workers may be inside a different MN's
		// lock at the moment it stops.
		var held []int
		for m, mn := range f.MNs {
			if heldFor(t, string(mn.Name), time.Second) {
				held = append(held, m)
			}
		}
		if len(held) > 0 {
			t.Logf("the holder stopped in the queue locks of MNs %v at try %d", held, try)
			return held
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
		time.Sleep(time.Duration(1+try%7) * time.Millisecond)
	}
	t.Fatalf("the holder was never stopped inside an MN's queue lock in 1000 tries")
	return nil
}

// heldFor tells whether the queue lock of shm region name is taken at
// every look for d: the MN's own progress takes it for microseconds, or
// for a time slice or two when a loaded host preempts it inside (20 ms
// was once too short, and dmg stop then found the pool answering; 300 ms
// once in CI, with other packages' tests on the two cores: dmg ls
// answered 454 ms after the kill, sooner than an MN takes a dead
// client's lock back, and no MN ever took one back).
func heldFor(t *testing.T, name string, d time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(d); ; time.Sleep(time.Millisecond) {
		locked, err := fabric.ShmRegionLocked(name)
		if err != nil {
			t.Fatal(err)
		}
		if !locked {
			return false
		}
		if time.Now().After(end) {
			return true
		}
	}
}

// exited tells whether the job has ended, without waiting.
func (p *mpiProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// A pool file of another pool is refused; a pool file whose serve job
// has ended fails in bounded time; an MN killed under a run ends the run,
// naming it.
// dmg stop ends a serve job that cannot be asked: one whose MN is frozen
// (SIGSTOP), and one whose provider is stuck behind a queue lock that a
// stopped client holds. It signals the job's MNs, which end, and says so
// in one line; the pool file goes and no process is left.
func TestPoolStopUnanswered(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	for _, c := range []struct {
		name  string
		wedge func(t *testing.T, s *served)
		cause string
	}{
		{"mn frozen", func(t *testing.T, s *served) {
			if err := syscall.Kill(s.file.MNs[1].PID, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		}, "timed out"},
		{"client stopped in a lock", func(t *testing.T, s *served) {
			s.load(t, 2, "g", []string{"--graph", "kron:13"})
			// An MN forgets a departed client two looks (a second each)
			// after it left; until then the load's dead ranks would tell
			// it a dead client holds the lock, and it would take it back
			// from the live, frozen one (unlock.go: the lock names no
			// owner).
			time.Sleep(3 * time.Second)
			h := s.startHolder(t, "g", 100000)
			freezeHoldingLock(t, s.file, h.cmd.Process.Pid)
		}, "the provider is stuck"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServe(t, 2, "--fabric", "shm")
			c.wedge(t, s)
			so, se, code, took := dmgPlain(t, 60*time.Second, "stop", "--pool-file", s.path, "--timeout", "2s")
			if code != 0 || !strings.Contains(so, "did not answer") || !strings.Contains(so, c.cause) || !strings.Contains(so, "its serve job was ended with SIGTERM") {
				t.Fatalf("dmg stop of a pool that cannot answer: exit %d after %v; want 0 and a line saying it was ended by signal because %q:\n%s%s", code, took, c.cause, so, se)
			}
			t.Logf("dmg stop took %v: %s", took.Round(time.Millisecond), strings.TrimSpace(so))
			if !s.p.wait(10 * time.Second) {
				t.Fatalf("serve still running 10 s after dmg stop ended it: %s", s.p)
			}
			if _, err := os.Stat(s.path); !os.IsNotExist(err) {
				t.Errorf("pool file still there after dmg stop ended the serve job (stat: %v)", err)
			}
			time.Sleep(500 * time.Millisecond)
			if left := sessionPIDs(s.p.cmd.Process.Pid); len(left) > 0 {
				t.Errorf("processes of the serve job left: %v", left)
			}
		})
	}
}

func TestPoolFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	t.Run("foreign token and stale file", func(t *testing.T) {
		s := startServe(t, 2)
		s.load(t, 2, "g", []string{"--graph", "kron:12"})
		dir := t.TempDir()

		f, err := pool.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		f.Token++
		if f.Token == 0 {
			f.Token = 1
		}
		foreign := filepath.Join(dir, "foreign.json")
		if err := pool.WriteFile(foreign, f); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(foreign, 0o600); err != nil {
			t.Fatal(err)
		}
		_, p := s.run(t, 2, "g", "bfs", "--pool-file", foreign)
		if p.code != 2 {
			t.Errorf("run with a foreign pool file: exit %d, want 2: %s", p.code, p)
		}
		oneLine(t, "run with a foreign pool file", p.err.String(), "belongs to another pool")
		_, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", foreign)
		if code != 2 {
			t.Errorf("dmg ls with a foreign pool file: exit %d, want 2: %s", code, se)
		}
		oneLine(t, "dmg ls with a foreign pool file", se, "belongs to another pool")
		// An shm pool on another host is out of reach: refused at once.
		if f.Provider == "shm" {
			elsewhere, err := pool.ReadFile(s.path)
			if err != nil {
				t.Fatal(err)
			}
			elsewhere.MNs[1].Host = "elsewhere.invalid"
			other := filepath.Join(dir, "other-host.json")
			if err := pool.WriteFile(other, elsewhere); err != nil {
				t.Fatal(err)
			}
			_, p := s.run(t, 2, "g", "bfs", "--pool-file", other)
			if p.code != 2 {
				t.Errorf("run on an shm pool of another host: exit %d, want 2: %s", p.code, p)
			}
			oneLine(t, "run on an shm pool of another host", p.err.String(), "served over shm on elsewhere.invalid")
		} else {
			t.Errorf("the pool is served over %s; want shm on one host by default", f.Provider)
		}
		// The pool itself is untouched.
		if l := s.ls(t); len(l.Graphs) != 1 || l.Graphs[0].State != "ready" {
			t.Errorf("dmg ls after the foreign attempts: %+v", l.Graphs)
		}

		// A copy of the pool file outlives the pool.
		stale := filepath.Join(dir, "stale.json")
		b, err := os.ReadFile(s.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stale, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s.stop(t)
		var wg sync.WaitGroup
		var lsErr string
		var lsCode int
		var lsTook time.Duration
		wg.Add(1)
		go func() { // dmg ls meanwhile, as a plain process
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, dmgBin(t), "ls", "--pool-file", stale)
			cmd.Env = cleanEnv()
			var se bytes.Buffer
			cmd.Stderr = &se
			start := time.Now()
			err := cmd.Run()
			lsTook = time.Since(start)
			lsCode = 0
			if ee, ok := err.(*exec.ExitError); ok {
				lsCode = ee.ExitCode()
			}
			if ctx.Err() != nil {
				lsCode = -2
			}
			lsErr = se.String()
		}()
		p = startMPI(t, 30*time.Second, 2, "--roles", "cn:2", "run", "--pool-file", stale, "--name", "g", "--algo", "bfs")
		<-p.done
		wg.Wait()
		if p.timedOut {
			t.Errorf("a run on a stale pool file still running after 30 s: %s", p)
		} else if p.code == 0 {
			t.Errorf("a run on a stale pool file succeeded: %s", p)
		}
		if !strings.Contains(p.err.String(), stale) || !strings.HasPrefix(p.err.String(), "dmg: ") {
			t.Errorf("a run on a stale pool file does not name the file:\n%s", p.err.String())
		}
		t.Logf("run on a stale pool file: exit %d after %v: %s", p.code, p.elapsed.Round(time.Millisecond), strings.TrimSpace(p.err.String()))
		if lsCode == 0 || lsCode == -2 {
			t.Errorf("dmg ls on a stale pool file: exit %d after %v (-2: still running at 30 s):\n%s", lsCode, lsTook, lsErr)
		}
		if !strings.Contains(lsErr, stale) {
			t.Errorf("dmg ls on a stale pool file does not name the file:\n%s", lsErr)
		}
		t.Logf("dmg ls on a stale pool file: exit %d after %v: %s", lsCode, lsTook.Round(time.Millisecond), strings.TrimSpace(lsErr))
	})

	t.Run("mn killed", func(t *testing.T) {
		s := startServe(t, 2)
		s.load(t, 2, "g", []string{"--graph", "kron:13"})
		h := s.startHolder(t, "g", 3000)
		victim := s.file.MNs[1].PID
		if victim <= 0 {
			t.Fatalf("pool file names no pid for MN 1: %+v", s.file.MNs[1])
		}
		if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 %d: %v", victim, err)
		}
		killed := time.Now()
		if !h.wait(30 * time.Second) {
			t.Fatalf("the run still computes 30 s after MN 1 of its pool was killed:\n%s", h.err.String())
		}
		took := time.Since(killed)
		if h.code == 0 {
			t.Errorf("the run succeeded after MN 1 of its pool was killed: %s", h)
		}
		if took > 12*time.Second {
			t.Errorf("the run took %v to fail after MN 1 was killed; want about 10 s at most", took)
		}
		if !strings.Contains(h.err.String(), "mn 1 of the pool") {
			t.Errorf("the run's stderr does not name \"mn 1 of the pool\":\n%s", h.err.String())
		}
		t.Logf("run ended %v after the kill, exit %d", took.Round(time.Millisecond), h.code)
		time.Sleep(time.Second)
		if left := sessionPIDs(h.cmd.Process.Pid); len(left) > 0 {
			t.Errorf("processes of the run left: %v", left)
		}
	})
}

// Bad input to pooled jobs: exit 2, one "dmg:" line, no process left.
func TestPoolBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		np   int
		args []string
		want string
	}{
		{"memory nodes with --pool-file", 3, []string{"--roles", "cn:2,mn:1", "run", "--pool-file", garbage, "--name", "g", "--algo", "bfs"}, "compute nodes only"},
		{"memory nodes alone without serve", 2, []string{"--roles", "mn:2", "run", "--algo", "bfs", "--graph", "kron:8"}, "both cn and mn"},
		{"memory nodes alone, info", 2, []string{"--roles", "mn:2", "info"}, "both cn and mn"},
		{"--pool-file without --name", 2, []string{"--roles", "cn:2", "run", "--pool-file", garbage, "--algo", "bfs"}, "--name"},
		{"a run's --compress on a pool", 2, []string{"--roles", "cn:2", "run", "--pool-file", garbage, "--name", "g", "--algo", "bfs", "--compress"}, "--compress has no effect with --pool-file"},
		{"load --pool-file without --name", 2, []string{"--roles", "cn:2", "load", "--pool-file", garbage, "--graph", "kron:8"}, "--name"},
		{"serve without --pool-file", 2, []string{"--roles", "mn:2", "serve"}, "--pool-file"},
		{"serve --pool-file a FIFO", 2, []string{"--roles", "mn:2", "serve", "--pool-file", fifo}, "not a regular file"},
		{"serve --pool-file and --json the same", 2, []string{"--roles", "mn:2", "--json", missing, "serve", "--pool-file", dir + "/./missing.json"}, "name the same file"},
		{"pool file missing", 2, []string{"--roles", "cn:2", "run", "--pool-file", missing, "--name", "g", "--algo", "bfs"}, missing},
		{"garbage pool file", 2, []string{"--roles", "cn:2", "run", "--pool-file", garbage, "--name", "g", "--algo", "bfs"}, "not a pool file"},
		{"garbage pool file, load", 2, []string{"--roles", "cn:2", "load", "--pool-file", garbage, "--name", "g", "--graph", "kron:8"}, "not a pool file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each in a session of its own; mostly waiting
			p := mpi(t, 30*time.Second, tc.np, tc.args...)
			if p.code != 2 {
				t.Errorf("exit %d, want 2: %s", p.code, p)
			}
			oneLine(t, tc.name, p.err.String(), tc.want)
			if p.elapsed > 10*time.Second {
				t.Errorf("took %v to fail", p.elapsed)
			}
			time.Sleep(300 * time.Millisecond)
			if left := sessionPIDs(p.cmd.Process.Pid); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
	// The plain commands.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ls"}, "--pool-file"},
		{[]string{"stop"}, "--pool-file"},
		{[]string{"ls", "--pool-file", missing}, missing},
		{[]string{"stop", "--pool-file", garbage}, "not a pool file"},
	} {
		_, se, code, took := dmgPlain(t, 30*time.Second, tc.args...)
		if code != 2 {
			t.Errorf("dmg %v: exit %d, want 2: %s", tc.args, code, se)
		}
		oneLine(t, fmt.Sprint(tc.args), se, tc.want)
		if took > 10*time.Second {
			t.Errorf("dmg %v took %v", tc.args, took)
		}
	}
}

// A job on a stored graph with another compute-node count than its load
// (the chunks re-cut): the results of a one-job run with that count.
func TestPoolRecut(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	s := startServe(t, 2)
	wel := undirectedWELOf(t, 60000) // two bytes a weight, in the pool and in the re-cut
	graphs := []struct {
		name  string
		graph []string
		algos []string
	}{
		{"d", []string{"--graph", "kron:12"}, []string{"bfs", "pagerank"}},
		{"u", []string{"--graph", wel, "--undirected", "--weighted"}, []string{"sssp", "wcc", "cdlp", "lcc"}},
	}
	for _, g := range graphs {
		s.load(t, 2, g.name, g.graph)
	}
	for _, cn := range []int{1, 3} {
		t.Run(fmt.Sprintf("cn%d", cn), func(t *testing.T) {
			for _, g := range graphs {
				for _, a := range g.algos {
					got, p := s.run(t, cn, g.name, a)
					if p.code != 0 {
						t.Errorf("%s on %q (loaded by 2 CNs) with %d CNs: %s", a, g.name, cn, p)
						continue
					}
					samePoolResults(t, fmt.Sprintf("cn:%d %s on %q", cn, a, g.name), a, got, oneJob(t, cn, g.graph, a))
				}
			}
		})
	}
	s.stop(t)
}

// A client that lies about a pool's size (a pool file edited to say
// 256 times the MN's pool) gets a clean error before it touches the pool;
// the serve job and every other client go on: a normal load and run
// through the true file, then dmg stop.
func TestPoolLyingSize(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	s := startServe(t, 2)
	lie := *s.file
	lie.MNs = append([]pool.MN(nil), s.file.MNs...)
	lie.MNs[1].Size *= 256
	liar := filepath.Join(t.TempDir(), "lying-pool.json")
	if err := pool.WriteFile(liar, &lie); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("says MN 1's pool is %d bytes but the MN registered %d", lie.MNs[1].Size, s.file.MNs[1].Size)
	for _, args := range [][]string{
		{"--roles", "cn:2", "load", "--pool-file", liar, "--name", "big", "--graph", "kron:10"},
		{"--roles", "cn:2", "run", "--pool-file", liar, "--name", "big", "--algo", "bfs"},
	} {
		p := mpi(t, 60*time.Second, 2, args...)
		if p.code != 2 {
			t.Errorf("%s through the edited file: exit %d, want 2: %s", args[2], p.code, p)
		}
		oneLine(t, args[2]+" through the edited file", p.err.String(), want)
	}
	if _, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", liar); code != 2 || !strings.Contains(se, want) {
		t.Errorf("dmg ls through the edited file: exit %d, %q", code, se)
	}
	if s.p.exited() {
		t.Fatalf("serve died after a lying client: %s", s.p)
	}
	s.load(t, 2, "g", []string{"--graph", "kron:10"})
	if got, p := s.run(t, 2, "g", "bfs"); p.code != 0 {
		t.Errorf("a normal run after the lying client: %s", p)
	} else {
		samePoolResults(t, "bfs after a lying client", "bfs", got, oneJob(t, 2, []string{"--graph", "kron:10"}, "bfs"))
	}
	if l := s.ls(t); len(l.Graphs) != 1 || l.Graphs[0].Name != "g" {
		t.Errorf("dmg ls after a lying client: %+v", l.Graphs)
	}
	s.stop(t)
}
