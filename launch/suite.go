package launch

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/suite"
	"github.com/spf13/cobra"
)

// suiteCmd is `dmg bench suite`, the command line of package suite: the
// matrix is the user's input (exit 2 when it is wrong), the suite's own
// failure exits 1.
func suiteCmd(opts *Options) *cobra.Command {
	s := &suite.Suite{}
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
	fs.StringSliceVar(&s.Graphs, "graphs", strings.Split(suite.DefaultGraphs, ","), "graphs, as --graph of dmg run")
	fs.StringSliceVar(&s.Algos, "algos", strings.Split(suite.DefaultAlgos, ","), "algorithms")
	fs.StringVar(&variants, "variants", suite.DefaultVariants, "comma-separated NAME=EXTRA-FLAGS; the flags, split at spaces, are added to dmg run")
	fs.StringArrayVar(&s.Layouts, "layouts", []string{suite.DefaultLayouts}, "role layouts cn:C,mn:M, several separated by commas or ';' (cn:1,mn:1,cn:2,mn:2), or repeat the flag")
	fs.IntVar(&s.Reps, "reps", 3, "repetitions of every run")
	fs.IntVar(&s.Iterations, "iterations", 0, "iterations of every run of an iterative kernel, PageRank and CDLP (0: each kernel's default: 20 and 10)")
	fs.StringVar(&s.OutDir, "out-dir", suite.DefaultOutDir, "directory of results.csv, results.json, summary.txt, the plots and runs/ (per-run reports and logs)")
	fs.StringVar(&s.Baseline, "baseline", suite.DefaultBaseline, "variant the ratios compare against (falls back to the first variant with results)")
	fs.StringVar(&s.Mpirun, "mpirun", "mpirun", "launcher command of the runs, split at spaces (not used with --local)")
	fs.DurationVar(&s.Timeout, "timeout", 10*time.Minute, "limit of one run")
	return c
}
