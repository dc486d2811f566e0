package suite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/outfile"
)

// exitBadInput is the exit status of a dmg run refusing its input (an
// unknown flag, a bad value): launch.ExitBadInput, which this package
// cannot import.
const exitBadInput = 2

// Run executes the matrix, writing the rows after every run (so an
// interrupted suite keeps what it measured), then reports. A run that fails
// is recorded and the suite goes on; after a failure for bad input (exit
// 2, e.g. an unknown flag or a bad value) the remaining repetitions of that
// cell are recorded as skipped. The error is for the suite itself: bad
// configuration, files, interruption, or no successful run at all.
func (s *Suite) Run(ctx context.Context) ([]Row, error) {
	s.EnsureDefaults()
	vs, ls, err := s.plan()
	if err != nil {
		return nil, err
	}
	bin := s.Binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, errors.Wrap(err, "suite: finding the dmg binary")
		}
	}
	runDir := filepath.Join(s.OutDir, "runs")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "suite: creating %s", runDir)
	}
	prog := orDiscard(s.Progress)
	total := len(s.Graphs) * len(s.Algos) * len(ls) * s.Reps * len(vs)
	var rows []Row
	for _, g := range s.Graphs {
		for _, a := range s.Algos {
			for _, l := range ls {
				broken := map[string]string{} // variant → why its cell is skipped
				for rep := range s.Reps {
					for _, v := range vs {
						row := Row{Graph: g, Algo: a, Layout: layoutName(l), CN: l.CN, MN: l.MN,
							Variant: v.Name, Flags: strings.Join(v.Flags, " "), Rep: rep}
						if why, ok := broken[v.Name]; ok {
							row.Status, row.Error = Skipped, why
						} else if code := s.runOne(ctx, bin, runDir, &row, v); code == exitBadInput {
							broken[v.Name] = "after bad input in rep " + strconv.Itoa(rep) + ": " + row.Error
						}
						rows = append(rows, row)
						fmt.Fprintf(prog, "[%d/%d] %s\n", len(rows), total, row.progress())
						if err := writeRows(s.OutDir, rows); err != nil {
							return rows, err
						}
						if ctx.Err() != nil {
							return rows, errors.Wrap(ctx.Err(), "suite: bench suite interrupted")
						}
					}
				}
			}
		}
	}
	if err := s.Report(rows); err != nil {
		return rows, err
	}
	if !slices.ContainsFunc(rows, func(r Row) bool { return r.Status == OK }) {
		return rows, errors.Errorf("suite: bench suite: none of the %d runs succeeded; see %s", len(rows), runDir)
	}
	return rows, nil
}

func (r *Row) progress() string {
	head := fmt.Sprintf("%s %s %s %s rep %d: ", r.Graph, r.Algo, r.Layout, r.Variant, r.Rep)
	if r.Status != OK {
		return head + r.Status + ": " + r.Error
	}
	return head + fmt.Sprintf("ok: compute %ss, %s edges/s, %s remote ops/edge (%.1fs)",
		fmtMetric(r.Metrics, MetricCompute), fmtMetric(r.Metrics, MetricEdgesPerS), fmtMetric(r.Metrics, MetricOpsPerEdge), r.WallS)
}

// fileBase is a run's file name stem.
func (r *Row) fileBase() string {
	g := filepath.Base(r.Graph)
	g = strings.Map(func(c rune) rune {
		if c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return c
		}
		return '-'
	}, g)
	return fmt.Sprintf("%s_%s_cn%d-mn%d_%s_rep%d", g, r.Algo, r.CN, r.MN, r.Variant, r.Rep)
}

// runOne runs one job as a child process and fills row; it returns the
// child's exit code (-1 when it did not exit by itself).
func (s *Suite) runOne(ctx context.Context, bin, dir string, row *Row, v Variant) int {
	base := filepath.Join(dir, row.fileBase())
	jsonPath, logPath := base+".json", base+".log"
	_ = os.Remove(jsonPath) // never read a stale report
	args := []string{"--roles", row.Layout, "--json", jsonPath}
	if s.Local {
		args = append([]string{"--local"}, args...)
	}
	args = append(args, "run", "--algo", row.Algo, "--graph", row.Graph)
	if a, err := algo.Lookup(row.Algo); err == nil && a.Iterative && s.Iterations > 0 {
		args = append(args, "--iterations", strconv.Itoa(s.Iterations))
	}
	args = append(args, v.Flags...)
	name, argv := bin, args
	if !s.Local {
		m := strings.Fields(s.Mpirun)
		name = m[0]
		argv = append(append(m[1:], "-np", strconv.Itoa(row.CN+row.MN), bin), args...)
	}
	fail := func(code int, format string, a ...any) int {
		row.Status, row.Error = Failed, fmt.Sprintf(format, a...)
		return code
	}
	lf, err := outfile.Create(logPath)
	if err != nil {
		return fail(-1, "creating %s: %v", logPath, err)
	}
	defer func() {
		if err := lf.Commit(); err != nil && row.Status != Failed {
			row.Status, row.Error = Failed, err.Error()
		}
	}()
	logf := lf.W
	fmt.Fprintf(logf, "$ %s %s\n", name, strings.Join(argv, " "))
	rctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, name, argv...)
	cmd.Env = childEnv(os.Environ(), !s.Local, os.Geteuid() == 0)
	// Its own process group, so a timeout stops mpirun and its ranks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stdout = logf
	cmd.Stderr = io.MultiWriter(logf, &stderr)
	start := time.Now()
	err = cmd.Run()
	row.WallS = time.Since(start).Seconds()
	if cmd.Process != nil && rctx.Err() != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers of the group
	}
	switch {
	case rctx.Err() != nil && ctx.Err() == nil:
		return fail(-1, "timed out after %v (log %s)", s.Timeout, logPath)
	case ctx.Err() != nil:
		return fail(-1, "interrupted")
	case err != nil:
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return fail(code, "exit %d: %s", code, lastLine(stderr.String(), "no error output; see "+logPath))
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return fail(0, "exit 0 but no report: %v", err)
	}
	if row.Metrics, row.Labels, err = flattenReport(b); err != nil {
		return fail(0, "%v", err)
	}
	row.Status = OK
	return 0
}

// lastLine is the last non-empty line of s, or def.
func lastLine(s, def string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return def
}

// childEnv is a child's environment: without the variables that would make
// it look launched already, and, under mpirun, with what Open MPI needs here
// (as in the Makefile): oversubscription, quiet, and root when root. Values
// the user set are kept.
func childEnv(env []string, mpi, root bool) []string {
	var out []string
	have := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OMPI_COMM_WORLD") || strings.HasPrefix(k, "PMI") || strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "PMIX") {
			continue
		}
		have[k] = true
		out = append(out, kv)
	}
	if !mpi {
		return out
	}
	add := []string{"OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_orte_execute_quiet=1"}
	if root {
		add = append(add, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	for _, kv := range add {
		if k, _, _ := strings.Cut(kv, "="); !have[k] {
			out = append(out, kv)
		}
	}
	return out
}
