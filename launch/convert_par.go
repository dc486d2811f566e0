package launch

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/outfile"
	"github.com/dmg-hpc/dmg/spmd"
)

// streams says whether convert streams IN to OUT (convertStreamed)
// rather than reading the whole graph first: a text edge list that a
// staged read takes (SNAP, .el, .wel), parallel edges kept (dropping
// them needs the whole graph), and an OUT that is not gzipped (its
// ranges are written in place).
func streams(co csr.Options, in, out string) bool {
	// Its ranks write their ranges in place, into a temporary file
	// beside OUT: a device, FIFO or standard output takes the edges in
	// order, from one process.
	t, err := outfile.Resolve(out)
	if err != nil || t.How != outfile.Replace {
		return false
	}
	return co.Duplicates == csr.KeepDuplicates && csr.Stageable(in, co) && !csr.IsGeneratorSpec(in) && !strings.HasSuffix(strings.ToLower(out), ".gz")
}

// convertJob is `dmg convert IN OUT` on every rank of a launcher's job
// (every rank a parser; no memory nodes). Rank 0 decides for all whether
// it streams; if so, every rank takes a byte range (convertStreamed),
// else rank 0 converts alone.
func convertJob(j *Job, cf *convertFlags, co csr.Options, in, out string) error {
	x := &exchanger{j.Comm}
	mine := []byte{0}
	if j.IsRoot() && streams(co, in, out) {
		mine[0] = 1
	}
	all, err := x.step(nil, mine)
	if err != nil {
		return err
	}
	if all[0][0] == 1 {
		return convertStreamed(cf, co, in, out, j.Out, j.Err, j.Start, j.intr, x, j.Index, j.Roles.CN)
	}
	if !j.IsRoot() {
		return nil
	}
	return convert(cf, co, in, out, j.Out, j.Err, j.Start, j.intr)
}

// convertStreamed converts IN to OUT without the whole graph in memory:
// each of ranks ranks parses its byte range of IN, they agree on the
// vertex ids, and each writes its range's edges, as IN lists them, into
// one temporary file beside OUT, which rank 0 renames
// (csr.ConvertStaged). Alone (x nil) the ids meet in memory; with
// others, through x's steps and a temporary file beside OUT: IN and
// OUT's directory must then be on a file system every rank sees.
func convertStreamed(cf *convertFlags, co csr.Options, in, out string, stdout, stderr io.Writer, start time.Time, intr *interrupt, x *exchanger, rank, ranks int) error {
	root := rank == 0
	st := csr.Solo()
	if x != nil {
		fs := &fileStage{x: *x, dir: filepath.Dir(out), root: root}
		defer fs.close()
		st = fs
	}
	intr.setPhase("converting " + in)
	var bar *readBar
	var progress func(done, total int64)
	if root {
		bar = newReadBar(stderr, in, start, cf.quiet)
		progress = bar.update
	}
	bo := csr.BinaryOptions{Float32Weights: cf.float32}
	var c *csr.Converted
	var cerr error // the conversion's own error, as it is (WriteAtomic's wrapping says "writing")
	convertInto := func(f *os.File) error {
		c, cerr = csr.ConvertStaged(in, co, bo, st, rank, ranks, f, progress)
		return cerr
	}
	var err error
	if root {
		intr.writing(out)
		called := false
		err = writeOutput(outfile.Options{}, out, func(w io.Writer) error {
			called = true
			f := w.(*os.File)
			if x != nil {
				if err := offerFile(*x, f.Name(), nil); err != nil {
					return err
				}
			}
			return convertInto(f)
		})
		if !called && x != nil { // no temporary file: the others wait for its name
			offerFile(*x, "", err)
		}
	} else {
		var f *os.File
		if f, err = joinFile(*x, os.O_WRONLY); err == nil {
			err = convertInto(f)
			f.Close()
		}
	}
	if bar != nil {
		bar.finish()
	}
	if cerr != nil {
		err = cerr
	}
	if err != nil || !root {
		return err
	}
	intr.done()
	if !cf.quiet {
		var read int64
		if fi, err := os.Stat(in); err == nil {
			read = fi.Size()
		}
		kind := graphKind(c.Directed, c.Weighted, "undirected, each edge once")
		convertSummary(stdout, c.Meta.Name, out, uint64(c.N), c.Records, kind, c.Bytes, read, time.Since(start).Seconds(), ranks)
	}
	return nil
}

