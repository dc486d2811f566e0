package launch

import (
	"fmt"
	"time"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
	"github.com/spf13/cobra"
)

func benchCmd(opts *Options, run func(body) int) *cobra.Command {
	c := &cobra.Command{
		Use:   "bench",
		Short: "micro-benchmarks of the data path",
	}
	var (
		fabricName string
		cxlDir     string
		cxlDev     string
		duration   time.Duration
		span       string
		timeout    time.Duration
	)
	v := &cobra.Command{
		Use:   "verbs",
		Short: "ops/s and bytes/s of READ (8 B to 4 KiB; unbatched and in doorbell batches), CAS and FAA from CN 0 to MN 0",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return codeErr(run(func(j *Job) error {
				sp, err := humanize.ParseBytes(span)
				if err != nil || sp < 8 {
					return BadInputf("launch: --span %q is not a size of at least 8 bytes", span)
				}
				if duration <= 0 {
					return BadInputf("launch: --duration must be positive")
				}
				cfg := verbs.Config{PoolBytes: sp, Provider: fabricName, Timeout: timeout}
				if err := poolPlace(&cfg, cxlDir, cxlDev); err != nil {
					return err
				}
				return benchVerbs(j, cfg, duration)
			}))
		},
	}
	v.Flags().StringVar(&fabricName, "fabric", "", fabricUsage)
	v.Flags().StringVar(&cxlDir, "cxl-dir", "", cxlDirUsage)
	v.Flags().StringVar(&cxlDev, "cxl-dev", "", cxlDevUsage)
	v.Flags().DurationVar(&duration, "duration", 200*time.Millisecond, "how long each case runs")
	v.Flags().StringVar(&span, "span", "64MiB", "size of the MN region the reads walk through")
	v.Flags().DurationVar(&timeout, "timeout", verbs.DefaultTimeout, "completion timeout")
	c.AddCommand(v, modesCmd(opts, run), suiteCmd(opts))
	return c
}

// benchResult is the --json report of `dmg bench verbs`.
type benchResult struct {
	Fabric string            `json:"fabric"`
	Result verbs.BenchResult `json:"result"`
}

func benchVerbs(j *Job, cfg verbs.Config, d time.Duration) error {
	if j.Role == spmd.CN {
		cfg.PoolBytes = 0
	}
	net, err := j.openNetwork(cfg)
	if err := j.Agree(err); err != nil {
		return err
	}
	var res verbs.BenchResult
	if j.Role == spmd.CN && j.Index == 0 {
		var ep verbs.Endpoint
		if ep, err = net.NewEndpoint(); err == nil {
			res, err = verbs.Bench(ep, verbs.BenchConfig{Span: net.PoolSize(0), Duration: d})
			if cerr := ep.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err := j.Agree(errors.Wrap(err, "launch: verbs benchmark")); err != nil {
		net.Close()
		return err
	}
	if err := net.Close(); err != nil {
		return err
	}
	if !j.IsRoot() {
		return nil
	}
	fmt.Fprintf(j.Out, "verbs benchmark: CN 0 → MN 0 over %s, %v per case\n", net.Provider(), d)
	if err := res.WriteTable(j.Out); err != nil {
		return err
	}
	return writeJSON(j, benchResult{Fabric: net.Provider(), Result: res})
}
