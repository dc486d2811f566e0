package launch_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/launch"
	"github.com/dmg-hpc/dmg/sizes"
	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/dmg-hpc/dmg/verbs"
)

// Issue 31: what a hostile new user found. Each case runs the built binary
// in a directory of prepared files; bad input must end with exit 2 and one
// "dmg: " line naming the problem, and leave every prepared file as it
// was (same inode, same content).

// hostileDir prepares a directory: a regular file "old", a link "link" to
// it, a FIFO "fifo", a subdirectory "sub" and a user's file named like
// DMG's cxl regions, "dmg-2024-results.csv".
func hostileDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "old"), []byte("old\n"), 0o644))
	must(os.Symlink("old", filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "dmg-2024-results.csv"), []byte("year,x\n"), 0o644))
	return dir
}

// snapshot is every entry of dir: its inode, mode and content.
type fileState struct {
	ino  uint64
	mode os.FileMode
	data string
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		fs := fileState{ino: st.Sys().(*syscall.Stat_t).Ino, mode: st.Mode()}
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			fs.data = string(b)
		}
		m[e.Name()] = fs
	}
	return m
}

func sameFiles(t *testing.T, before, after map[string]fileState) {
	t.Helper()
	for n, b := range before {
		if a, ok := after[n]; !ok {
			t.Errorf("%s was removed", n)
		} else if a != b {
			t.Errorf("%s changed: %+v, was %+v", n, a, b)
		}
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			t.Errorf("%s was left behind", n)
		}
	}
}

// local is a small --local run of bfs with extra run flags.
func local(extra ...string) []string {
	return append([]string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:6"}, extra...)
}

func TestHostileBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		want string
	}{
		{"out and json the same file", func(d string) []string {
			return append([]string{"--json", filepath.Join(d, "old")}, local("--out", filepath.Join(d, ".", "old"))...)
		}, "name the same file"},
		{"out and json the same new file", func(d string) []string {
			return append([]string{"--json", filepath.Join(d, "new")}, local("--out", filepath.Join(d, "sub", "..", "new"))...)
		}, "name the same file"},
		{"out and json a link and its target", func(d string) []string {
			return append([]string{"--json", filepath.Join(d, "link")}, local("--out", filepath.Join(d, "old"))...)
		}, "name the same file"},
		{"out and json both stdout", func(d string) []string {
			return append([]string{"--json", "-"}, local("--out", "-")...)
		}, "name standard output"},
		{"out and cpuprofile the same file", func(d string) []string {
			return append([]string{"--cpuprofile", filepath.Join(d, "p")}, local("--out", filepath.Join(d, "p.rank0.pprof"))...)
		}, "name the same file"},
		{"out a dangling link", func(d string) []string {
			os.Symlink("nowhere", filepath.Join(d, "dangling"))
			return local("--out", filepath.Join(d, "dangling"))
		}, "symbolic link to a missing file"},
		{"out a directory", func(d string) []string { return local("--out", filepath.Join(d, "sub")) }, "is a directory"},
		{"convert out a directory", func(d string) []string {
			return []string{"convert", "kron:4", filepath.Join(d, "sub") + "/"}
		}, "expected a name ending in .bel"},
		{"convert out a directory named .bel", func(d string) []string {
			os.Mkdir(filepath.Join(d, "x.bel"), 0o755)
			return []string{"convert", "kron:4", filepath.Join(d, "x.bel")}
		}, "is a directory"},
		// Accepted silently before.
		{"mn-mem 0", func(string) []string { return local("--mn-mem", "0") }, "--mn-mem 0; expected a size above 0"},
		{"value-pull-threshold 0", func(string) []string { return local("--value-pull-threshold", "0") }, "--value-pull-threshold 0; expected a finite number > 0"},
		{"wait without a pool", func(string) []string { return local("--wait", "5s") }, "--wait 5s; expected --pool-file too"},
		{"roles empty", func(string) []string {
			return []string{"--local", "--roles", "", "run", "--algo", "bfs", "--graph", "kron:6"}
		}, "--roles is empty"},
		{"source of a kernel without one", func(string) []string {
			return []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "wcc", "--graph", "kron:6", "--source", "3"}
		}, "wcc has no source vertex"},
		{"several sources for bfs", func(string) []string {
			return []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:6", "--source", "3,4"}
		}, "--source names 2 vertices; bfs takes one"},
		{"a source list with a word", func(string) []string {
			return []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bc", "--graph", "kron:6", "--source", "3,x"}
		}, `"x" is not a vertex id`},
		{"a source list with a missing vertex", func(string) []string {
			return []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bc", "--graph", "kron:6", "--source", "3,99999"}
		}, "source vertex 99999 is not a vertex of kron:6"},
		{"a network fabric in one process", func(string) []string { return local("--fabric", "tcp") }, "--fabric tcp with --local"},
		{"an empty edge list", func(d string) []string {
			os.WriteFile(filepath.Join(d, "empty.el"), nil, 0o644)
			return []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", filepath.Join(d, "empty.el")}
		}, "empty.el has no vertices (an empty input)"},
		// Bounded reads.
		{"convert a character device", func(d string) []string {
			return []string{"convert", "--format", "el", "/dev/zero", filepath.Join(d, "z.bel")}
		}, "/dev/zero: a character device, not a regular file"},
		{"graph a FIFO", func(d string) []string { return local("--graph", filepath.Join(d, "fifo")) }, "fifo: a FIFO, not a regular file"},
		{"convert a FIFO", func(d string) []string {
			return []string{"convert", "--format", "el", filepath.Join(d, "fifo"), filepath.Join(d, "z.bel")}
		}, "fifo: a FIFO, not a regular file"},
		{"a line without end", func(d string) []string {
			longLine(filepath.Join(d, "long.el"))
			return local("--graph", filepath.Join(d, "long.el"))
		}, "long.el:2: a line longer than 1048576 bytes"},
		{"convert a line without end", func(d string) []string {
			longLine(filepath.Join(d, "long.el"))
			return []string{"convert", filepath.Join(d, "long.el"), filepath.Join(d, "z.bel")}
		}, "long.el:2: a line longer than 1048576 bytes"},
		{"cxl-dir missing", func(d string) []string {
			return local("--fabric", "cxl", "--cxl-dir", filepath.Join(d, "missing"))
		}, "missing is not an existing directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := hostileDir(t)
			args := tc.args(dir)
			before := snapshot(t, dir)
			so, se, code, took := dmgPlain(t, 30*time.Second, args...)
			if code != 2 {
				t.Fatalf("%v: exit %d, want 2\nstdout:%s\nstderr:%s", args, code, so, se)
			}
			oneLine(t, tc.name, se, tc.want)
			sameFiles(t, before, snapshot(t, dir))
			if took > 10*time.Second {
				t.Errorf("took %v to fail", took)
			}
		})
	}
}

