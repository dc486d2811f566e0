package launch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// sbatch of examples/slurm-resume.sbatch against a pool served by another
// Slurm job (2 hosts, tcp): `scontrol requeue` ends the first attempt in
// the middle of a PageRank, Slurm runs the script again, and the rerun
// resumes from the first attempt's last checkpoint, to the results of an
// uninterrupted in-process run.
func TestSlurmRequeueResumes(t *testing.T) {
	_, sl := slurm(t)
	bin, dir := dmgBin(t), t.TempDir()
	pool := filepath.Join(dir, "pool.json")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	slurmRun(t, sl.Sbatch(ctx, "--nodes=2", "--output=serve-%j.out", "--wrap",
		fmt.Sprintf("srun --mpi=pmix --kill-on-bad-exit=1 %s --roles mn:2 serve --pool-file %s --mn-mem 64MiB --fabric tcp", bin, pool)), dir)
	defer func() {
		stop := exec.Command(bin, "stop", "--pool-file", pool)
		stop.Env = cleanEnv()
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("dmg stop: %v\n%s", err, out)
		}
	}()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(pool); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pool file 60 s after the serve job's submission:\n%s", readGlob(t, dir, "serve-*.out"))
		}
	}
	slurmRun(t, sl.Srun(ctx, "--mpi=pmix", "-N", "2", "-n", "2", bin, "--roles", "cn:2", "load", "--pool-file", pool, "--name", "k12", "--graph", "kron:12"), dir)

	const iterations = "1500"
	res := filepath.Join(dir, "pr.out")
	out := slurmRun(t, sl.Sbatch(ctx, "--nodes=2", "--output=resume-%j.out", "--parsable", filepath.Join(examplesDir(t), "slurm-resume.sbatch")), dir,
		"DMG="+bin, "POOL="+pool, "NAME=k12", "RUN_ARGS=-v --iterations "+iterations+" --checkpoint-every 50 --out "+res)
	id := strings.TrimSpace(strings.Split(strings.TrimSpace(out), ";")[0])
	log := filepath.Join(dir, "resume-"+id+".out")
	kept := 0
	for deadline := time.Now().Add(90 * time.Second); kept < 200; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(log)
		if m := keptRE.FindAllStringSubmatch(string(b), -1); len(m) > 0 {
			kept, _ = strconv.Atoi(m[len(m)-1][1])
		}
		q, _ := sl.Command(ctx, "squeue", "-h", "-j", id).CombinedOutput()
		if strings.Contains(string(b), "DMG pagerank") || strings.TrimSpace(string(q)) == "" || time.Now().After(deadline) {
			t.Fatalf("the first attempt ended, or kept no checkpoint of 200 iterations in 90 s (last %d):\n%s", kept, b)
		}
	}
	slurmRun(t, sl.Command(ctx, "scontrol", "requeue", id), dir)
	t.Logf("requeued job %s after a checkpoint of %d iterations", id, kept)
	// Slurm holds a requeued job back (its BeginTime, about two minutes
	// on); the operator lets it start now.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st, _ := sl.Command(ctx, "squeue", "-h", "-j", id, "-o", "%T %r").CombinedOutput()
		if strings.HasPrefix(string(st), "PENDING BeginTime") {
			if out, err := sl.Command(ctx, "scontrol", "update", "JobId="+id, "StartTime=now").CombinedOutput(); err != nil {
				t.Fatalf("scontrol update JobId=%s StartTime=now: %v\n%s", id, err, out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not pending on its begin time 60 s after its requeue: %s", id, st)
		}
	}
	// The job is done once squeue no longer lists it.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		q, err := sl.Command(ctx, "squeue", "-h", "-j", id).CombinedOutput()
		if err == nil && strings.TrimSpace(string(q)) == "" {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("job %s still queued 2 min after its requeue (squeue: %s):\n%s", id, q, b)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`resumed at iteration (\d+);`).FindStringSubmatch(string(b))
	if !strings.Contains(string(b), "attempt 2 of job "+id+": resuming") || m == nil {
		t.Fatalf("the rerun did not resume:\n%s", b)
	}
	if at, _ := strconv.Atoi(m[1]); at < kept {
		t.Fatalf("resumed at iteration %d; the first attempt had kept %d:\n%s", at, kept, b)
	}
	ref := filepath.Join(dir, "ref.out")
	cmd := exec.Command(bin, "--local", "--roles", "cn:2,mn:2", "run", "--algo", "pagerank", "--graph", "kron:12", "--iterations", iterations, "--out", ref)
	cmd.Env = cleanEnv()
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the in-process reference: %v\n%s", err, o)
	}
	got, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	samePoolResults(t, "the requeued job's resumed PageRank", "pagerank", got, want)
}
