package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func loadCmd(opts *Options, run func(body) int) *cobra.Command {
	rf := &runFlags{}
	c := &cobra.Command{
		Use:   "load",
		Short: "load a graph into the memory nodes' DM-friendly store and report the layout",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.setRoles(opts); err != nil {
				return err
			}
			return codeErr(run(func(j *Job) error { return loadBody(j, rf) }))
		},
	}
	rf.register(c.Flags())
	for _, f := range []string{"algo", "out", "verify", "source", "iterations", "damping", "dense-threshold", "nic-profile", "batch"} {
		c.Flags().MarkHidden(f)
	}
	return c
}

// loadReport is the report of `dmg load`.
type loadReport struct {
	Graph struct {
		Name     string `json:"name"`
		Vertices uint64 `json:"vertices"`
		Edges    uint64 `json:"edges"`
		Weighted bool   `json:"weighted"`
	} `json:"graph"`
	Roles struct {
		CN int `json:"cn"`
		MN int `json:"mn"`
	} `json:"roles"`
	Fabric       string            `json:"fabric"`
	Degrees      csr.DegreeSummary `json:"degrees"`
	InPlaceShare float64           `json:"in_place_share"`
	EntryBytes   int               `json:"entry_bytes"`
	MNBytes      []uint64          `json:"mn_bytes"`
	MNImbalance  float64           `json:"mn_imbalance"`
	Times        struct {
		Load      float64 `json:"load_s"`
		Partition float64 `json:"partition_s"`
	} `json:"times"`
	EdgesPerSecond float64 `json:"edges_per_s"`
	BytesWritten   uint64  `json:"bytes_written"`
	// Windows is the most windows a CN built its share in (--load-mem).
	Windows int `json:"windows"`
}

// loadProgress draws a progress bar for CN 0's loading when stderr is a
// terminal (never in tests or logs).
func loadProgress(j *Job) func(dmstore.LoadProgress) {
	if !j.IsRoot() || !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(p dmstore.LoadProgress) {
		if bar == nil {
			bar = progressbar.NewOptions64(int64(p.TotalBytes), progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription("loading CN 0's chunk"), progressbar.OptionShowBytes(true),
				progressbar.OptionThrottle(100e6), progressbar.OptionClearOnFinish())
		}
		bar.Set64(int64(p.Bytes))
	}
}

// readProgress draws a progress bar for CN 0's parse of its range of a
// text edge list (a staged read) when stderr is a terminal.
func readProgress(j *Job, graph string) func(done, total int64) {
	if !j.IsRoot() {
		return nil
	}
	bar := newReadBar(os.Stderr, graph+" (CN 0's range)", time.Now(), false)
	return func(done, total int64) {
		bar.update(done, total)
		if done >= total {
			bar.finish()
		}
	}
}

func loadBody(j *Job, rf *runFlags) error {
	rf.algo = "load"
	cfg, err := rf.jobConfig(j)
	if err != nil {
		return err
	}
	cfg.LoadOnly = true
	cfg.LoadProgress = loadProgress(j)
	a, err := rf.jobPool(j, &cfg)
	if err != nil {
		return err
	}
	out, err := job.Execute(j.World, cfg)
	// Whether the job succeeded or not (agreed: every rank is here), its
	// endpoints leave the pool's MNs in order.
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Every CN's load report, merged on rank 0.
	var blob []byte
	if j.Role == spmd.CN && out.Load != nil {
		if blob, err = json.Marshal(out.Load); err != nil {
			return errors.Wrap(err, "launch: encoding load report")
		}
	}
	all, err := j.Comm.AllGather(blob)
	if err != nil {
		return err
	}
	total := &dmstore.LoadReport{}
	for _, b := range all {
		if len(b) == 0 {
			continue
		}
		var r dmstore.LoadReport
		if err := json.Unmarshal(b, &r); err != nil {
			return errors.Wrap(err, "launch: decoding load report")
		}
		total.Merge(&r)
	}
	if !j.IsRoot() {
		return nil
	}
	rep := &loadReport{Fabric: out.Provider, Degrees: out.Degrees, InPlaceShare: out.InPlaceShare, MNBytes: out.MNUsed}
	rep.Graph.Name, rep.Graph.Vertices, rep.Graph.Edges, rep.Graph.Weighted = out.Meta.Name, out.Vertices, out.Edges, out.Layout.Weighted
	rep.Roles.CN, rep.Roles.MN = j.Roles.CN, len(out.MNPool)
	rep.EntryBytes = out.Layout.Codec.Size
	rep.MNImbalance = out.Layout.Imbalance()
	rep.Times.Load, rep.Times.Partition = out.LoadS, out.PartS
	rep.BytesWritten, rep.Windows = total.Bytes, total.Windows
	if out.LoadS > 0 {
		rep.EdgesPerSecond = float64(out.Edges) / out.LoadS
	}
	rep.print(j)
	return writeJSON(j, rep)
}

func (r *loadReport) print(j *Job) {
	w := j.Out
	fmt.Fprintf(w, "DMG load %s: %s vertices, %s edges%s; cn:%d,mn:%d over %s\n", r.Graph.Name,
		humanize.Comma(int64(r.Graph.Vertices)), humanize.Comma(int64(r.Graph.Edges)), map[bool]string{true: " (weighted)"}[r.Graph.Weighted],
		r.Roles.CN, r.Roles.MN, r.Fabric)
	d := r.Degrees
	fmt.Fprintf(w, "out-degree: min %d, median %d, mean %.2f, p90 %d, p99 %d, max %d; %s vertices without out-edges\n",
		d.Min, d.Median, d.Mean, d.P90, d.P99, d.Max, humanize.Comma(int64(d.Zero)))
	var hist []string
	for i, c := range d.Log2 {
		if c == 0 {
			continue
		}
		lo := uint64(0)
		if i > 0 {
			lo = 1 << (i - 1)
		}
		hist = append(hist, fmt.Sprintf("≥%d:%s", lo, hn(c)))
	}
	fmt.Fprintf(w, "degree histogram (log2 buckets): %s\n", strings.Join(hist, " "))
	fmt.Fprintf(w, "index: %d-byte entries, %.1f%% of vertices with their edges in place\n", r.EntryBytes, 100*r.InPlaceShare)
	per := make([]string, len(r.MNBytes))
	for m, b := range r.MNBytes {
		per[m] = fmt.Sprintf("mn%d %s", m, hb(b))
	}
	fmt.Fprintf(w, "memory nodes: %s (max/mean %.3f)\n", strings.Join(per, ", "), r.MNImbalance)
	win := ""
	if r.Windows > 1 {
		win = fmt.Sprintf(", in up to %d windows a CN (--load-mem)", r.Windows)
	}
	fmt.Fprintf(w, "load %.3fs (%s edges/s, %s written%s), partition %.4fs\n", r.Times.Load, hn(uint64(r.EdgesPerSecond)), hb(r.BytesWritten), win, r.Times.Partition)
}