// offerFile is rank 0's side of joinFile: it names its file (or passes
// err, having none) and learns whether every rank could open it.
func offerFile(x exchanger, name string, err error) error {
	if _, err := x.step(err, []byte(name)); err != nil {
		return err
	}
	_, err = x.step(nil, nil)
	return err
}

// joinFile opens the file rank 0 names in the next step (flag: how) and
// says in one more step whether every rank could.
func joinFile(x exchanger, flag int) (*os.File, error) {
	all, err := x.step(nil, nil)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(string(all[0]), flag, 0)
	if err != nil {
		err = errors.Wrap(err, "launch: opening rank 0's file (the ranks of `dmg convert` must share its directory)")
	}
	if _, err := x.step(err, nil); err != nil {
		if f != nil {
			f.Close()
		}
		return nil, err
	}
	return f, nil
}

// exchanger is spmd.Exchange over the job, its errors named by rank.
type exchanger struct{ comm spmd.Comm }

func (x exchanger) step(err error, payload []byte) ([][]byte, error) {
	all, xerr := spmd.Exchange(x.comm, err, payload)
	var pe *spmd.PeerError
	switch {
	case errors.As(xerr, &pe):
		return nil, errors.Errorf("launch: rank %d failed: %s", pe.Rank, pe.Msg)
	case xerr != nil && xerr != err:
		return nil, errors.Wrap(xerr, "launch: a step of the conversion")
	}
	return all, xerr
}

// fileStage is csr.Stage for a conversion by every rank of a job: its
// steps are exchanger's, its staging memory (the ids, a bit or a word per
// vertex) a temporary file beside the output, which rank 0 makes and
// removes.
type fileStage struct {
	x    exchanger
	dir  string
	root bool
	f    *os.File
}

func (s *fileStage) Step(err error, payload []byte) ([][]byte, error) {
	if err == nil && s.f != nil {
		// Written before the step, read after it by other ranks, maybe
		// on other hosts: on the file system before the step.
		err = errors.Wrap(s.f.Sync(), "launch: staging the ids")
	}
	return s.x.step(err, payload)
}

// Close and Round: a conversion stages its ids only, never edges in
// rounds (csr.ShareOptions.StageBytes).
func (s *fileStage) Close(csr.Staging) error { return nil }

func (s *fileStage) Round(error, []byte) ([][]byte, error) {
	return nil, errors.New("launch: a conversion stages no rounds of edges")
}

func (s *fileStage) Open(bytes uint64) (csr.Staging, error) {
	if !s.root {
		f, err := joinFile(s.x, os.O_RDWR)
		s.f = f
		return s, err
	}
	f, err := os.CreateTemp(s.dir, ".dmg-convert-ids-*")
	if err == nil {
		s.f = f
		err = f.Truncate(int64(bytes))
	}
	if err != nil {
		err = errors.Wrap(err, "launch: staging the ids")
	}
	name := ""
	if f != nil {
		name = f.Name()
	}
	if err := offerFile(s.x, name, err); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *fileStage) Write(off uint64, b []byte) error {
	_, err := s.f.WriteAt(b, int64(off))
	return errors.Wrap(err, "launch: staging the ids")
}

func (s *fileStage) Read(b []byte, off uint64) error {
	_, err := s.f.ReadAt(b, int64(off))
	return errors.Wrap(err, "launch: staging the ids")
}

// close closes the staging file; rank 0 removes it.
func (s *fileStage) close() {
	if s.f == nil {
		return
	}
	s.f.Close()
	if s.root {
		os.Remove(s.f.Name())
	}
}