// Outputs that are not regular files are written, never replaced.
func TestHostileOutputs(t *testing.T) {
	t.Run("device", func(t *testing.T) {
		dir := t.TempDir()
		dev := filepath.Join(dir, "null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Skipf("mknod: %v (root only)", err)
		}
		before := snapshot(t, dir)
		if so, se, code, _ := dmgPlain(t, 30*time.Second, append([]string{"--json", dev}, local("--out", filepath.Join(dir, "null2"))...)...); code != 0 {
			t.Fatalf("exit %d\n%s%s", code, so, se)
		}
		os.Remove(filepath.Join(dir, "null2"))
		sameFiles(t, before, snapshot(t, dir))
	})
	t.Run("fifo", func(t *testing.T) {
		dir := hostileDir(t)
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(filepath.Join(dir, "fifo"))
			if err != nil {
				got <- nil
				return
			}
			defer f.Close()
			var b bytes.Buffer
			b.ReadFrom(f)
			got <- b.Bytes()
		}()
		before := snapshot(t, dir)
		if so, se, code, _ := dmgPlain(t, 30*time.Second, local("--out", filepath.Join(dir, "fifo"))...); code != 0 {
			t.Fatalf("exit %d\n%s%s", code, so, se)
		}
		if b := <-got; strings.Count(string(b), "\n") != 64 {
			t.Errorf("fifo carried %d lines, want 64", strings.Count(string(b), "\n"))
		}
		sameFiles(t, before, snapshot(t, dir))
	})
	t.Run("link", func(t *testing.T) {
		dir := hostileDir(t)
		link := filepath.Join(dir, "link")
		if so, se, code, _ := dmgPlain(t, 30*time.Second, local("--out", link)...); code != 0 {
			t.Fatalf("exit %d\n%s%s", code, so, se)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v %v", st, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "old")); strings.Count(string(b), "\n") != 64 {
			t.Errorf("the link's target holds %q, want the results", b)
		}
	})
	t.Run("stdout", func(t *testing.T) {
		dir := hostileDir(t)
		wd, _ := os.Getwd()
		defer os.Chdir(wd)
		os.Chdir(dir)
		before := snapshot(t, dir)
		so, se, code, _ := dmgPlain(t, 30*time.Second, local("--out", "-")...)
		if code != 0 || strings.Count(so, "\n") != 64 || !strings.Contains(se, "bfs") {
			t.Fatalf("exit %d; want the 64 results alone on stdout, the report on stderr\nstdout:%s\nstderr:%s", code, so, se)
		}
		sameFiles(t, before, snapshot(t, dir))
	})
}

