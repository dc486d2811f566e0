package verbs

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
)

// BenchConfig configures Bench. Zero fields take the defaults noted.
type BenchConfig struct {
	// Base is the start of the region the benchmark reads and updates
	// (default: MN 0, offset 0). Its contents are overwritten by the
	// atomics.
	Base Addr `json:"base"`
	// Span is the region's length in bytes (required); reads walk through
	// it so that no two reads of a batch touch the same bytes.
	Span uint64 `json:"span"`
	// Sizes are the read sizes (default 8, 64, 256, 4096 bytes).
	Sizes []int `json:"sizes"`
	// Batches are the doorbell batch sizes (default 1, 8, 32, 128).
	Batches []int `json:"batches"`
	// PerOpCalls are batch sizes also measured posting one provider call
	// per operation, on endpoints that implement PostMode (default 32).
	PerOpCalls []int `json:"per_op_calls"`
	// Duration is how long each case runs (default 200 ms).
	Duration time.Duration `json:"duration_ns"`
	// NoAtomics skips the CAS and FAA cases.
	NoAtomics bool `json:"no_atomics"`
}

// EnsureDefaults fills in zero fields.
func (c *BenchConfig) EnsureDefaults() {
	if len(c.Sizes) == 0 {
		c.Sizes = []int{8, 64, 256, 4096}
	}
	if len(c.Batches) == 0 {
		c.Batches = []int{1, 8, 32, 128}
	}
	if c.PerOpCalls == nil {
		c.PerOpCalls = []int{32}
	}
	if c.Duration == 0 {
		c.Duration = 200 * time.Millisecond
	}
}

// Validate checks the configuration.
func (c *BenchConfig) Validate() error {
	for _, s := range c.Sizes {
		if s <= 0 || uint64(s) > c.Span {
			return errors.Errorf("verbs: bench read size %d must be positive and fit the %d-byte span", s, c.Span)
		}
	}
	for _, b := range append(append([]int(nil), c.Batches...), c.PerOpCalls...) {
		if b <= 0 {
			return errors.Errorf("verbs: bench batch size %d must be positive", b)
		}
	}
	if c.Span < 8 {
		return errors.Errorf("verbs: bench span %d bytes; expected at least 8", c.Span)
	}
	if c.Base.Offset()%8 != 0 {
		return errors.Errorf("verbs: bench base %v must be 8-byte aligned for the atomics", c.Base)
	}
	if c.Duration < 0 {
		return errors.Errorf("verbs: bench duration %v is negative", c.Duration)
	}
	return nil
}

