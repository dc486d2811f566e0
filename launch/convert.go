package launch

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/outfile"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// convertFlags are the flags of `dmg convert`.
type convertFlags struct {
	format         string
	undirected     bool
	weighted       bool
	unweighted     bool
	float32        bool
	dropSelfLoops  bool
	dropDuplicates bool
	seed           uint64
	quiet          bool
}

// convertCmd is `dmg convert IN OUT.bel`: one process, no MPI, reads any
// input --graph takes and writes it as a binary edge list. Errors go to
// stderr as one line; bad input (arguments, flags, the input's content,
// an output that cannot be written) exits 2, a failure while writing 1.
func convertCmd(opts *Options, stderr io.Writer) *cobra.Command {
	cf := &convertFlags{}
	c := &cobra.Command{
		Use:   "convert IN OUT.bel",
		Short: "convert a graph (any input --graph takes) to the binary edge list, with its vertex ids and weights",
		Long: `convert reads IN as dmg run --graph does (a file, format from its name, .gz
read transparently, or a generator such as kron:20) and writes it to OUT as
a DMG binary edge list (.bel; .bel.gz is gzipped), keeping the external
vertex ids, the weights, whether it is directed, every parallel edge and
self-loop it lists, and a Graphalytics dataset's algorithm parameters, so
that dmg run --graph OUT gives the results it gives with --graph IN, with
the same ids, and reads much faster. OUT is written to a temporary beside
it and renamed: a failing run leaves no partial file and an existing OUT
as it was.

Started directly, convert runs in one process and holds the whole graph in
memory. Under mpirun or srun (every rank parses; no --roles), a text edge
list (SNAP, .el, .wel; not gzipped to be split) is cut into byte ranges,
one per rank; the ranks agree on the vertex ids and each writes its
range's edges, as the input lists them, into OUT: IN and OUT's directory
must be on a file system every rank sees. Other inputs, --drop-duplicates
(it needs the whole graph; dmg run drops parallel edges when it reads
anyway) and a gzipped OUT are converted by rank 0 alone.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return BadInputf("launch: convert takes an input and an output, IN OUT.bel; got %d argument(s) (see `dmg convert --help`)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			co, err := cf.check(opts, out)
			if launched, rank, size := spmd.Launched(); launched && size > 1 {
				if err != nil { // found alike on every rank: printed once
					if rank == 0 {
						fmt.Fprintf(stderr, "dmg: %v\n", err)
					}
					return exitErr{exitBeforeMPI(rank, exitCode(err))}
				}
				po := *opts
				po.allCN = true
				return codeErr(runJob(&po, cmd.OutOrStdout(), stderr, func(j *Job) error { return convertJob(j, cf, co, in, out) }))
			}
			if err == nil {
				start := time.Now()
				intr := newInterrupt(stderr, &sync.Mutex{}, start, true)
				defer intr.stop()
				err = withProfile(opts, func() error { return convert(cf, co, in, out, cmd.OutOrStdout(), stderr, start, intr) })
			}
			if err != nil {
				fmt.Fprintf(stderr, "dmg: %v\n", err)
				return exitErr{exitCode(err)}
			}
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&cf.format, "format", "", "input format, instead of the one its name implies: graphalytics, snap, el, wel, mtx or bel")
	fs.BoolVar(&cf.undirected, "undirected", false, "store the input as undirected (every edge both ways), as dmg run --undirected reads it")
	fs.BoolVar(&cf.weighted, "weighted", false, "store weights: an input without them gets the synthetic weights of dmg run --weighted (from --seed)")
	fs.BoolVar(&cf.unweighted, "unweighted", false, "drop the input's weights")
	fs.BoolVar(&cf.float32, "float32", false, "store weights as float32, 4 bytes instead of 8 (the engine computes with float32 weights anyway)")
	fs.BoolVar(&cf.dropSelfLoops, "drop-self-loops", false, "leave out self-loops (v→v)")
	fs.BoolVar(&cf.dropDuplicates, "drop-duplicates", false, "keep one copy of each parallel edge, the lightest (dmg run does so when it reads; but it counts every copy when it picks a default source by degree)")
	fs.Uint64Var(&cf.seed, "seed", 1, "seed of the generators and of the synthetic weights of --weighted")
	fs.BoolVarP(&cf.quiet, "quiet", "q", false, "no progress bar and no summary line")
	return c
}

// check checks the flags of `dmg convert ... OUT` and returns the read
// options they make.
func (cf *convertFlags) check(opts *Options, out string) (csr.Options, error) {
	if opts.Roles != "" || opts.Local {
		return csr.Options{}, BadInputf("launch: convert runs in one process, or on every rank of a launcher's job; --roles and --local do not apply")
	}
	if opts.JSON != "" {
		return csr.Options{}, BadInputf("launch: convert writes no report; --json does not apply")
	}
	if cf.weighted && cf.unweighted {
		return csr.Options{}, BadInputf("launch: convert: --weighted and --unweighted exclude each other")
	}
	if lo := strings.ToLower(out); out != outfile.Stdout && !strings.HasSuffix(lo, ".bel") && !strings.HasSuffix(lo, ".bel.gz") {
		return csr.Options{}, BadInputf("launch: convert: output %s: expected a name ending in .bel (or .bel.gz), which is how dmg run knows the format, or - for a .bel on standard output", out)
	}
	co := csr.Options{Format: cf.format, Undirected: cf.undirected, Weighted: cf.weighted, Unweighted: cf.unweighted, Seed: cf.seed, Duplicates: csr.KeepDuplicates}
	if cf.dropSelfLoops {
		co.SelfLoops = csr.DropSelfLoops
	}
	if cf.dropDuplicates {
		co.Duplicates = csr.DropDuplicates
	}
	if err := co.Validate(); err != nil {
		return csr.Options{}, BadInput(err)
	}
	if err := checkWritable("output", out); err != nil {
		return csr.Options{}, err
	}
	return co, nil
}

// withProfile runs f under the CPU profile --cpuprofile asks for.
func withProfile(opts *Options, f func() error) error {
	stop, err := startProfile(opts.CPUProfile, 0, false)
	if err != nil {
		return err
	}
	defer stop()
	return f()
}

// convert does `dmg convert IN OUT` in one process: a text edge list is
// streamed (convertStreamed), any other input read whole, then written.
func convert(cf *convertFlags, co csr.Options, in, out string, stdout, stderr io.Writer, start time.Time, intr *interrupt) error {
	if streams(co, in, out) {
		return convertStreamed(cf, co, in, out, stdout, stderr, start, intr, nil, 0, 1)
	}
	intr.setPhase("reading " + in)

	bar := newReadBar(stderr, in, start, cf.quiet)
	g, meta, err := csr.OpenProgress(in, co, bar.update)
	bar.finish()
	if err != nil {
		return err
	}
	readBytes := bar.total
	intr.writing(out)
	intr.setPhase("writing " + out)
	var written int64
	summary := stdout
	if out == outfile.Stdout { // stdout holds the edge list alone
		summary = stderr
	}
	err = writeOutput(outfile.Options{Stdout: stdout}, out, func(w io.Writer) error {
		cw := &countWriter{w: w}
		var dst io.Writer = cw
		var zw *gzip.Writer
		if strings.HasSuffix(strings.ToLower(out), ".gz") {
			zw = gzip.NewWriter(cw)
			dst = zw
		}
		if err := csr.WriteBinary(dst, g, csr.BinaryOptions{Float32Weights: cf.float32, Properties: meta.Properties}); err != nil {
			return err
		}
		if zw != nil {
			if err := zw.Close(); err != nil {
				return errors.Wrap(err, "launch: compressing")
			}
		}
		written = cw.n
		return nil
	})
	if err != nil {
		return err
	}
	intr.done()
	if cf.quiet {
		return nil
	}
	kind := graphKind(g.Directed, g.Weights != nil, "undirected")
	convertSummary(summary, meta.Name, out, uint64(g.N), g.NumEdges(), kind, written, readBytes, time.Since(start).Seconds(), 1)
	return nil
}

// graphKind is how convert's line describes the graph it wrote: directed
// or as undirected says, and weighted.
func graphKind(directed, weighted bool, undirected string) string {
	kind := "directed"
	if !directed {
		kind = undirected
	}
	if weighted {
		kind += ", weighted"
	}
	return kind
}

// convertSummary is convert's line on stdout: what it read and wrote, how
// fast, and by how many ranks when more than one.
func convertSummary(w io.Writer, name, out string, n, edges uint64, kind string, written, read int64, secs float64, ranks int) {
	src := "generated"
	if read > 0 {
		src = fmt.Sprintf("%s read, %s/s", hb(uint64(read)), hb(uint64(float64(read)/max(secs, 1e-9))))
	}
	if ranks > 1 {
		src += fmt.Sprintf(", parsed by %d ranks", ranks)
	}
	fmt.Fprintf(w, "dmg convert: %s → %s: %s vertices, %s edges (%s); %s written in %.2fs (%s, %s edges/s)\n",
		name, filepath.Base(out), humanize.Comma(int64(n)), humanize.Comma(int64(edges)), kind, hb(uint64(written)), secs, src, hn(uint64(float64(edges)/max(secs, 1e-9))))
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// readBar draws the bytes read of the input on stderr when it is a
// terminal, once the read has taken longer than barDelay (a quick one
// draws nothing), and never with --quiet.
type readBar struct {
	mu    sync.Mutex
	out   io.Writer // nil: no bar
	what  string
	start time.Time
	bar   *progressbar.ProgressBar
	total int64
}

// barDelay is how long a read goes without a bar.
const barDelay = 1500 * time.Millisecond

func newReadBar(stderr io.Writer, what string, start time.Time, quiet bool) *readBar {
	b := &readBar{what: what, start: start}
	if f, ok := stderr.(*os.File); ok && !quiet && term.IsTerminal(int(f.Fd())) {
		b.out = stderr
	}
	return b
}

func (b *readBar) update(done, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = total
	if b.out == nil || time.Since(b.start) < barDelay {
		return
	}
	if b.bar == nil {
		b.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(b.out),
			progressbar.OptionSetDescription("reading "+filepath.Base(b.what)), progressbar.OptionShowBytes(true), progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	if b.bar.GetMax64() != total {
		b.bar.ChangeMax64(total)
	}
	b.bar.Set64(done)
}

func (b *readBar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		b.bar.Finish()
	}
}
