package launch

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/pkg/errors"
	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Defaults of `dmg bench suite`. DefaultSuiteVariants is a comma-separated
// list of NAME=EXTRA-FLAGS (flags split at spaces); a variant whose flags
// a run refuses (an unknown flag, a bad value) is recorded as failed, not
// fatal.
const (
	DefaultSuiteGraphs   = "kron:14"
	DefaultSuiteAlgos    = "pagerank,bfs"
	DefaultSuiteLayouts  = "cn:2,mn:2"
	DefaultSuiteVariants = "naive=--mode naive,famgraph=--mode famgraph,dmg-nomerge=--no-collab --no-merge,dmg-direct=--no-collab,dmg=,no-stage2=--no-steal --no-hubsplit"
	DefaultSuiteBaseline = "naive"
	DefaultSuiteOutDir   = "bench-results"
)

// Row status values.
const (
	SuiteOK      = "ok"
	SuiteFailed  = "failed"
	SuiteSkipped = "skipped"
)

// Metric keys of the summary: flattened report fields (see SuiteRow).
const (
	MetricCompute     = "times.compute_s"
	MetricEdgesPerS   = "edges_per_s"
	MetricOpsPerEdge  = "remote_ops_per_edge"
	MetricAtomicsPerE = "atomics_per_edge" // derived: verbs.atomics / Σ active edges
	MetricCNCache     = "cn_cache_bytes_max"
	MetricFabric      = "modeled_fabric_s"
	MetricTail        = "balance.tail_ratio"
)

// Ratio keys of SuiteSummary.Ratio, against the baseline variant.
const (
	RatioSpeedup       = "speedup"        // baseline compute s / compute s
	RatioFabricSpeedup = "fabric_speedup" // baseline modelled s / modelled s
	RatioOps           = "remote_ops"     // remote ops per edge / baseline's
)

// Suite is a benchmark matrix of `dmg run` jobs: every graph × algorithm ×
// layout × repetition × variant, each a child process writing a --json
// report. Run executes it and Report summarises rows into results.csv,
// results.json, summary.txt/json and PNG plots under OutDir.
type Suite struct {
	Graphs []string // graph specs for --graph
	Algos  []string
	// Variants are NAME=EXTRA-FLAGS; the flags are split at spaces and
	// appended to `dmg run`.
	Variants []string
	// Layouts are role layouts cn:C,mn:M; one string may hold several
	// ("cn:1,mn:1,cn:2,mn:2" or separated by ';' or spaces).
	Layouts []string
	Reps    int
	// Iterations, if positive, is --iterations of every PageRank run.
	Iterations int
	OutDir     string
	Baseline   string // variant the ratios compare against
	Local      bool   // run jobs with --local instead of under Mpirun
	Mpirun     string // launcher command, split at spaces
	Timeout    time.Duration
	Binary     string    // the dmg binary; "" means this executable
	Out        io.Writer // the summary table (nil: discard)
	Progress   io.Writer // one line per finished run, and notes (nil: discard)
}

// SuiteVariant is one parsed NAME=EXTRA-FLAGS.
type SuiteVariant struct {
	Name  string
	Flags []string
}

