package launch_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/pool"
)

// Runs on a served pool outlive their compute nodes (issue 35): a CN
// killed with -9 in the middle of PageRank, BFS, SSSP or CDLP leaves its
// run unfinished in the pool (dmg ls lists it), and `run --resume` on the
// same or another compute-node count continues it from its last
// checkpoint to the results of an uninterrupted run. A checkpoint damaged
// by hand, or written by another build, is refused; --resume with nothing
// to resume, and the checkpoint flags without a pool, are bad input; a
// drop of the graph drops its unfinished runs. Real mpirun over shm. (A
// new run of the same graph, kernel and parameters replacing unfinished
// ones is pool.TestNewCheckpoint's.)

// pathGraph writes a weighted path of n vertices with a leaf on every
// third: BFS and SSSP from vertex 0 take n iterations.
func pathGraph(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i+1 < n; i++ {
		fmt.Fprintf(&b, "%d %d %g\n", i, i+1, 0.25+float64(i*7%10)/10)
		if i%3 == 0 {
			fmt.Fprintf(&b, "%d %d 1.5\n", i, n+i)
		}
	}
	path := filepath.Join(t.TempDir(), "path.wel")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var keptRE = regexp.MustCompile(`checkpoint after iteration \d+ \((\d+) iterations kept\)`)

// killAfter starts a run of cn compute nodes that logs its checkpoints
// and kills world rank victim with -9 once a checkpoint of at least
// least iterations is kept; it returns the iterations the last logged
// checkpoint kept.
func (s *served) killAfter(t *testing.T, cn, victim, least int, name, algo string, extra ...string) int {
	t.Helper()
	// Under load the checkpoint lines reach the test late, and a short
	// run (SSSP's 400 iterations on a path) may end before the kill
	// lands: its rank 0 has printed the report and the pool lists no
	// run. Such an attempt proves nothing; the run is started again.
	for try := 1; ; try++ {
		kept, finished := s.killOnce(t, cn, victim, least, name, algo, extra...)
		if !finished {
			return kept
		}
		if try == 3 {
			t.Fatalf("%s: the run ended before rank %d's kill landed, %d times", algo, victim, try)
		}
		t.Logf("%s: the run ended before rank %d's kill landed (checkpoint %d); again", algo, victim, kept)
	}
}

// killOnce is one attempt of killAfter: the checkpoint reached, and
// whether the run had ended (its report printed) before the kill.
func (s *served) killOnce(t *testing.T, cn, victim, least int, name, algo string, extra ...string) (int, bool) {
	t.Helper()
	args := append([]string{"--roles", fmt.Sprintf("cn:%d", cn), "-v", "run", "--pool-file", s.path, "--name", name, "--algo", algo}, extra...)
	p := startMPI(t, 2*time.Minute, cn, args...)
	deadline := time.Now().Add(60 * time.Second)
	kept := 0
	for kept < least {
		if m := keptRE.FindAllStringSubmatch(p.err.String(), -1); len(m) > 0 {
			kept, _ = strconv.Atoi(m[len(m)-1][1])
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("%s: no checkpoint of %d iterations before the run ended or 60 s passed (last %d): %s", algo, least, kept, p)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The job's ranks stop at once (a run of a few hundred short
	// iterations may end before a kill lands), then the victim dies and
	// the others go on, to find it dead.
	pid := rankPID(t, p, victim)
	ranks := sessionPIDs(p.cmd.Process.Pid)
	for _, r := range ranks {
		syscall.Kill(r, syscall.SIGSTOP)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, r := range ranks {
		syscall.Kill(r, syscall.SIGCONT)
	}
	if !p.wait(30 * time.Second) {
		t.Fatalf("%s: the job went on 30 s after rank %d was killed:\n%s", algo, victim, p.hung())
	}
	if p.code == 0 { // it ended before the kill: killAfter tries again
		return kept, true
	}
	if m := keptRE.FindAllStringSubmatch(p.err.String(), -1); len(m) > 0 {
		kept, _ = strconv.Atoi(m[len(m)-1][1])
	}
	t.Logf("%s: killed rank %d after a checkpoint of %d iterations", algo, victim, kept)
	return kept, strings.Contains(p.out.String(), "DMG "+algo+" on ")
}

// rankPID finds the pid of world rank r of job p.
func rankPID(t *testing.T, p *mpiProc, r int) int {
	t.Helper()
	want := []byte("OMPI_COMM_WORLD_RANK=" + strconv.Itoa(r) + "\x00")
	for _, pid := range sessionPIDs(p.cmd.Process.Pid) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != builtBinary {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if bytes.Contains(env, want) {
			return pid
		}
	}
	t.Fatalf("no rank %d in the job's session: %s", r, p)
	return 0
}

// poke writes b into MN mn's pool at offset off, through the MN
// process's memory (an shm pool: the file's base is its address there).
func (s *served) poke(t *testing.T, mn int, off uint64, b []byte) {
	t.Helper()
	m := s.file.MNs[mn]
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", m.PID), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(m.Base+off)); err != nil {
		t.Fatalf("writing MN %d's pool at %#x: %v", mn, off, err)
	}
}

func TestPoolResume(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	s := startServe(t, 2)
	s.load(t, 2, "u", []string{"--graph", undirectedWEL(t), "--undirected", "--weighted"})
	s.load(t, 2, "path", []string{"--graph", pathGraph(t, 400), "--weighted"})
	for _, c := range []struct {
		algo, graph string
		args        []string
		every       int
		victim      int // the world rank killed
		again       int // the compute nodes of the resumed run
	}{
		// Rank 0 dies too: its hold on the graph then expires with its
		// heartbeat, which the resumed run waits for.
		{"pagerank", "u", []string{"--iterations", "600"}, 6, 0, 1},
		{"cdlp", "u", []string{"--iterations", "250"}, 5, 1, 2},
		{"bfs", "path", []string{"--source", "0"}, 1, 1, 2}, // every iteration: a kill is likely inside a write
		{"sssp", "path", []string{"--source", "0"}, 10, 1, 1},
	} {
		t.Run(c.algo, func(t *testing.T) {
			want, p := s.run(t, 2, c.graph, c.algo, append(c.args, "--no-checkpoint")...)
			if p.code != 0 {
				t.Fatalf("uninterrupted run: %s", p)
			}
			t.Logf("the uninterrupted run took %v", p.elapsed)
			if l := s.ls(t); len(l.Runs) != 0 {
				t.Fatalf("runs listed after a run with --no-checkpoint: %+v", l.Runs)
			}
			kept := s.killAfter(t, 2, c.victim, 10*c.every, c.graph, c.algo, append(c.args, "--checkpoint-every", strconv.Itoa(c.every))...)
			// Rank 0 gives the run's hold up when the launcher ends the
			// job; a killed rank 0 leaves it to expire, the run listed as
			// running until then.
			state := "unfinished"
			if c.victim == 0 {
				state = "running"
			}
			l := s.ls(t)
			if len(l.Runs) != 1 || l.Runs[0].State != state || l.Runs[0].Kernel != c.algo || l.Runs[0].Graph != c.graph || l.Runs[0].Done < kept {
				t.Fatalf("dmg ls after the kill: runs %+v; want one %s %s on %q of at least %d iterations", l.Runs, state, c.algo, c.graph, kept)
			}
			got, p := s.run(t, c.again, c.graph, c.algo, append(c.args, "--resume")...)
			if p.code != 0 {
				t.Fatalf("resumed run: %s", p)
			}
			t.Logf("the resumed run took %v", p.elapsed)
			m := regexp.MustCompile(`resumed at iteration (\d+);`).FindStringSubmatch(p.out.String())
			if m == nil {
				t.Fatalf("the resumed run does not say where it resumed: %s", p)
			}
			if at, _ := strconv.Atoi(m[1]); at < kept {
				t.Fatalf("resumed at iteration %d; the killed run had kept %d", at, kept)
			}
			samePoolResults(t, fmt.Sprintf("%s resumed at iteration %s on cn:%d", c.algo, m[1], c.again), c.algo, got, want)
			if l := s.ls(t); len(l.Runs) != 0 {
				t.Fatalf("runs listed after the resumed run finished: %+v", l.Runs)
			}
		})
	}
	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args []string
			want string
		}{
			{"nothing to resume", []string{"run", "--pool-file", s.path, "--name", "u", "--algo", "wcc", "--resume"}, "holds no unfinished run of wcc on graph \"u\""},
			{"negative cadence", []string{"run", "--pool-file", s.path, "--name", "u", "--algo", "bfs", "--checkpoint-every", "-1"}, "--checkpoint-every -1; expected 0"},
			{"a kernel not kept", []string{"run", "--pool-file", s.path, "--name", "u", "--algo", "lcc", "--resume"}, "lcc keeps no checkpoint to resume"},
			{"on a load", []string{"load", "--pool-file", s.path, "--name", "x", "--graph", "kron:8", "--resume"}, "--resume has no effect with --pool-file"},
		} {
			p := mpi(t, 60*time.Second, 1, append([]string{"--roles", "cn:1"}, c.args...)...)
			if p.code != 2 {
				t.Errorf("%s: exit %d, want 2: %s", c.name, p.code, p)
			}
			oneLine(t, c.name, p.err.String(), c.want)
		}
		// Without a pool (flags checked in one process).
		for _, flag := range []string{"--resume", "--checkpoint-every=3", "--no-checkpoint"} {
			so, se, code := runLocal(t, "--local", "run", "--graph", "kron:6", "--algo", "bfs", flag)
			if code != 2 {
				t.Errorf("%s without a pool: exit %d, want 2\n%s%s", flag, code, so, se)
			}
			oneLine(t, flag+" without a pool", se, strings.SplitN(flag, "=", 2)[0]+" needs --pool-file")
		}
	})
	t.Run("damaged", func(t *testing.T) {
		args := []string{"--iterations", "600"}
		s.killAfter(t, 2, 1, 60, "u", "pagerank", append(args, "--checkpoint-every", "6")...)
		l := s.ls(t)
		if len(l.Runs) != 1 {
			t.Fatalf("runs after the kill: %+v", l.Runs)
		}
		r, n := l.Runs[0].Region, l.Graphs[0].Vertices
		// A value changed in both buffers: whichever is current is
		// refused by its checksum, with the run left to retry.
		for b := range 2 {
			s.poke(t, r.MN, r.Off+pool.CkptValuesOff(n, b)+8*(n/2), []byte{0x5a})
		}
		_, p := s.run(t, 1, "u", "pagerank", append(args, "--resume")...)
		if p.code == 0 || !strings.Contains(p.err.String(), "is damaged: its values' checksum") {
			t.Fatalf("a resume from a damaged checkpoint: %s", p)
		}
		oneLine(t, "a damaged checkpoint", p.err.String(), "is damaged")
		// Headers of another build: refused by their version word.
		var v [8]byte
		binary.LittleEndian.PutUint64(v[:], pool.CkptVersion+1)
		for h := range 2 {
			s.poke(t, r.MN, r.Off+pool.CkptHeaderOff(h), v[:])
		}
		_, p = s.run(t, 1, "u", "pagerank", append(args, "--resume")...)
		oneLine(t, "a checkpoint of another build", p.err.String(), "written by another build of dmg")
		if p.code == 0 {
			t.Fatalf("a resume from another build's checkpoint: %s", p)
		}
		// A drop of the graph drops its unfinished runs.
		so, se, code, _ := dmgPlain(t, 30*time.Second, "ls", "--pool-file", s.path, "--drop", "u")
		if code != 0 {
			t.Fatalf("dmg ls --drop u: exit %d\n%s%s", code, so, se)
		}
		if l := s.ls(t); len(l.Runs) != 0 {
			t.Fatalf("runs listed after their graph was dropped: %+v", l.Runs)
		}
	})
	s.stop(t)
}
