package suite

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/pkg/errors"
)

// Defaults of `dmg bench suite`. DefaultVariants is a comma-separated list
// of NAME=EXTRA-FLAGS (flags split at spaces), the shared variants
// (rank.Variants) of DefaultVariantNames; a variant whose flags a run
// refuses (an unknown flag, a bad value) is recorded as failed, not fatal.
var (
	DefaultVariantNames = []string{"naive", "famgraph", "dmg-nomerge", "dmg-direct", "dmg", "no-stage2"}
	DefaultVariants     = rank.VariantList(",", DefaultVariantNames...)
)

const (
	DefaultGraphs   = "kron:14"
	DefaultAlgos    = "pagerank,bfs"
	DefaultLayouts  = "cn:2,mn:2"
	DefaultBaseline = "naive"
	DefaultOutDir   = "bench-results"
)

// Row status values.
const (
	OK      = "ok"
	Failed  = "failed"
	Skipped = "skipped"
)

// Metric keys of the summary: flattened report fields (see Row).
const (
	MetricCompute     = "times.compute_s"
	MetricEdgesPerS   = "edges_per_s"
	MetricOpsPerEdge  = "remote_ops_per_edge"
	MetricAtomicsPerE = "atomics_per_edge" // derived: verbs.atomics / Σ active edges
	MetricCNCache     = "cn_cache_bytes_max"
	MetricFabric      = "modeled_fabric_s"
	MetricTail        = "balance.tail_ratio"
	MetricLoad        = "times.load_s"
	MetricEdges       = "graph.edges"
	MetricCNRSS       = "cn_peak_rss_bytes"
	MetricMNRSS       = "mn_peak_rss_bytes"
	MetricMNUsed      = "mn_used_bytes" // summed over the MNs
)

// Ratio keys of Summary.Ratio, against the baseline variant.
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
	// Iterations, if positive, is --iterations of every run of an iterative
	// kernel (algo.Algorithm.Iterative: PageRank, CDLP).
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

// Variant is one parsed NAME=EXTRA-FLAGS.
type Variant struct {
	Name  string
	Flags []string
}

// EnsureDefaults fills empty fields with the defaults of `dmg bench suite`.
func (s *Suite) EnsureDefaults() {
	if len(s.Graphs) == 0 {
		s.Graphs = strings.Split(DefaultGraphs, ",")
	}
	if len(s.Algos) == 0 {
		s.Algos = strings.Split(DefaultAlgos, ",")
	}
	if len(s.Variants) == 0 {
		s.Variants = defaultVariantList()
	}
	if len(s.Layouts) == 0 {
		s.Layouts = []string{DefaultLayouts}
	}
	if s.Reps == 0 {
		s.Reps = 3
	}
	if s.OutDir == "" {
		s.OutDir = DefaultOutDir
	}
	if s.Baseline == "" {
		s.Baseline = DefaultBaseline
	}
	if s.Mpirun == "" {
		s.Mpirun = "mpirun"
	}
	if s.Timeout == 0 {
		s.Timeout = 10 * time.Minute
	}
}

// defaultVariantList splits DefaultVariants as the flag would (CSV).
func defaultVariantList() []string {
	rec, err := csv.NewReader(strings.NewReader(DefaultVariants)).Read()
	if err != nil {
		panic("suite: DefaultVariants is not a CSV line: " + err.Error())
	}
	return rec
}

// Validate checks the matrix without running anything. Its errors are all
// the user's input (the command line reports them as bad input).
func (s *Suite) Validate() error {
	_, _, err := s.plan()
	return err
}

var variantName = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)

// plan parses the variants and layouts.
func (s *Suite) plan() ([]Variant, []spmd.Roles, error) {
	if s.Reps < 1 || s.Timeout <= 0 {
		return nil, nil, errors.Errorf("suite: bench suite needs --reps ≥ 1 and --timeout > 0, got %d and %v", s.Reps, s.Timeout)
	}
	for _, l := range [][]string{s.Graphs, s.Algos} {
		if len(l) == 0 || slices.Contains(l, "") {
			return nil, nil, errors.Errorf("suite: bench suite: empty entry in --graphs %q or --algos %q", s.Graphs, s.Algos)
		}
	}
	if !s.Local && len(strings.Fields(s.Mpirun)) == 0 {
		return nil, nil, errors.New("suite: bench suite: --mpirun is empty; give a launcher or use --local")
	}
	var vs []Variant
	for _, item := range s.Variants {
		name, flags, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || !variantName.MatchString(name) {
			return nil, nil, errors.Errorf("suite: --variants entry %q is not NAME=EXTRA-FLAGS with a name of letters, digits, . _ + -", item)
		}
		if slices.ContainsFunc(vs, func(v Variant) bool { return v.Name == name }) {
			return nil, nil, errors.Errorf("suite: --variants names %q twice", name)
		}
		vs = append(vs, Variant{Name: name, Flags: strings.Fields(flags)})
	}
	if len(vs) == 0 {
		return nil, nil, errors.New("suite: --variants is empty")
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
			return nil, errors.Wrap(err, "suite: --layouts")
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
		cur = cur[:0]
	}
	if len(cur) != 0 || len(out) == 0 {
		return nil, errors.Errorf("suite: --layouts %q: expected layouts cn:C,mn:M, e.g. cn:1,mn:1,cn:2,mn:2", items)
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