// BenchRow is one measured case.
type BenchRow struct {
	Op        string  `json:"op"` // "read", "cas", "faa"
	Size      int     `json:"size"`
	Batch     int     `json:"batch"`
	PerOpCall bool    `json:"per_op_call"` // one provider call per operation
	Ops       uint64  `json:"ops"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	BytesSec  float64 `json:"bytes_per_sec"`
	// FlushUS is the mean time of one Flush (one round trip) in µs.
	FlushUS float64 `json:"flush_us"`
}

// BenchResult is what Bench measured on one endpoint.
type BenchResult struct {
	Rows     []BenchRow `json:"rows"`
	Counters Counters   `json:"counters"` // the endpoint's counts during the run
}

// Bench measures ep: reads of each size, unbatched and in doorbell batches,
// then CAS and FAA, each for cfg.Duration. It uses (and overwrites) the
// region [cfg.Base, cfg.Base+cfg.Span).
func Bench(ep Endpoint, cfg BenchConfig) (BenchResult, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return BenchResult{}, err
	}
	if ep == nil {
		return BenchResult{}, errors.New("verbs: Bench needs an endpoint")
	}
	var res BenchResult
	start := ep.Counters()
	pm, _ := ep.(PostMode)
	at, hasAtomics := ep.(Atomics)
	type bcase struct {
		op          string
		size, batch int
		perOp       bool
	}
	var cases []bcase
	kinds := []string{"read"}
	if !cfg.NoAtomics && hasAtomics {
		kinds = append(kinds, "cas", "faa")
	}
	for _, op := range kinds {
		sizes := cfg.Sizes
		if op != "read" {
			sizes = []int{8}
		}
		for _, s := range sizes {
			for _, b := range cfg.Batches {
				cases = append(cases, bcase{op, s, b, false})
			}
			if pm != nil {
				for _, b := range cfg.PerOpCalls {
					cases = append(cases, bcase{op, s, b, true})
				}
			}
		}
	}
	for _, c := range cases {
		if pm != nil {
			pm.SetPostPerOp(c.perOp)
		}
		row, err := benchCase(ep, at, cfg, c.op, c.size, c.batch)
		if pm != nil {
			pm.SetPostPerOp(false)
		}
		if err != nil {
			return res, errors.Wrapf(err, "verbs: bench %s %d B batch %d", c.op, c.size, c.batch)
		}
		row.PerOpCall = c.perOp
		res.Rows = append(res.Rows, row)
	}
	res.Counters = ep.Counters().Sub(start)
	return res, nil
}

func benchCase(ep Endpoint, at Atomics, cfg BenchConfig, op string, size, batch int) (BenchRow, error) {
	buf := make([]byte, size*batch)
	prev := make([]uint64, batch)
	slots := cfg.Span / uint64(size)
	words := cfg.Span / 8
	var ops, flushes uint64
	next := uint64(0)
	var begin, deadline time.Time
	// The first two flushes warm up (connections, caches) and are not timed.
	for warm := -2; warm < 0 || flushes == 0 || time.Now().Before(deadline); warm++ {
		if warm == 0 {
			begin = time.Now()
			deadline = begin.Add(cfg.Duration)
		}
		for i := range batch {
			var err error
			switch op {
			case "read":
				err = ep.Read(buf[i*size:(i+1)*size], cfg.Base.Add(next%slots*uint64(size)))
			case "cas":
				w := cfg.Base.Add(next % words * 8)
				err = at.CAS64(w, 0, 0, &prev[i])
			case "faa":
				err = at.FAA64(cfg.Base.Add(next%words*8), 1, &prev[i])
			}
			if err != nil {
				return BenchRow{}, err
			}
			next++
		}
		if err := ep.Flush(); err != nil {
			return BenchRow{}, err
		}
		if warm >= 0 {
			ops += uint64(batch)
			flushes++
		}
	}
	secs := time.Since(begin).Seconds()
	return BenchRow{Op: op, Size: size, Batch: batch, Ops: ops, Seconds: secs,
		OpsPerSec: float64(ops) / secs, BytesSec: float64(ops) * float64(size) / secs,
		FlushUS: secs / float64(flushes) * 1e6}, nil
}

// WriteTable prints the result as an aligned table.
func (r BenchResult) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tsize\tbatch\tposting\tops/s\tMB/s\tµs/flush\t")
	for _, row := range r.Rows {
		posting := "one call"
		if row.PerOpCall {
			posting = "call per op"
		}
		if row.Batch == 1 {
			posting = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.1f\t%.1f\t\n", row.Op, humanize.IBytes(uint64(row.Size)), row.Batch, posting,
			humanize.SIWithDigits(row.OpsPerSec, 1, ""), row.BytesSec/1e6, row.FlushUS)
	}
	if err := tw.Flush(); err != nil {
		return errors.Wrap(err, "verbs: writing the bench table")
	}
	c := r.Counters
	_, err := fmt.Fprintf(w, "total: %s ops (%s reads, %s CAS, %s FAA), %s read, %s doorbells, %s round trips\n",
		humanize.Comma(int64(c.Ops())), humanize.Comma(int64(c.Reads)), humanize.Comma(int64(c.CAS)), humanize.Comma(int64(c.FAA)),
		humanize.IBytes(c.BytesRead), humanize.Comma(int64(c.Doorbells)), humanize.Comma(int64(c.RoundTrips)))
	return errors.Wrap(err, "verbs: writing the bench table")
}
