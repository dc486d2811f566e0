package launch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr/csrtest"
	"github.com/dmg-hpc/dmg/testbed"
)

// The tests under a real Slurm: slurmctld and a slurmd on each of the
// test bed's 4 emulated hosts (scripts/testbed-slurm.sh), jobs started by
// srun, sbatch and salloc as a user would, every result verified.

const verifiedLine = "verified: the serial verifier accepts the result"

// slurm is Slurm on the shared test bed of 4 hosts.
func slurm(t *testing.T) (*testbed.Bed, *testbed.Slurm) {
	t.Helper()
	bed := testbed.Shared(t, 4)
	return bed, bed.Slurm(t)
}

// slurmRun runs cmd in dir, failing the test (with its output) unless it
// exits 0; it returns the combined output.
func slurmRun(t *testing.T, cmd *exec.Cmd, dir string, env ...string) string {
	t.Helper()
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v after %.1fs\n%s", strings.Join(cmd.Args, " "), err, time.Since(start).Seconds(), out)
	}
	t.Logf("%s: %.1fs", filepath.Base(cmd.Args[0])+" "+strings.Join(cmd.Args[1:min(len(cmd.Args), 4)], " "), time.Since(start).Seconds())
	return string(out)
}

// slurmPR is the reference for the Slurm runs: PageRank on kron:12 by an
// in-process run (--local), computed once.
var slurmPR = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "dmg-slurm-ref")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "pr.out")
	cmd := exec.Command(builtBinary, "--local", "--roles", "cn:2,mn:2", "run", "--algo", "pagerank", "--graph", "kron:12", "--out", out)
	cmd.Env = cleanEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, b)
	}
	return os.ReadFile(out)
})

