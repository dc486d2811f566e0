package launch_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/spmd/mpitest"
	"github.com/dmg-hpc/dmg/testbed"
)

// dmgBin is the dmg binary built once for the command-line tests.
func dmgBin(t *testing.T) string {
	t.Helper()
	return builtBinary
}

var builtBinary string

// parallelMpirun lets a long test of many short mpirun jobs overlap
// another such test (two at a time, -parallel: on two cores a job's
// start-up, the libraries' and MPI's, leaves a core idle about a quarter
// of the time). Go runs parallel tests once every sequential one is done,
// so they never overlap the tests of faults, timeouts and hosts, which
// stay sequential; they keep the default --peer-timeout (30s), far above
// what sharing the cores costs a job.
func parallelMpirun(t *testing.T) {
	if !testing.Short() {
		t.Parallel()
	}
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dmg-cli-test")
	if err != nil {
		panic(err)
	}
	builtBinary = filepath.Join(dir, "dmg")
	out, err := exec.Command("go", "build", "-o", builtBinary, "github.com/dmg-hpc/dmg/cmd/dmg").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	testbed.Teardown()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runLocal(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runPlain(t, nil, args...)
}

// runPlain runs dmg as a plain process, with env added to a clean
// environment: a plain run must not look launched even when the test
// itself runs under a launcher.
func runPlain(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(dmgBin(t), args...)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.Env = append(cleanEnv(), env...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return so.String(), se.String(), code
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OMPI_COMM_WORLD") || strings.HasPrefix(kv, "PMI") || strings.HasPrefix(kv, "SLURM_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

var roleRow = regexp.MustCompile(`(?m)^(\d+)\s+(cn|mn)(\d+)\s+\S+\s+(\d+)\s+\d+$`)

// checkRoleMap asserts the info table lists every rank with the right role.
func checkRoleMap(t *testing.T, out string, cn, mn int, distinctPIDs bool) {
	t.Helper()
	rows := roleRow.FindAllStringSubmatch(out, -1)
	if len(rows) != cn+mn {
		t.Fatalf("want %d role rows, got %d:\n%s", cn+mn, len(rows), out)
	}
	pids := map[string]bool{}
	for i, r := range rows {
		wantRole, wantIdx := "cn", i
		if i >= cn {
			wantRole, wantIdx = "mn", i-cn
		}
		if r[1] != itoa(i) || r[2] != wantRole || r[3] != itoa(wantIdx) {
			t.Errorf("row %d = %q, want rank %d %s%d", i, r[0], i, wantRole, wantIdx)
		}
		pids[r[4]] = true
	}
	if distinctPIDs && len(pids) != cn+mn {
		t.Errorf("want %d processes, saw %d distinct pids", cn+mn, len(pids))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestInfoUnderMpirun(t *testing.T) {
	for _, tc := range []struct{ np, cn, mn int }{{2, 1, 1}, {4, 2, 2}, {5, 3, 2}} {
		res := mpitest.Exec(t, tc.np, nil, dmgBin(t), "--roles", "cn:"+itoa(tc.cn)+",mn:"+itoa(tc.mn), "info")
		if res.ExitCode != 0 {
			t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		}
		if !strings.Contains(res.Stdout, "Open MPI") {
			t.Errorf("no MPI library version in:\n%s", res.Stdout)
		}
		if strings.TrimSpace(res.Stderr) != "" {
			t.Errorf("stderr not empty: %q", res.Stderr)
		}
		// Exactly one report: only rank 0 prints.
		if n := strings.Count(res.Stdout, "DMG job:"); n != 1 {
			t.Errorf("%d reports printed, want 1", n)
		}
		checkRoleMap(t, res.Stdout, tc.cn, tc.mn, true)
	}
}

func TestInfoLocal(t *testing.T) {
	out, errOut, code := runLocal(t, "--local", "--roles", "cn:3,mn:2", "info")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	checkRoleMap(t, out, 3, 2, false)
}

func TestInfoJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "info.json")
	res := mpitest.Exec(t, 3, nil, dmgBin(t), "--roles", "cn:1,mn:2", "info", "--json", path)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mpi_library"`, `"cn": 1`, `"mn": 2`, `"role": "mn"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

// Bad input: one line from rank 0, exit status 2, every rank gone quickly.
func TestBadInputUnderMpirun(t *testing.T) {
	parallelMpirun(t)
	tests := []struct {
		name string
		np   int
		args []string
		want string
	}{
		{"roles do not add up", 4, []string{"--roles", "cn:2,mn:3", "info"}, "adds up to 5 ranks but the job has 4"},
		{"zero CNs", 4, []string{"--roles", "cn:0,mn:4", "info"}, "at least one compute node"},
		{"zero MNs", 2, []string{"--roles", "cn:2,mn:0", "info"}, "at least one compute node and one memory node"},
		{"unknown role", 4, []string{"--roles", "gpu:2,mn:2", "info"}, `unknown role "gpu"`},
		{"malformed count", 4, []string{"--roles", "cn:two,mn:2", "info"}, "not a whole number"},
		{"malformed part", 4, []string{"--roles", "cn2,mn2", "info"}, "not NAME:COUNT"},
		{"unknown flag", 4, []string{"--roles", "cn:2,mn:2", "--frobnicate", "info"}, "unknown flag: --frobnicate"},
		{"mn-nice above 19", 2, []string{"--mn-nice", "20", "info"}, "--mn-nice 20; expected a nice value from 0 to 19"},
		{"mn-nice negative", 2, []string{"--mn-nice", "-5", "info"}, "--mn-nice -5"},
		{"start-timeout below 1s", 2, []string{"--start-timeout", "10ms", "info"}, "--start-timeout 10ms; expected at least 1s"},
		{"unknown command", 2, []string{"frobnicate"}, "unknown command"},
		{"one rank, default roles", 1, []string{"info"}, "at least 2 ranks"},
		{"damping NaN", 2, runArgs("pagerank", "--damping", "NaN"), "--damping NaN; expected a number from 0 to 1"},
		{"damping above 1", 2, runArgs("pagerank", "--damping", "1.5"), "--damping 1.5"},
		{"alpha NaN", 2, runArgs("pagerank", "--alpha", "NaN"), "--alpha NaN"},
		{"dense threshold NaN", 2, runArgs("pagerank", "--dense-threshold", "NaN"), "--dense-threshold NaN"},
		{"pull threshold Inf", 2, runArgs("pagerank", "--pull-threshold", "Inf"), "--pull-threshold +Inf"},
		{"edge factor 0", 2, []string{"--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:12:0"}, "edge factor 0"},
		{"iterations 0", 2, runArgs("pagerank", "--iterations", "0"), "--iterations 0; expected at least 1"},
		{"graph is a directory", 2, []string{"--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", os.TempDir()}, "a directory"},
		{"batch 0", 2, runArgs("bfs", "--batch", "0"), "--batch 0"},
		{"peer-timeout 1ns", 2, runArgs("bfs", "--peer-timeout", "1ns"), "--peer-timeout 1ns; expected 0 (no watch) or at least 2s"},
		{"workers -1", 2, runArgs("bfs", "--workers", "-1"), "--workers -1"},
		{"inflight 0", 2, runArgs("bfs", "--inflight", "0"), "--inflight 0"},
		{"timeout 0s", 2, runArgs("bfs", "--timeout", "0s"), "--timeout 0s"},
		{"source -1", 2, runArgs("bfs", "--source", "-1"), `--source "-1" is not a vertex id`},
		{"source 2^64-1 is an id, not a vertex of kron:8", 2, runArgs("bfs", "--source", "18446744073709551615"), "source vertex 18446744073709551615 is not a vertex"},
		{"out in a missing directory", 2, runArgs("bfs", "--out", "/nonexistent/x"), "--out: outfile: output /nonexistent/x: directory /nonexistent does not exist"},
		{"out onto a directory", 2, runArgs("bfs", "--out", os.TempDir()), "is a directory; expected a file"},
		{"json in a missing directory", 2, append([]string{"--json", "/nonexistent/x"}, runArgs("bfs")...), "--json: outfile: output /nonexistent/x: directory /nonexistent does not exist"},
		{"cxl pool bigger than the machine", 2, []string{"--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:8", "--fabric", "cxl", "--mn-mem", "100TiB"}, "would need 100 TiB"},
		{"cxl device missing", 2, []string{"--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:8", "--fabric", "cxl", "--cxl-dev", "/nonexistent/dax0.0"}, "/nonexistent/dax0.0"},
		{"cxl flags without cxl", 2, []string{"--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:8", "--cxl-dir", "/tmp"}, "need --fabric cxl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mpitest.Exec(t, tc.np, nil, dmgBin(t), tc.args...)
			if res.ExitCode != 2 {
				t.Fatalf("exit %d, want 2\nstdout:%s\nstderr:%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "dmg: ") || !strings.Contains(lines[0], tc.want) {
				t.Fatalf("stderr should be one line containing %q, got:\n%s", tc.want, res.Stderr)
			}
			if res.Stdout != "" {
				t.Errorf("stdout not empty: %q", res.Stdout)
			}
			// No hang: a failure takes 1–3 s here, and a hang runs into
			// mpitest's bound; 30 s leaves room for a machine shared with
			// other jobs (at load 10 this took 22 s).
			if res.Elapsed.Seconds() > 30 {
				t.Errorf("took %v to fail", res.Elapsed)
			}
		})
	}
}

// runArgs is a small run of algo on kron:8 with extra flags.
func runArgs(algo string, extra ...string) []string {
	return append([]string{"--roles", "cn:1,mn:1", "run", "--algo", algo, "--graph", "kron:8"}, extra...)
}

// A run that fails on its input leaves an existing output as it was.
func TestFailedRunKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	out, js := filepath.Join(dir, "out"), filepath.Join(dir, "report.json")
	for _, p := range []string{out, js} {
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := mpitest.Exec(t, 2, nil, dmgBin(t), append([]string{"--json", js}, runArgs("pagerank", "--out", out, "--damping", "NaN")...)...)
	if res.ExitCode != 2 {
		t.Fatalf("exit %d, want 2\n%s", res.ExitCode, res.Stderr)
	}
	for _, p := range []string{out, js} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "old\n" {
			t.Errorf("%s after a failed run: %q, %v; want it untouched", p, b, err)
		}
	}
}

func TestBadInputLocal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"info"}, "not started by a parallel launcher"},
		{[]string{"--local", "--roles", "cn:1", "info"}, "both cn and mn"},
		{[]string{"--local", "--nope"}, "unknown flag"},
	} {
		_, errOut, code := runLocal(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d stderr %q; want 2 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestHelpDocumentsFlags(t *testing.T) {
	out, _, code := runLocal(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"--roles", "--local", "--json", "--verbose", "info"} {
		if !strings.Contains(out, f) {
			t.Errorf("--help does not mention %s", f)
		}
	}
}

// `dmg bench verbs` runs over both providers and reports every case.
func TestBenchVerbs(t *testing.T) {
	for _, fab := range []string{"shm", "tcp", "cxl"} {
		t.Run(fab, func(t *testing.T) {
			js := filepath.Join(t.TempDir(), "bench.json")
			res := mpitest.Exec(t, 2, nil, dmgBin(t), "--roles", "cn:1,mn:1", "bench", "verbs", "--fabric", fab, "--duration", "20ms", "--span", "1MiB", "--json", js)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			wants := []string{"4.0 KiB", "cas", "faa", fab}
			if fab != "cxl" { // a load/store backend has no provider call to split
				wants = append(wants, "call per op")
			}
			for _, want := range wants {
				if !strings.Contains(res.Stdout, want) {
					t.Errorf("bench output lacks %q:\n%s", want, res.Stdout)
				}
			}
			b, err := os.ReadFile(js)
			if err != nil || !strings.Contains(string(b), `"ops_per_sec"`) {
				t.Errorf("bench JSON: %v %s", err, b)
			}
		})
	}
}

// `dmg load` lays a Kronecker graph out evenly over the memory nodes.
func TestLoadUnderMpirun(t *testing.T) {
	js := filepath.Join(t.TempDir(), "load.json")
	res := mpitest.Exec(t, 4, nil, dmgBin(t), "--roles", "cn:2,mn:2", "load", "--graph", "kron:16", "--json", js)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"65,536 vertices", "out-degree:", "degree histogram", "in place", "mn0", "mn1", "edges/s"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("load report lacks %q:\n%s", want, res.Stdout)
		}
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		MNBytes     []uint64 `json:"mn_bytes"`
		MNImbalance float64  `json:"mn_imbalance"`
		InPlace     float64  `json:"in_place_share"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.MNBytes) != 2 || rep.MNImbalance > 1.10 || rep.InPlace <= 0 || rep.InPlace >= 1 {
		t.Fatalf("layout report %+v: want 2 MNs within 10%% and a partial in-place share", rep)
	}
}

// Every launch-level error of an in-process job is printed once, by one
// rank, with exit 2: the ranks agree on it as they do under mpirun. The
// cases are TestBadInputUnderMpirun's and TestRunBadInput's that apply to
// --local, and the two that once panicked in a collective (--mn-mem 1EiB,
// --alpha 1e308).
func TestBadInputLocalOnce(t *testing.T) {
	dir := t.TempDir()
	neg := filepath.Join(dir, "neg.wel")
	bad := filepath.Join(dir, "bad.el")
	for p, b := range map[string]string{neg: "1 2 0.5\n2 3 -1.5\n", bad: "1 2\n2 x\n"} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(algo string, extra ...string) []string {
		return append([]string{"--local", "--roles", "cn:2,mn:2", "run", "--algo", algo, "--graph", "kron:8"}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"mn-mem 1EiB", run("bfs", "--mn-mem", "1EiB"), "--mn-mem 1EiB is above 256 TiB"},
		{"mn-mem above the offset space", run("pagerank", "--mn-mem", "300TiB"), "is above 256 TiB"},
		{"alpha 1e308", run("pagerank", "--alpha", "1e308"), "--alpha 1e+308; expected a number from 0 to 1e9"},
		{"alpha 1e308, bfs, cn:3", []string{"--local", "--roles", "cn:3,mn:2", "run", "--algo", "bfs", "--graph", "kron:8", "--alpha", "1e308"}, "--alpha"},
		{"roles do not add up", []string{"--local", "--roles", "cn:0,mn:4", "info"}, "at least one compute node"},
		{"unknown role", []string{"--local", "--roles", "gpu:2,mn:2", "info"}, `unknown role "gpu"`},
		{"malformed count", []string{"--local", "--roles", "cn:two,mn:2", "info"}, "not a whole number"},
		{"malformed part", []string{"--local", "--roles", "cn2,mn2", "info"}, "not NAME:COUNT"},
		{"unknown flag", []string{"--local", "--roles", "cn:2,mn:2", "--frobnicate", "info"}, "unknown flag: --frobnicate"},
		{"unknown command", []string{"--local", "frobnicate"}, "unknown command"},
		{"damping NaN", run("pagerank", "--damping", "NaN"), "--damping NaN; expected a number from 0 to 1"},
		{"damping above 1", run("pagerank", "--damping", "1.5"), "--damping 1.5"},
		{"alpha NaN", run("pagerank", "--alpha", "NaN"), "--alpha NaN"},
		{"dense threshold NaN", run("pagerank", "--dense-threshold", "NaN"), "--dense-threshold NaN"},
		{"pull threshold Inf", run("pagerank", "--pull-threshold", "Inf"), "--pull-threshold +Inf"},
		{"edge factor 0", []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:12:0"}, "edge factor 0"},
		{"iterations 0", run("pagerank", "--iterations", "0"), "--iterations 0; expected at least 1"},
		{"graph is a directory", []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", os.TempDir()}, "a directory"},
		{"batch 0", run("bfs", "--batch", "0"), "--batch 0"},
		{"workers -1", run("bfs", "--workers", "-1"), "--workers -1"},
		{"inflight 0", run("bfs", "--inflight", "0"), "--inflight 0"},
		{"timeout 0s", run("bfs", "--timeout", "0s"), "--timeout 0s"},
		{"source -1", run("bfs", "--source", "-1"), `--source "-1" is not a vertex id`},
		{"source not in graph", run("bfs", "--source", "999999"), "source vertex 999999 is not a vertex"},
		{"out in a missing directory", run("bfs", "--out", "/nonexistent/x"), "directory /nonexistent does not exist"},
		{"out onto a directory", run("bfs", "--out", os.TempDir()), "is a directory; expected a file"},
		{"json in a missing directory", append([]string{"--json", "/nonexistent/x"}, run("bfs")...), "directory /nonexistent does not exist"},
		{"unknown algorithm", run("louvain"), `unknown algorithm "louvain"`},
		{"no algorithm", []string{"--local", "--roles", "cn:2,mn:2", "run", "--graph", "kron:6"}, "--algo is required"},
		{"negative weight", []string{"--local", "--roles", "cn:2,mn:1", "run", "--algo", "sssp", "--graph", neg}, "negative"},
		{"malformed file", []string{"--local", "--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", bad}, "bad.el:2"},
		{"missing file", []string{"--local", "--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", filepath.Join(dir, "nope.el")}, "nope.el"},
		{"mn-mem too small", []string{"--local", "--roles", "cn:2,mn:1", "run", "--algo", "bfs", "--graph", "kron:10", "--mn-mem", "4KiB"}, "--mn-mem"},
		{"bad mn-mem", run("bfs", "--mn-mem", "lots"), "not a size"},
		{"mn-mem above the machine's memory", run("bfs", "--mn-mem", "100TiB"), "this machine has"},
		{"cxl flags without cxl", []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:8", "--cxl-dir", "/tmp"}, "need --fabric cxl"},
		{"peer-timeout 1ns", []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:8", "--peer-timeout", "1ns"}, "--peer-timeout 1ns; expected 0 (no watch) or at least 2s"},
		{"peer-timeout 1.9s", run("bfs", "--peer-timeout", "1.9s"), "--peer-timeout 1.9s"},
		{"load, bad mn-mem", []string{"--local", "--roles", "cn:2,mn:2", "load", "--graph", "kron:8", "--mn-mem", "1EiB"}, "--mn-mem 1EiB"},
		{"cn-mem above the machine's memory", run("bfs", "--cn-mem", "100TiB"), "--cn-mem 100TiB for each of the 2 CN(s) on this host would need 200 TiB"},
		{"cn-mem below the least", run("bfs", "--cn-mem", "1MiB"), "--cn-mem 1MiB; expected at least 4.0 MiB"},
		{"bad cn-mem", run("bfs", "--cn-mem", "lots"), `--cn-mem "lots" is not a size`},
		{"load-mem above cn-mem", run("bfs", "--cn-mem", "64MiB", "--load-mem", "128MiB"), "--load-mem 128MiB is more than --cn-mem 64MiB"},
		{"cn-mem below the chunk's state", []string{"--local", "--roles", "cn:1,mn:1", "run", "--algo", "bfs", "--graph", "kron:18", "--cn-mem", "4MiB"}, "--cn-mem 4.0 MiB is too small for CN 0's chunk: its 262,144 vertices need 7.0 MiB of vertex state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			so, se, code := runLocal(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstdout:%s\nstderr:%s", code, so, se)
			}
			if n := strings.Count(se, "dmg:"); n != 1 || !strings.Contains(se, tc.want) || strings.Count(strings.TrimSpace(se), "\n") != 0 {
				t.Errorf("stderr should be one \"dmg:\" line containing %q; got %d:\n%s", tc.want, n, se)
			}
		})
	}
}