// --fabric cxl removes a dead job's pools from --cxl-dir, and nothing
// else: a user's files named like DMG's stay.
func TestHostileStaleFiles(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	dir := hostileDir(t)
	deadPool := verbs.RuntimeMarker + fmt.Sprintf("%d-5-cxl-mn0-0123456789ab", cmd.Process.Pid)
	for _, n := range []string{deadPool, fmt.Sprintf("dmg-%d-cxl-mn0-0123456789ab", cmd.Process.Pid), "dmg-1-x"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	if so, se, code, _ := dmgPlain(t, 60*time.Second, local("--fabric", "cxl", "--cxl-dir", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, so, se)
	}
	if _, err := os.Stat(filepath.Join(dir, deadPool)); err == nil {
		t.Error("the dead job's pool was not removed")
	}
	delete(before, deadPool)
	sameFiles(t, before, snapshot(t, dir))
}

// longLine writes an edge list whose second line is 3 MiB without a line
// end (a failure shows as the test's wrong message).
func longLine(path string) {
	os.WriteFile(path, append([]byte("1 2\n"), bytes.Repeat([]byte{'1'}, 3<<20)...), 0o644)
}

// The same under mpirun, where the ranks read ranges of a text input
// (staged, two CNs) and only rank 0 may print.
func TestHostileBadInputUnderMpirun(t *testing.T) {
	dir := hostileDir(t)
	longLine(filepath.Join(dir, "long.el"))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"graph a FIFO", []string{"--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", filepath.Join(dir, "fifo")}, "a FIFO, not a regular file"},
		{"a line without end, staged", []string{"--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", filepath.Join(dir, "long.el")}, "long.el:2: a line longer than 1048576 bytes"},
		{"convert a line without end, in ranges", []string{"convert", filepath.Join(dir, "long.el"), filepath.Join(dir, "z.bel")}, "long.el:2: a line longer than 1048576 bytes"},
		{"workers", []string{"--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", "kron:6", "--workers", "1000000"}, "--workers 1000000 × --inflight 1 on 2 compute node(s) of this host"},
		{"mn-mem", []string{"--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", "kron:6", "--mn-mem", "100TiB"}, "the pools of the 1 memory node(s) on this host"},
		{"out and json the same file", append([]string{"--json", filepath.Join(dir, "old")}, "--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", "kron:6", "--out", filepath.Join(dir, "link")), "name the same file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, dir)
			res := mpitest.Exec(t, 3, nil, dmgBin(t), tc.args...)
			if res.ExitCode != 2 {
				t.Fatalf("exit %d, want 2\nstdout:%s\nstderr:%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			oneLine(t, tc.name, res.Stderr, tc.want)
			sameFiles(t, before, snapshot(t, dir))
		})
	}
}