// samePR compares a PageRank --out file of kron:12 with the in-process run's.
func samePR(t *testing.T, what, path string) {
	t.Helper()
	want, err := slurmPR()
	if err != nil {
		t.Fatalf("the in-process reference run: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	samePoolResults(t, what, "pagerank", got, want)
}

var hostRow = regexp.MustCompile(`(?m)^\d+\s+(?:cn|mn)\d+\s+(\S+)\s+\d+\s+\d+$`)

// srun --mpi=pmix places one rank on each host (dmg info shows 4 hosts,
// the test bed's), and a PageRank job verifies and matches an in-process
// run; with validation data, a BFS on a Graphalytics dataset matches its
// reference output.
func TestSlurmSrun(t *testing.T) {
	bed, sl := slurm(t)
	bin, dir := dmgBin(t), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	t.Run("info", func(t *testing.T) {
		out := slurmRun(t, sl.Srun(ctx, "--mpi=pmix", "-N", "4", "-n", "4", bin, "--roles", "cn:2,mn:2", "info"), dir)
		checkRoleMap(t, out, 2, 2, false)
		hosts := map[string]bool{}
		for _, m := range hostRow.FindAllStringSubmatch(out, -1) {
			hosts[m[1]] = true
		}
		for i := 1; i <= 4; i++ {
			if h := bed.Host(i); !hosts[h] {
				t.Errorf("no rank on host %s:\n%s", h, out)
			}
		}
		if len(hosts) != 4 {
			t.Errorf("ranks on %d hosts, want 4 distinct:\n%s", len(hosts), out)
		}
	})
	t.Run("pagerank", func(t *testing.T) {
		res := filepath.Join(dir, "pr.out")
		out := slurmRun(t, sl.Srun(ctx, "--mpi=pmix", "-N", "4", "-n", "4", bin, "--roles", "cn:2,mn:2",
			"run", "--algo", "pagerank", "--graph", "kron:12", "--verify", "--out", res), dir)
		if !strings.Contains(out, verifiedLine) || !strings.Contains(out, "cn:2,mn:2 over fabric/tcp") {
			t.Fatalf("not verified, or not over tcp:\n%s", out)
		}
		samePR(t, "srun", res)
	})
	t.Run("graphalytics", func(t *testing.T) {
		if os.Getenv(csrtest.EnvDataDir) == "" {
			t.Skipf("%s is not set", csrtest.EnvDataDir)
		}
		ds := "example-directed"
		gdir := csrtest.GraphalyticsDir(t, ds)
		c := gaCase{ds, filepath.Join(gdir, ds+".properties"), filepath.Join(gdir, ds+"-BFS"), "bfs", algo.KindBFS}
		res := filepath.Join(dir, "bfs.out")
		out := slurmRun(t, sl.Srun(ctx, "--mpi=pmix", "-N", "4", "-n", "4", bin, "--roles", "cn:2,mn:2",
			"run", "--algo", "bfs", "--graph", c.props, "--verify", "--out", res), dir)
		if !strings.Contains(out, verifiedLine) {
			t.Fatalf("not verified:\n%s", out)
		}
		validate(t, c, res)
	})
}

// A rank that fails before MPI_Init leaves the others in its fences: under
// the test bed's KillOnBadExit=1 Slurm ends the step at once; a user's srun
// that does not (--kill-on-bad-exit=0) still ends within --start-timeout,
// rank 0 saying why in one line.
func TestSlurmRankDiesStarting(t *testing.T) {
	_, sl := slurm(t)
	bin, dir := dmgBin(t), t.TempDir()
	for _, tc := range []struct {
		name, kill string
		limit      time.Duration // how long srun may take
		want       string        // in srun's output
	}{
		{"kill on bad exit", "--kill-on-bad-exit=1", 20 * time.Second, "task 1: Exited with exit code 3"},
		{"start timeout", "--kill-on-bad-exit=0", 30 * time.Second, "dmg: rank 0 on dmg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// Task 1 fails before it starts dmg; task 0 waits in MPI_Init.
			script := `[ "$SLURM_PROCID" = 1 ] && exit 3; exec "$0" --start-timeout 5s --roles cn:1,mn:1 info`
			cmd := sl.Srun(ctx, "--mpi=pmix", tc.kill, "-N", "2", "-n", "2", "sh", "-c", script, bin)
			cmd.Dir = dir
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err == nil {
				t.Fatalf("srun exited 0 with a task that failed:\n%s", out)
			}
			if took > tc.limit {
				t.Errorf("srun took %.1fs, want under %v:\n%s", took.Seconds(), tc.limit, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			if tc.kill == "--kill-on-bad-exit=0" {
				if n := strings.Count(string(out), "MPI did not start within 5s"); n != 1 {
					t.Errorf("the start-up timeout said %d times, want once:\n%s", n, out)
				}
			}
		})
	}
}

// examplesDir is the repository's examples/.
func examplesDir(t *testing.T) string {
	d, err := filepath.Abs(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sbatch --wait of examples/slurm.sbatch, scaled down to 4 nodes and
// kron:12 by its variables, runs to completion with a verified run whose
// results match an in-process run's.
func TestSlurmSbatch(t *testing.T) {
	_, sl := slurm(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	slurmRun(t, sl.Sbatch(ctx, "--wait", "--nodes=4", "--output=job-%j.out", filepath.Join(examplesDir(t), "slurm.sbatch")), dir,
		"DMG="+dmgBin(t), "FABRIC=tcp", "GRAPH=kron:12", "RUN_ARGS=--verify --out pr.out")
	out := readGlob(t, dir, "job-*.out")
	if !strings.Contains(out, verifiedLine) || !strings.Contains(out, "DMG pagerank on kron:12") || !strings.Contains(out, "cn:2,mn:2") {
		t.Fatalf("the job's output shows no verified PageRank on kron:12 at cn:2,mn:2:\n%s", out)
	}
	if js := readGlob(t, dir, "pagerank-*.json"); !strings.Contains(js, `"verified": true`) {
		t.Errorf("the job's --json report does not say verified:\n%s", js)
	}
	samePR(t, "sbatch", filepath.Join(dir, "pr.out"))
}

// sbatch of examples/slurm-pool.sbatch, scaled down (2 memory nodes, a
// load and a PageRank job of 2 compute nodes, a BFS job of 1 that cuts
// the graph anew), serves the pool, runs its compute jobs verified, stops
// the pool and ends.
func TestSlurmPoolSbatch(t *testing.T) {
	_, sl := slurm(t)
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool.json")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	slurmRun(t, sl.Sbatch(ctx, "--wait", "--nodes=2", "--output=pool-%j.out", filepath.Join(examplesDir(t), "slurm-pool.sbatch")), dir,
		"DMG="+dmgBin(t), "FABRIC=tcp", "POOL="+pool, "MN_MEM=64MiB", "GRAPH=kron:12", "NAME=k12",
		"LOAD_NODES=2", "BFS_NODES=1", "RUN_ARGS=--verify", "STOP_WHEN_DONE=1")
	if out := readGlob(t, dir, "pool-*.out"); !strings.Contains(out, "stopped by dmg stop") {
		t.Errorf("the pool job did not end by dmg stop:\n%s", out)
	}
	if _, err := os.Stat(pool); !os.IsNotExist(err) {
		t.Errorf("the pool file is still there (%v)", err)
	}
	jobs := readGlob(t, dir, "slurm-*.out")
	if n := strings.Count(jobs, verifiedLine); n != 2 {
		t.Errorf("%d verified compute jobs, want 2 (PageRank on 2 CNs, BFS on 1):\n%s", n, jobs)
	}
	for _, f := range []string{"pr-*.json", "bfs-*.json"} {
		if js := readGlob(t, dir, f); !strings.Contains(js, `"verified": true`) {
			t.Errorf("%s does not say verified:\n%s", f, js)
		}
	}
}

// salloc -N 4 holds the nodes, and mpirun inside the allocation (Open
// MPI's daemons started through srun) runs a verified PageRank whose
// results match an in-process run's.
func TestSlurmSallocMpirun(t *testing.T) {
	_, sl := slurm(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "pr.out")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := slurmRun(t, sl.Salloc(ctx, "-N", "4", "mpirun", "-np", "4", "--map-by", "node", dmgBin(t), "--roles", "cn:2,mn:2",
		"run", "--algo", "pagerank", "--graph", "kron:12", "--verify", "--out", res), dir)
	if !strings.Contains(out, verifiedLine) || !strings.Contains(out, "Granted job allocation") {
		t.Fatalf("no verified run inside an allocation:\n%s", out)
	}
	samePR(t, "salloc+mpirun", res)
}

// readGlob is the contents of the files in dir matching pattern, one
// after the other; it fails the test when there is none.
func readGlob(t *testing.T, dir, pattern string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(files) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	var b strings.Builder
	for _, f := range files {
		s, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(s)
	}
	return b.String()
}
