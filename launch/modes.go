package launch

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/pkg/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultModeVariants is the comparison `dmg bench modes` runs: the two
// baselines, then the design with its parts switched on one at a time
// (the paper's breakdown: direct update, ValRD, RefRD, both, all without
// the value pull), then the design in full.
var DefaultModeVariants = rank.VariantList(";", ModeVariantNames...)

// ModeVariantNames are the shared variants (rank.Variants) that
// DefaultModeVariants compares.
var ModeVariantNames = []string{"naive", "famgraph", "dmg-direct", "dmg-valrd", "dmg-refrd", "dmg-collab", "dmg"}

// modeVariant is one configuration of the comparison.
type modeVariant struct {
	name  string
	flags []string
}

func parseVariants(s string) ([]modeVariant, error) {
	var out []modeVariant
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, flags, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, BadInputf("launch: variant %q is not NAME=FLAGS", part)
		}
		out = append(out, modeVariant{strings.TrimSpace(name), strings.Fields(flags)})
	}
	if len(out) == 0 {
		return nil, BadInputf("launch: --variants names no variant")
	}
	return out, nil
}

func modesCmd(opts *Options, run func(body) int) *cobra.Command {
	var variants, baseline string
	base := &runFlags{}
	c := &cobra.Command{
		Use:   "modes",
		Short: "run one algorithm in several modes and ablations in one job and compare them (remote operations, atomics, CN cache, time)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Every variant starts from the flags given here, then adds its own.
			var common []string
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if f.Name != "variants" && f.Name != "baseline" && !opts.persistent(f.Name) {
					common = append(common, "--"+f.Name+"="+f.Value.String())
				}
			})
			return codeErr(run(func(j *Job) error { return benchModes(j, common, variants, baseline) }))
		},
	}
	base.register(c.Flags())
	c.Flags().StringVar(&variants, "variants", DefaultModeVariants, "semicolon-separated NAME=FLAGS configurations to compare")
	c.Flags().StringVar(&baseline, "baseline", "naive", "the variant the ratios are taken against")
	return c
}

// persistent tells whether a flag belongs to the job rather than the run.
func (o *Options) persistent(name string) bool {
	switch name {
	case "roles", "local", "verbose", "json":
		return true
	}
	return false
}

type modeRow struct {
	Name   string     `json:"name"`
	Flags  string     `json:"flags"`
	Report *runReport `json:"report"`
}

func benchModes(j *Job, common []string, variantSpec, baseline string) error {
	vs, err := parseVariants(variantSpec)
	if err != nil {
		return err
	}
	var rows []modeRow
	var skipped []string
	for _, v := range vs {
		rf := &runFlags{}
		fs := pflag.NewFlagSet(v.name, pflag.ContinueOnError)
		fs.SetOutput(nopWriter{})
		rf.register(fs)
		if err := fs.Parse(append(append([]string{}, common...), v.flags...)); err != nil {
			return BadInputf("launch: variant %s: %v", v.name, err)
		}
		if rf.algo == "" {
			rf.algo = "pagerank"
		}
		cfg, err := rf.jobConfig(j)
		if err != nil {
			return errors.Wrapf(err, "launch: variant %s", v.name)
		}
		if a, err := algo.Lookup(rf.algo); err == nil {
			if _, err := rank.NeedsOf(cfg.Engine, a.New(algo.Params{}).Spec()); err != nil {
				// A baseline the kernel does not run in (CDLP, LCC).
				skipped = append(skipped, v.name)
				continue
			}
		}
		j.Logf("bench modes: %s (%s)", v.name, strings.Join(v.flags, " "))
		out, err := job.Execute(j.World, cfg)
		if err != nil {
			return err
		}
		rows = append(rows, modeRow{Name: v.name, Flags: strings.Join(v.flags, " "), Report: newRunReport(j, out)})
	}
	if len(rows) == 0 {
		return BadInputf("launch: the algorithm runs in none of the variants (%s)", strings.Join(skipped, ", "))
	}
	if !j.IsRoot() {
		return nil
	}
	printModes(j, rows, baseline)
	if len(skipped) > 0 {
		fmt.Fprintf(j.Out, "not run: %s (the kernel does not run in them)\n", strings.Join(skipped, ", "))
	}
	return writeJSON(j, rows)
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func printModes(j *Job, rows []modeRow, baseline string) {
	base := rows[0]
	for _, r := range rows {
		if r.Name == baseline {
			base = r
		}
	}
	r0 := rows[0].Report
	fmt.Fprintf(j.Out, "DMG modes: %s on %s (%s vertices, %s edges), cn:%d,mn:%d over %s, %d iterations; ratios against %s measured in this run\n",
		r0.Algo, r0.Graph.Name, hn(r0.Graph.Vertices), hn(r0.Graph.Edges), r0.Roles.CN, r0.Roles.MN, r0.Fabric, len(r0.Iterations), base.Name)
	tw := tabwriter.NewWriter(j.Out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tcompute s\tedges/s\tremote ops/edge\tatomics/edge\tCN cache\tmodelled s\tspeedup\tops ×fewer\tatomics ×fewer\tcache ×smaller\t")
	ratio := func(a, b float64) string {
		if b == 0 {
			if a == 0 {
				return "1.0"
			}
			return "∞"
		}
		return fmt.Sprintf("%.1f", a/b)
	}
	b := base.Report
	for _, r := range rows {
		x := r.Report
		fmt.Fprintf(tw, "%s\t%.3f\t%s\t%.4f\t%.5f\t%s\t%.4f\t%s\t%s\t%s\t%s\t\n", r.Name, x.Times.Compute, hn(uint64(x.EdgesPerSecond)),
			x.RemoteOpsPerE, x.AtomicsPerEdge, hb(x.CNCacheBytesMax), x.ModeledFabricS,
			ratio(b.Times.Compute, x.Times.Compute), ratio(b.RemoteOpsPerE, x.RemoteOpsPerE), ratio(b.AtomicsPerEdge, x.AtomicsPerEdge),
			ratio(float64(b.CNCacheBytesMax), float64(x.CNCacheBytesMax)))
	}
	tw.Flush()
}