// SuiteRow is one run of the matrix. Metrics are the report's numeric
// fields flattened to dotted keys ("times.compute_s", "verbs.atomics",
// "balance.tail_ratio"); arrays of numbers are summed, arrays of objects
// summed field by field ("iterations.active_edges") with a ".count". A
// field the report lacks is absent, never zero. Labels hold its strings.
type SuiteRow struct {
	Graph   string             `json:"graph"`
	Algo    string             `json:"algo"`
	Layout  string             `json:"layout"`
	CN      int                `json:"cn"`
	MN      int                `json:"mn"`
	Variant string             `json:"variant"`
	Flags   string             `json:"flags"`
	Rep     int                `json:"rep"`
	Status  string             `json:"status"`
	Error   string             `json:"error,omitempty"`
	WallS   float64            `json:"wall_s"`
	Labels  map[string]string  `json:"labels,omitempty"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// SuiteSummary is one cell (graph × algorithm × layout × variant): the
// median of each metric over its successful runs, and ratios against the
// cell's baseline variant.
type SuiteSummary struct {
	Graph    string             `json:"graph"`
	Algo     string             `json:"algo"`
	Layout   string             `json:"layout"`
	CN       int                `json:"cn"`
	MN       int                `json:"mn"`
	Variant  string             `json:"variant"`
	Runs     int                `json:"runs"`
	OK       int                `json:"ok"`
	Error    string             `json:"error,omitempty"` // the first failure
	Median   map[string]float64 `json:"median"`
	Baseline string             `json:"baseline,omitempty"`
	Ratio    map[string]float64 `json:"ratio,omitempty"`
}

// EnsureDefaults fills empty fields with the defaults of `dmg bench suite`.
func (s *Suite) EnsureDefaults() {
	if len(s.Graphs) == 0 {
		s.Graphs = strings.Split(DefaultSuiteGraphs, ",")
	}
	if len(s.Algos) == 0 {
		s.Algos = strings.Split(DefaultSuiteAlgos, ",")
	}
	if len(s.Variants) == 0 {
		s.Variants = defaultVariantList()
	}
	if len(s.Layouts) == 0 {
		s.Layouts = []string{DefaultSuiteLayouts}
	}
	if s.Reps == 0 {
		s.Reps = 3
	}
	if s.OutDir == "" {
		s.OutDir = DefaultSuiteOutDir
	}
	if s.Baseline == "" {
		s.Baseline = DefaultSuiteBaseline
	}
	if s.Mpirun == "" {
		s.Mpirun = "mpirun"
	}
	if s.Timeout == 0 {
		s.Timeout = 10 * time.Minute
	}
}

// defaultVariantList splits DefaultSuiteVariants as the flag would (CSV).
func defaultVariantList() []string {
	rec, err := csv.NewReader(strings.NewReader(DefaultSuiteVariants)).Read()
	if err != nil {
		panic("launch: DefaultSuiteVariants is not a CSV line: " + err.Error())
	}
	return rec
}

// Validate checks the matrix without running anything.
func (s *Suite) Validate() error {
	_, _, err := s.plan()
	return err
}

var variantName = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)

// plan parses the variants and layouts.
func (s *Suite) plan() ([]SuiteVariant, []spmd.Roles, error) {
	if s.Reps < 1 || s.Timeout <= 0 {
		return nil, nil, errors.Errorf("launch: bench suite needs --reps ≥ 1 and --timeout > 0, got %d and %v", s.Reps, s.Timeout)
	}
	for _, l := range [][]string{s.Graphs, s.Algos} {
		if len(l) == 0 || slices.Contains(l, "") {
			return nil, nil, errors.Errorf("launch: bench suite: empty entry in --graphs %q or --algos %q", s.Graphs, s.Algos)
		}
	}
	if !s.Local && len(strings.Fields(s.Mpirun)) == 0 {
		return nil, nil, errors.New("launch: bench suite: --mpirun is empty; give a launcher or use --local")
	}
	var vs []SuiteVariant
	for _, item := range s.Variants {
		name, flags, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || !variantName.MatchString(name) {
			return nil, nil, errors.Errorf("launch: --variants entry %q is not NAME=EXTRA-FLAGS with a name of letters, digits, . _ + -", item)
		}
		if slices.ContainsFunc(vs, func(v SuiteVariant) bool { return v.Name == name }) {
			return nil, nil, errors.Errorf("launch: --variants names %q twice", name)
		}
		vs = append(vs, SuiteVariant{Name: name, Flags: strings.Fields(flags)})
	}
	if len(vs) == 0 {
		return nil, nil, errors.New("launch: --variants is empty")
	}
	ls, err := parseLayouts(s.Layouts)
	if err != nil {
		return nil, nil, err
	}
	return vs, ls, nil
}

// parseLayouts reads cn:C,mn:M layouts from a list whose items may hold
// several, separated by commas, semicolons or spaces.
func parseLayouts(items []string) ([]spmd.Roles, error) {
	toks := strings.FieldsFunc(strings.Join(items, ";"), func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n'
	})
	var (
		out []spmd.Roles
		cur []string
	)
	for _, t := range toks {
		cur = append(cur, t)
		if len(cur) < 2 {
			continue
		}
		r, err := spmd.ParseRoles(strings.Join(cur, ","))
		if err != nil {
			return nil, errors.Wrap(err, "launch: --layouts")
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
		cur = cur[:0]
	}
	if len(cur) != 0 || len(out) == 0 {
		return nil, errors.Errorf("launch: --layouts %q: expected layouts cn:C,mn:M, e.g. cn:1,mn:1,cn:2,mn:2", items)
	}
	return out, nil
}

func layoutName(r spmd.Roles) string { return fmt.Sprintf("cn:%d,mn:%d", r.CN, r.MN) }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// Run executes the matrix, writing the rows after every run (so an
// interrupted suite keeps what it measured), then reports. A run that fails
// is recorded and the suite goes on; after a failure for bad input (exit
// 2, e.g. an unknown flag or a bad value) the remaining repetitions of that
// cell are recorded as skipped. The error is for the suite itself: bad
// configuration, files, interruption, or no successful run at all.
func (s *Suite) Run(ctx context.Context) ([]SuiteRow, error) {
	s.EnsureDefaults()
	vs, ls, err := s.plan()
	if err != nil {
		return nil, err
	}
	bin := s.Binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, errors.Wrap(err, "launch: finding the dmg binary")
		}
	}
	runDir := filepath.Join(s.OutDir, "runs")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "launch: creating %s", runDir)
	}
	prog := orDiscard(s.Progress)
	total := len(s.Graphs) * len(s.Algos) * len(ls) * s.Reps * len(vs)
	var rows []SuiteRow
	for _, g := range s.Graphs {
		for _, a := range s.Algos {
			for _, l := range ls {
				broken := map[string]string{} // variant → why its cell is skipped
				for rep := range s.Reps {
					for _, v := range vs {
						row := SuiteRow{Graph: g, Algo: a, Layout: layoutName(l), CN: l.CN, MN: l.MN,
							Variant: v.Name, Flags: strings.Join(v.Flags, " "), Rep: rep}
						if why, ok := broken[v.Name]; ok {
							row.Status, row.Error = SuiteSkipped, why
						} else if code := s.runOne(ctx, bin, runDir, &row, v); code == ExitBadInput {
							broken[v.Name] = "after bad input in rep " + strconv.Itoa(rep) + ": " + row.Error
						}
						rows = append(rows, row)
						fmt.Fprintf(prog, "[%d/%d] %s\n", len(rows), total, row.progress())
						if err := writeRows(s.OutDir, rows); err != nil {
							return rows, err
						}
						if ctx.Err() != nil {
							return rows, errors.Wrap(ctx.Err(), "launch: bench suite interrupted")
						}
					}
				}
			}
		}
	}
	if err := s.Report(rows); err != nil {
		return rows, err
	}
	if !slices.ContainsFunc(rows, func(r SuiteRow) bool { return r.Status == SuiteOK }) {
		return rows, errors.Errorf("launch: bench suite: none of the %d runs succeeded; see %s", len(rows), runDir)
	}
	return rows, nil
}

func (r *SuiteRow) progress() string {
	head := fmt.Sprintf("%s %s %s %s rep %d: ", r.Graph, r.Algo, r.Layout, r.Variant, r.Rep)
	if r.Status != SuiteOK {
		return head + r.Status + ": " + r.Error
	}
	return head + fmt.Sprintf("ok: compute %ss, %s edges/s, %s remote ops/edge (%.1fs)",
		fmtMetric(r.Metrics, MetricCompute), fmtMetric(r.Metrics, MetricEdgesPerS), fmtMetric(r.Metrics, MetricOpsPerEdge), r.WallS)
}

// fileBase is a run's file name stem.
func (r *SuiteRow) fileBase() string {
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
func (s *Suite) runOne(ctx context.Context, bin, dir string, row *SuiteRow, v SuiteVariant) int {
	base := filepath.Join(dir, row.fileBase())
	jsonPath, logPath := base+".json", base+".log"
	_ = os.Remove(jsonPath) // never read a stale report
	args := []string{"--roles", row.Layout, "--json", jsonPath}
	if s.Local {
		args = append([]string{"--local"}, args...)
	}
	args = append(args, "run", "--algo", row.Algo, "--graph", row.Graph)
	if s.Iterations > 0 && row.Algo == "pagerank" {
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
		row.Status, row.Error = SuiteFailed, fmt.Sprintf(format, a...)
		return code
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return fail(-1, "creating %s: %v", logPath, err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "$ %s %s\n", name, strings.Join(argv, " "))
	rctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, name, argv...)
	cmd.Env = suiteEnv(os.Environ(), !s.Local, os.Geteuid() == 0)
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
	row.Status = SuiteOK
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

// suiteEnv is a child's environment: without the variables that would make
// it look launched already, and, under mpirun, with what Open MPI needs here
// (as in the Makefile): oversubscription, quiet, and root when root. Values
// the user set are kept.
func suiteEnv(env []string, mpi, root bool) []string {
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

// flattenReport turns a run's --json report into metrics and labels, and
// derives atomics_per_edge.
func flattenReport(b []byte) (map[string]float64, map[string]string, error) {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, nil, errors.Wrap(err, "launch: decoding a run's --json report")
	}
	m, l := map[string]float64{}, map[string]string{}
	flatten("", v, m, l)
	if a, ok := m["verbs.atomics"]; ok {
		if e := m["iterations.active_edges"]; e > 0 {
			m[MetricAtomicsPerE] = a / e
		}
	}
	return m, l, nil
}

func flatten(key string, v any, m map[string]float64, l map[string]string) {
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch x := v.(type) {
	case float64:
		m[key] = x
	case string:
		l[key] = x
	case bool:
		l[key] = strconv.FormatBool(x)
	case map[string]any:
		for k, e := range x {
			flatten(join(k), e, m, l)
		}
	case []any:
		// Numbers are summed; objects summed leaf by leaf, with a count.
		sub := map[string]float64{}
		objects := 0
		for _, e := range x {
			switch y := e.(type) {
			case float64:
				m[key] += y
			case map[string]any:
				objects++
				one := map[string]float64{}
				flatten("", y, one, map[string]string{})
				for k, n := range one {
					sub[k] += n
				}
			}
		}
		for k, n := range sub {
			m[join(k)] = n
		}
		if objects > 0 || len(x) == 0 {
			m[join("count")] = float64(objects)
		}
	}
}

// writeRows writes results.csv and results.json into dir atomically.
func writeRows(dir string, rows []SuiteRow) error {
	labels, metrics := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		for k := range r.Labels {
			labels[k] = true
		}
		for k := range r.Metrics {
			metrics[k] = true
		}
	}
	lk, mk := sortedKeys(labels), sortedKeys(metrics)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"graph", "algo", "layout", "cn", "mn", "variant", "flags", "rep", "status", "error", "wall_s"}
	_ = w.Write(append(append(head, lk...), mk...))
	for _, r := range rows {
		rec := []string{r.Graph, r.Algo, r.Layout, strconv.Itoa(r.CN), strconv.Itoa(r.MN), r.Variant, r.Flags,
			strconv.Itoa(r.Rep), r.Status, r.Error, strconv.FormatFloat(r.WallS, 'g', 6, 64)}
		for _, k := range lk {
			rec = append(rec, r.Labels[k])
		}
		for _, k := range mk {
			s := ""
			if x, ok := r.Metrics[k]; ok {
				s = strconv.FormatFloat(x, 'g', -1, 64)
			}
			rec = append(rec, s)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return errors.Wrap(err, "launch: encoding results.csv")
	}
	if err := WriteFileAtomic(filepath.Join(dir, "results.csv"), buf.Bytes()); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, "results.json"), rows)
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errors.Wrapf(err, "launch: encoding %s", path)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// SummarizeSuite groups rows into cells (graph × algorithm × layout ×
// variant, in the order the rows first name them) with the medians of every
// metric over the successful runs that report it, and ratios against the
// cell's baseline: the variant baseline if it has successful runs there,
// else the first variant that does.
func SummarizeSuite(rows []SuiteRow, baseline string) []SuiteSummary {
	type key struct{ g, a, l, v string }
	idx := map[key]int{}
	var sums []SuiteSummary
	vals := map[key]map[string][]float64{}
	for _, r := range rows {
		k := key{r.Graph, r.Algo, r.Layout, r.Variant}
		i, ok := idx[k]
		if !ok {
			i = len(sums)
			idx[k] = i
			sums = append(sums, SuiteSummary{Graph: r.Graph, Algo: r.Algo, Layout: r.Layout, CN: r.CN, MN: r.MN, Variant: r.Variant, Median: map[string]float64{}})
			vals[k] = map[string][]float64{}
		}
		s := &sums[i]
		s.Runs++
		if r.Status != SuiteOK {
			if s.Error == "" && r.Status == SuiteFailed {
				s.Error = r.Error
			}
			continue
		}
		s.OK++
		for m, x := range r.Metrics {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				vals[k][m] = append(vals[k][m], x)
			}
		}
	}
	for i := range sums {
		s := &sums[i]
		for m, xs := range vals[key{s.Graph, s.Algo, s.Layout, s.Variant}] {
			s.Median[m] = median(xs)
		}
	}
	// Baseline per cell.
	for i := range sums {
		s := &sums[i]
		var base *SuiteSummary
		for j := range sums {
			b := &sums[j]
			if b.Graph != s.Graph || b.Algo != s.Algo || b.Layout != s.Layout || b.OK == 0 {
				continue
			}
			if b.Variant == baseline {
				base = b
				break
			}
			if base == nil {
				base = b
			}
		}
		if base == nil || s.OK == 0 {
			continue
		}
		s.Baseline, s.Ratio = base.Variant, map[string]float64{}
		ratio := func(name, m string, inverse bool) {
			x, ok1 := s.Median[m]
			y, ok2 := base.Median[m]
			if !ok1 || !ok2 {
				return
			}
			if inverse {
				x, y = y, x
			}
			if y > 0 {
				s.Ratio[name] = x / y
			}
		}
		ratio(RatioSpeedup, MetricCompute, true)
		ratio(RatioFabricSpeedup, MetricFabric, true)
		ratio(RatioOps, MetricOpsPerEdge, false)
	}
	return sums
}

func fmtMetric(m map[string]float64, k string) string {
	x, ok := m[k]
	if !ok {
		return "-"
	}
	switch k {
	case MetricCNCache:
		return hb(uint64(x))
	case MetricEdgesPerS:
		return hn(uint64(x))
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// WriteSuiteTable prints the summary table and the failures under it.
func WriteSuiteTable(w io.Writer, sums []SuiteSummary) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "graph\talgo\tlayout\tvariant\tok\tcompute s\tedges/s\tops/edge\tatomics/edge\tCN cache\tfabric s\ttail\tspeedup\tfabric speedup\tops vs base\tbase\t")
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t", s.Graph, s.Algo, s.Layout, s.Variant, s.OK, s.Runs)
		for _, k := range []string{MetricCompute, MetricEdgesPerS, MetricOpsPerEdge, MetricAtomicsPerE, MetricCNCache, MetricFabric, MetricTail} {
			fmt.Fprintf(tw, "%s\t", fmtMetric(s.Median, k))
		}
		for _, k := range []string{RatioSpeedup, RatioFabricSpeedup, RatioOps} {
			fmt.Fprintf(tw, "%s\t", fmtMetric(s.Ratio, k))
		}
		fmt.Fprintf(tw, "%s\t\n", s.Baseline)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range sums {
		if s.Error != "" {
			fmt.Fprintf(w, "failed: %s on %s %s %s (%d/%d ok): %s\n", s.Variant, s.Graph, s.Algo, s.Layout, s.OK, s.Runs, s.Error)
		}
	}
	return nil
}

// Report writes rows to results.csv and results.json, the summary to
// Out and to summary.txt and summary.json, and the plots into OutDir.
// Plots without data are skipped with a note on Progress.
func (s *Suite) Report(rows []SuiteRow) error {
	s.EnsureDefaults()
	if err := os.MkdirAll(s.OutDir, 0o755); err != nil {
		return errors.Wrapf(err, "launch: creating %s", s.OutDir)
	}
	if err := writeRows(s.OutDir, rows); err != nil {
		return err
	}
	sums := SummarizeSuite(rows, s.Baseline)
	var tbl bytes.Buffer
	if err := WriteSuiteTable(&tbl, sums); err != nil {
		return err
	}
	if _, err := orDiscard(s.Out).Write(tbl.Bytes()); err != nil {
		return errors.Wrap(err, "launch: writing the summary")
	}
	if err := WriteFileAtomic(filepath.Join(s.OutDir, "summary.txt"), tbl.Bytes()); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(s.OutDir, "summary.json"), sums); err != nil {
		return err
	}
	files, notes := drawSuitePlots(s.OutDir, sums)
	prog := orDiscard(s.Progress)
	for _, n := range notes {
		fmt.Fprintln(prog, "plot: "+n)
	}
	if len(files) > 0 {
		fmt.Fprintf(orDiscard(s.Out), "plots in %s: %s\n", s.OutDir, strings.Join(files, ", "))
	}
	return nil
}

// Plot file names.
const (
	PlotSpeedup       = "speedup.png"
	PlotFabricSpeedup = "speedup_fabric.png"
	PlotOpsPerEdge    = "remote_ops_per_edge.png"
	PlotCNCache       = "cn_cache_vs_cn.png"
	PlotFabricVsCN    = "fabric_vs_cn.png"
	PlotFabricVsMN    = "fabric_vs_mn.png"
	PlotTail          = "tail_ratio.png"
)

// drawSuitePlots draws every plot it has data for and returns the files
// written and notes about the others. It never panics.
func drawSuitePlots(dir string, sums []SuiteSummary) (files, notes []string) {
	get := func(m string) func(SuiteSummary) (float64, bool) {
		return func(s SuiteSummary) (float64, bool) { x, ok := s.Median[m]; return x, ok }
	}
	ratio := func(m string) func(SuiteSummary) (float64, bool) {
		return func(s SuiteSummary) (float64, bool) { x, ok := s.Ratio[m]; return x, ok }
	}
	cnOf := func(s SuiteSummary) int { return s.CN }
	mnOf := func(s SuiteSummary) int { return s.MN }
	// series names lines by variant, graph and algorithm, and by the other
	// node count too when that varies independently of x.
	series := func(other string, x, of func(SuiteSummary) int) func(SuiteSummary) string {
		seen := map[int]int{}
		many := false
		for _, s := range sums {
			if o, ok := seen[x(s)]; ok && o != of(s) {
				many = true
			}
			seen[x(s)] = of(s)
		}
		return func(s SuiteSummary) string {
			name := s.Variant + " " + s.Graph + " " + s.Algo
			if many {
				name += fmt.Sprintf(" %s=%d", other, of(s))
			}
			return name
		}
	}
	cacheUnit, cacheDiv := cacheScale(sums)
	cache := func(s SuiteSummary) (float64, bool) { x, ok := s.Median[MetricCNCache]; return x / cacheDiv, ok }
	jobs := []struct {
		file string
		draw func(path string) (bool, error)
	}{
		{PlotSpeedup, func(p string) (bool, error) {
			return barPlot(p, "Speedup over the baseline (compute time)", "speedup ×", sums, ratio(RatioSpeedup), true)
		}},
		{PlotFabricSpeedup, func(p string) (bool, error) {
			return barPlot(p, "Speedup over the baseline (modelled fabric time)", "speedup ×", sums, ratio(RatioFabricSpeedup), true)
		}},
		{PlotOpsPerEdge, func(p string) (bool, error) {
			return barPlot(p, "Remote operations per edge", "remote ops / edge", sums, get(MetricOpsPerEdge), false)
		}},
		{PlotCNCache, func(p string) (bool, error) {
			return linePlot(p, "CN cache per CN", "#CN", "CN cache per CN ("+cacheUnit+")", sums, cnOf, series("mn", cnOf, mnOf), cache)
		}},
		{PlotFabricVsCN, func(p string) (bool, error) {
			return linePlot(p, "Modelled fabric time against #CN", "#CN", "modelled fabric s", sums, cnOf, series("mn", cnOf, mnOf), get(MetricFabric))
		}},
		{PlotFabricVsMN, func(p string) (bool, error) {
			return linePlot(p, "Modelled fabric time against #MN", "#MN", "modelled fabric s", sums, mnOf, series("cn", mnOf, cnOf), get(MetricFabric))
		}},
		{PlotTail, func(p string) (bool, error) {
			return barPlot(p, "Tail ratio (max/median worker busy time)", "tail ratio", sums, get(MetricTail), true)
		}},
	}
	for _, j := range jobs {
		ok, err := safeDraw(filepath.Join(dir, j.file), j.draw)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s not drawn: %v", j.file, err))
		case !ok:
			notes = append(notes, j.file+" skipped: no run reported its data")
		default:
			files = append(files, j.file)
		}
	}
	return files, notes
}

// safeDraw turns a plotting panic into an error.
func safeDraw(path string, draw func(string) (bool, error)) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, errors.Errorf("launch: plotting %s: %v", path, r)
		}
	}()
	return draw(path)
}

// cacheScale picks a unit for CN cache bytes.
func cacheScale(sums []SuiteSummary) (string, float64) {
	mx := 0.0
	for _, s := range sums {
		mx = max(mx, s.Median[MetricCNCache])
	}
	switch {
	case mx >= 1<<30:
		return "GiB", 1 << 30
	case mx >= 1<<20:
		return "MiB", 1 << 20
	default:
		return "KiB", 1 << 10
	}
}

func usable(x float64, ok bool) bool { return ok && !math.IsNaN(x) && !math.IsInf(x, 0) }

// barPlot draws one bar group per variant and one bar per cell (graph ×
// algorithm × layout) within it; false when no cell has a value.
func barPlot(path, title, ylabel string, sums []SuiteSummary, value func(SuiteSummary) (float64, bool), unitLine bool) (bool, error) {
	var variants, cells []string
	val := map[[2]string]float64{}
	for _, s := range sums {
		if !slices.Contains(variants, s.Variant) {
			variants = append(variants, s.Variant)
		}
		cell := s.Graph + " " + s.Algo + " " + s.Layout
		if !slices.Contains(cells, cell) {
			cells = append(cells, cell)
		}
		if x, ok := value(s); usable(x, ok) {
			val[[2]string{cell, s.Variant}] = x
		}
	}
	if len(val) == 0 {
		return false, nil
	}
	top := 0.0
	if unitLine {
		top = 1
	}
	for _, x := range val {
		top = max(top, x)
	}
	p := plot.New()
	p.Y.Max = legendRoom(top, len(cells))
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.NominalX(variants...)
	p.Legend.Top = true
	width := vg.Points(math.Max(4, math.Min(24, 360/float64(len(variants)*len(cells)))))
	for i, cell := range cells {
		vs := make(plotter.Values, len(variants))
		for j, v := range variants {
			vs[j] = val[[2]string{cell, v}] // 0 where the cell has no value
		}
		b, err := plotter.NewBarChart(vs, width)
		if err != nil {
			return false, errors.Wrapf(err, "launch: plotting %s", path)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(len(cells)-1)/2) * width
		p.Add(b)
		p.Legend.Add(cell, b)
	}
	if unitLine {
		one := plotter.NewFunction(func(float64) float64 { return 1 })
		one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(one)
	}
	return true, savePlot(p, path, len(variants))
}

// linePlot draws one line per series with the median value at each x;
// false when no summary has a value.
func linePlot(path, title, xlabel, ylabel string, sums []SuiteSummary, x func(SuiteSummary) int, series func(SuiteSummary) string, value func(SuiteSummary) (float64, bool)) (bool, error) {
	var names []string
	pts := map[string]map[int][]float64{}
	for _, s := range sums {
		y, ok := value(s)
		if !usable(y, ok) {
			continue
		}
		n := series(s)
		if pts[n] == nil {
			names = append(names, n)
			pts[n] = map[int][]float64{}
		}
		pts[n][x(s)] = append(pts[n][x(s)], y)
	}
	if len(names) == 0 {
		return false, nil
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.X.Tick.Marker = intTicks{}
	top, xlo, xhi := 0.0, math.Inf(1), math.Inf(-1)
	for _, n := range names {
		for xv, ys := range pts[n] {
			top = max(top, median(ys))
			xlo, xhi = min(xlo, float64(xv)), max(xhi, float64(xv))
		}
	}
	p.Y.Max = legendRoom(top, len(names))
	p.X.Min, p.X.Max = xlo-0.5, xhi+0.5
	for i, n := range names {
		xs := sortedInts(pts[n])
		xys := make(plotter.XYs, len(xs))
		for k, xv := range xs {
			xys[k] = plotter.XY{X: float64(xv), Y: median(pts[n][xv])}
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return false, errors.Wrapf(err, "launch: plotting %s", path)
		}
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		p.Legend.Add(n, l, sc)
	}
	return true, savePlot(p, path, 4)
}

// legendRoom is a y-axis top leaving room for a legend of n entries above
// data reaching top.
func legendRoom(top float64, n int) float64 {
	if top <= 0 {
		top = 1
	}
	return top * (1.1 + 0.08*float64(n))
}

func sortedInts(m map[int][]float64) []int {
	xs := make([]int, 0, len(m))
	for x := range m {
		xs = append(xs, x)
	}
	sort.Ints(xs)
	return xs
}

// intTicks labels whole numbers only (node counts).
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	step := math.Max(1, math.Ceil((hi-lo)/10))
	for x := math.Ceil(lo); x <= hi; x += step {
		ts = append(ts, plot.Tick{Value: x, Label: strconv.Itoa(int(x))})
	}
	return ts
}

func savePlot(p *plot.Plot, path string, groups int) error {
	w := vg.Length(math.Max(16, math.Min(40, 4*float64(groups)))) * vg.Centimeter
	tmp := path + ".tmp.png"
	if err := p.Save(w, 12*vg.Centimeter, tmp); err != nil {
		os.Remove(tmp)
		return errors.Wrapf(err, "launch: saving %s", path)
	}
	return errors.Wrapf(os.Rename(tmp, path), "launch: saving %s", path)
}

// suiteCmd is `dmg bench suite`.
func suiteCmd(opts *Options) *cobra.Command {
	s := &Suite{}
	var variants string
	c := &cobra.Command{
		Use:   "suite",
		Short: "run a matrix of `dmg run` jobs (graphs × algorithms × layouts × variants × repetitions); summary table, CSV/JSON and PNG plots",
		Long: `bench suite runs every graph × algorithm × layout × repetition × variant as
a child ` + "`dmg run --json`" + ` (under --mpirun, or with --local), writes one row per
run to results.csv and results.json in --out-dir, prints medians per cell
with ratios against --baseline, and draws PNG plots there. A variant is
NAME=EXTRA-FLAGS, e.g. "no-steal=--no-steal"; one whose runs fail is
recorded as failed and the suite goes on.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if launched, _, _ := spmd.Launched(); launched {
				return BadInputf("launch: run `dmg bench suite` directly, not under a launcher; it starts its runs itself")
			}
			if opts.Roles != "" {
				return BadInputf("launch: bench suite takes its role layouts from --layouts, not --roles")
			}
			rec, err := csv.NewReader(strings.NewReader(variants)).Read()
			if err != nil {
				return BadInputf("launch: --variants %q is not a comma-separated list (quote entries holding commas): %v", variants, err)
			}
			s.Variants, s.Local = rec, opts.Local
			s.Out, s.Progress = cmd.OutOrStdout(), os.Stderr
			s.EnsureDefaults()
			if err := s.Validate(); err != nil {
				return BadInput(err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if _, err := s.Run(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "dmg: %v\n", err)
				return exitErr{ExitFailure}
			}
			return nil
		},
	}
	fs := c.Flags()
	fs.StringSliceVar(&s.Graphs, "graphs", strings.Split(DefaultSuiteGraphs, ","), "graphs, as --graph of dmg run")
	fs.StringSliceVar(&s.Algos, "algos", strings.Split(DefaultSuiteAlgos, ","), "algorithms")
	fs.StringVar(&variants, "variants", DefaultSuiteVariants, "comma-separated NAME=EXTRA-FLAGS; the flags, split at spaces, are added to dmg run")
	fs.StringArrayVar(&s.Layouts, "layouts", []string{DefaultSuiteLayouts}, "role layouts cn:C,mn:M, several separated by commas or ';' (cn:1,mn:1,cn:2,mn:2), or repeat the flag")
	fs.IntVar(&s.Reps, "reps", 3, "repetitions of every run")
	fs.IntVar(&s.Iterations, "iterations", 0, "PageRank iterations of every run (0: dmg run's default, 20)")
	fs.StringVar(&s.OutDir, "out-dir", DefaultSuiteOutDir, "directory of results.csv, results.json, summary.txt, the plots and runs/ (per-run reports and logs)")
	fs.StringVar(&s.Baseline, "baseline", DefaultSuiteBaseline, "variant the ratios compare against (falls back to the first variant with results)")
	fs.StringVar(&s.Mpirun, "mpirun", "mpirun", "launcher command of the runs, split at spaces (not used with --local)")
	fs.DurationVar(&s.Timeout, "timeout", 10*time.Minute, "limit of one run")
	return c
}