// Sizes from flags and headers are checked against this machine's memory
// before anything is allocated: bad input, not an out-of-memory crash.
// A case this machine could hold is skipped (it would run, for long).
func TestHostileSizes(t *testing.T) {
	mem := sizes.This().Memory
	bel := func(d string, n uint64) string {
		p := filepath.Join(d, "huge.bel")
		h := []byte("DMGBEL\x00\x01")
		h = binary.LittleEndian.AppendUint32(h, 0)
		h = binary.LittleEndian.AppendUint32(h, 0)
		h = binary.LittleEndian.AppendUint64(h, n)
		h = binary.LittleEndian.AppendUint64(h, 1)
		os.WriteFile(p, append(h, make([]byte, 16)...), 0o644)
		return p
	}
	mtx := func(d string) string {
		p := filepath.Join(d, "huge.mtx")
		os.WriteFile(p, []byte("%%MatrixMarket matrix coordinate pattern general\n4000000000 4000000000 1\n1 2\n"), 0o644)
		return p
	}
	for _, tc := range []struct {
		name  string
		needs uint64 // bytes the case needs at least (skipped when mem holds it)
		args  func(d string) []string
		want  string
	}{
		{"workers", 1e6 << 20, func(string) []string { return local("--workers", "1000000") }, "--workers 1000000 × --inflight 1"},
		{"inflight", 1e6 << 20, func(string) []string { return local("--inflight", "1000000") }, "× --inflight 1000000 on 1 compute node(s)"},
		{"workers × inflight overflow", math.MaxUint64, func(string) []string {
			return local("--workers", "2000000000", "--inflight", "2000000000")
		}, "more than 16 EiB"},
		{"kron:31", 1 << 35, func(string) []string { return local("--graph", "kron:31") }, "kron:31: 2147483648 vertices"},
		{"bel header of 2^32-1 vertices", 1 << 36, func(d string) []string { return local("--graph", bel(d, 1<<32-1)) }, "huge.bel: byte 16: 4294967295 vertices"},
		{"convert a bel header of 2^32-1 vertices", 1 << 36, func(d string) []string {
			return []string{"convert", bel(d, 1<<32-1), filepath.Join(d, "out.bel")}
		}, "huge.bel: byte 16: 4294967295 vertices would need"},
		{"bel header of 2^40 vertices", 0, func(d string) []string { return local("--graph", bel(d, 1<<40)) }, "dense ids are 32-bit"},
		{"mtx of 4e9 rows", 64e9, func(d string) []string { return local("--graph", mtx(d)) }, "huge.mtx:2: matrix dimension 4000000000"},
		{"mn-mem", 100 << 30, func(string) []string { return local("--mn-mem", "100GiB") }, "the pools of the 1 memory node(s) on this host (--mn-mem, or what the graph needs) would need 100 GiB"},
		{"more compute nodes than vertices", 0, func(string) []string {
			return []string{"--local", "--roles", "cn:100,mn:2", "run", "--algo", "bfs", "--graph", "kron:6"}
		}, "100 compute nodes for a graph of 64 vertices"},
		{"local roles", 0, func(string) []string {
			return []string{"--local", "--roles", "cn:65536,mn:65536", "run", "--algo", "bfs", "--graph", "kron:6"}
		}, "131072 ranks in one process; expected at most 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs > 0 && tc.needs <= mem {
				t.Skipf("this machine holds %d bytes", mem)
			}
			dir := hostileDir(t)
			args := tc.args(dir)
			before := snapshot(t, dir)
			so, se, code, took := dmgPlain(t, 30*time.Second, args...)
			if code != 2 {
				t.Fatalf("%v: exit %d, want 2\nstdout:%s\nstderr:%.2000s", args, code, so, se)
			}
			oneLine(t, tc.name, se, tc.want)
			sameFiles(t, before, snapshot(t, dir))
			if took > 10*time.Second {
				t.Errorf("took %v to fail", took)
			}
		})
	}
}

// hostileValues are the values the command-line property test gives
// flags: FuzzRunFlags' seeds, and values each flag takes.
var hostileValues = []string{"NaN", "Inf", "-Inf", "-1", "0", "1e308", "18446744073709551615", "18446744073709551616",
	"", "0.5", "10s", "-3s", "abc", "8GiB", "2KiB", "1", "2", "3", "0.85", "1ns", "1000000", "4KiB", "64MiB"}

// hostileRoles are the roles strings the property test gives --roles
// under a launch of two ranks.
var hostileRoles = []string{"", "cn:1,mn:1", "mn:1,cn:1", "cn:2", "mn:2", "cn:0,mn:2", "cn:1,mn:1,cn:1", "cn:-1,mn:3",
	"cn:1;mn:1", "cn:1,mn:1,", ":", "cn", "cn:x,mn:1", "CN:1,MN:1", "cn:18446744073709551617,mn:1", "cn: 1,mn:1", "cn:1,mn:1,gpu:1"}

// hostileLines are the lines of the small files the property test gives
// --graph, and hostileExts their names' endings.
var (
	hostileLines = []string{"1 2", "2 3 0.5", "0 0", "-1 2", "a b", "1", "1 2 3 4", "18446744073709551615 1", "18446744073709551616 1",
		"1 2 NaN", "1 2 -Inf", "% comment", "# comment", "", "\t1\t2", "1,2", "%%MatrixMarket matrix coordinate pattern general",
		"3 3 2", "\x00\x01\xff", "1 2\r", "4294967296 7"}
	hostileExts = []string{".el", ".wel", ".mtx", ".txt", ".bel", ".e", ""}
)

// The command line as a hostile user writes it, under mpirun: run with
// one to three flags from FuzzRunFlags' list set to values from
// hostileValues, on a small graph, cn:1,mn:1; with a roles string from
// hostileRoles; and on a small file of hostileLines. Every case ends
// within mpitest's bound with exit 0 (and a result) or exit 2 (and one
// "dmg: " line), never a crash: no panic, no signal, no second line. The
// cases are drawn from a fixed seed (DMG_FLAGS_SEED=N draws others,
// DMG_FLAGS_CASES=N more).
func TestHostileFlagsUnderMpirun(t *testing.T) {
	if testing.Short() {
		t.Skip("mpirun integration test")
	}
	seed, cases := uint64(31), 16
	if s := os.Getenv("DMG_FLAGS_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	if s := os.Getenv("DMG_FLAGS_CASES"); s != "" {
		fmt.Sscan(s, &cases)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	pick := func(v []string) string { return v[rng.IntN(len(v))] }
	algos := algo.Names()
	dir := t.TempDir()
	exits := map[int]int{}
	defer func() { t.Logf("seed %d, %d cases: exits %v", seed, cases*2, exits) }()
	run := func(name string, args []string) {
		t.Run(name, func(t *testing.T) {
			res := mpitest.Exec(t, 2, nil, dmgBin(t), args...)
			exits[res.ExitCode]++
			said := 0
			for _, l := range strings.Split(res.Stderr, "\n") {
				if strings.HasPrefix(l, "dmg: ") {
					said++
				}
			}
			crashed := strings.Contains(res.Stderr, "panic") || strings.Contains(res.Stderr, "goroutine ") || strings.Contains(res.Stderr, "signal ")
			switch {
			case crashed || res.ExitCode != 0 && res.ExitCode != 2:
				t.Errorf("dmg %q: exit %d after %v; want 0 or 2, no crash\nstderr:\n%s", args, res.ExitCode, res.Elapsed, res.Stderr)
			case res.ExitCode == 2 && said != 1:
				t.Errorf("dmg %q: exit 2 with %d \"dmg: \" lines; want one\nstderr:\n%s", args, said, res.Stderr)
			case res.ExitCode == 0 && (said != 0 || !strings.Contains(res.Stdout, "result:")):
				t.Errorf("dmg %q: exit 0 but stderr has %d \"dmg: \" lines or stdout no result\nstdout:\n%s\nstderr:\n%s", args, said, res.Stdout, res.Stderr)
			}
		})
	}
	for i := range cases {
		args := []string{"--roles", "cn:1,mn:1", "run", "--algo", pick(algos), "--graph", "kron:8", "--undirected", "--weighted", "--iterations", "3"}
		for range 1 + rng.IntN(3) {
			args = append(args, "--"+pick(launch.FuzzedFlags)+"="+pick(hostileValues))
		}
		run(fmt.Sprintf("%d", i), args)
	}
	for i := range cases / 2 {
		run(fmt.Sprintf("roles %d", i), []string{"--roles", pick(hostileRoles), "run", "--algo", pick(algos), "--graph", "kron:6"})
	}
	for i := range cases / 2 {
		var lines []string
		for range 1 + rng.IntN(6) {
			lines = append(lines, pick(hostileLines))
		}
		text := strings.Join(lines, "\n")
		if rng.IntN(2) == 0 {
			text += "\n"
		}
		path := filepath.Join(dir, fmt.Sprintf("g%d%s", i, pick(hostileExts)))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		run(fmt.Sprintf("file %d %q", i, text), []string{"--roles", "cn:1,mn:1", "run", "--algo", pick(algos), "--graph", path})
	}
}
