package outfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pkg/errors"
)

// Stdout is the path that means standard output.
const Stdout = "-"

// Error is a path that cannot be written: bad input to a command line.
type Error struct{ err error }

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

func badf(format string, a ...any) error {
	return &Error{errors.Errorf(format, a...)}
}

// How is how a resolved output is written.
type How int

const (
	// Replace: a temporary beside Path, renamed over it.
	Replace How = iota
	// Through: opened for writing in place (a device, FIFO or pipe).
	Through
	// ToStdout: standard output.
	ToStdout
)

// Target is an output path resolved: the file to write and how.
type Target struct {
	Name string // as the user gave it, for messages
	Path string // what is written: Name with its links followed
	How  How
	// Exists is whether Path is there already (for Replace).
	Exists bool
	st     fs.FileInfo
}

// Resolve finds what path names and how it is written (see the package
// documentation); an error is an *Error.
func Resolve(path string) (Target, error) {
	t := Target{Name: path, Path: path}
	switch {
	case path == Stdout:
		t.How = ToStdout
		return t, nil
	case path == "":
		return t, badf("outfile: empty output path; expected a file name or - for standard output")
	case strings.HasSuffix(path, "/"):
		return t, badf("outfile: output %s names a directory; expected a file", path)
	}
	lst, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(path)
		st, derr := os.Stat(dir)
		if derr != nil || !st.IsDir() {
			return t, badf("outfile: output %s: directory %s does not exist", path, dir)
		}
		return t, nil
	}
	if err != nil {
		return t, &Error{errors.Wrapf(err, "outfile: output %s", path)}
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return t, badf("outfile: output %s is a symbolic link to a missing file; expected a file, or a link to one", path)
		}
		if st, err = os.Stat(real); err != nil {
			return t, &Error{errors.Wrapf(err, "outfile: output %s (a link to %s)", path, real)}
		}
		t.Path = real
	}
	t.st, t.Exists = st, true
	m := st.Mode()
	switch {
	case m.IsRegular():
		t.How = Replace
	case m.IsDir():
		return t, badf("outfile: output %s is a directory; expected a file", path)
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
		t.How = Through
	default:
		return t, badf("outfile: output %s is a %s; expected a file, a character device or a FIFO", path, kind(m))
	}
	return t, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// Check reports whether path could be written, without touching anything
// already there: call it before a long computation so that a bad output
// fails early. A Replace target's directory must accept a new file.
func Check(path string) error {
	t, err := Resolve(path)
	if err != nil || t.How != Replace {
		return err
	}
	dir, base := filepath.Split(t.Path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".check-*")
	if err != nil {
		return &Error{errors.Wrapf(err, "outfile: output %s: cannot write in %s", path, dir)}
	}
	name := f.Name()
	f.Close()
	return errors.Wrapf(os.Remove(name), "outfile: checking output %s", path)
}

// Distinct refuses two of the named outputs (flag → path; empty paths are
// skipped) naming the same file, or standard output twice.
func Distinct(outs ...[2]string) error {
	seen := map[string][2]string{}
	for _, o := range outs {
		flag, path := o[0], o[1]
		if path == "" {
			continue
		}
		k := key(path)
		if prev, ok := seen[k]; ok {
			what := "the same file"
			if path == Stdout {
				what = "standard output"
			}
			return badf("outfile: %s %s and %s %s name %s; expected different outputs (one would overwrite the other)", prev[0], prev[1], flag, path, what)
		}
		seen[k] = o
	}
	return nil
}

// key identifies the file path names: its device and inode when it exists,
// else its cleaned absolute path with the directory's links followed.
func key(path string) string {
	if path == Stdout {
		return Stdout
	}
	if st, err := os.Stat(path); err == nil {
		if s, ok := st.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("ino:%d:%d", s.Dev, s.Ino)
		}
	}
	p, err := filepath.Abs(path)
	if err != nil {
		p = filepath.Clean(path)
	}
	dir, base := filepath.Split(p)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	return "path:" + filepath.Join(dir, base)
}

// TempPattern is the os.CreateTemp pattern of the temporary that an output
// named base is written to before its rename: hidden, beside it, and named
// by this process, so a process that is interrupted removes its own
// temporaries and nobody else's.
func TempPattern(base string) string {
	return fmt.Sprintf(".%s.tmp-%d-*", base, os.Getpid())
}

// Options tune Write and Create; the zero value writes mode 0644 files and
// "-" to os.Stdout.
type Options struct {
	Mode   fs.FileMode // of a new or replaced file (0: 0644)
	Stdout io.Writer   // what "-" writes to (nil: os.Stdout)
	// Volatile skips the syncs: the file is still whole or absent at its
	// path (rename), but a crash of the host may lose it. For a file that
	// describes something that dies with the host anyway (a served pool's
	// file): a sync waits for the disk, which on a loaded virtual machine
	// was seen to take 29 s.
	Volatile bool
}

// Write writes the output path with write (see the package documentation).
// write is given an *os.File for a Replace or Through target; its error is
// returned as it is.
func Write(path string, write func(io.Writer) error) error {
	return Options{}.Write(path, write)
}

// WriteFile writes data to path through Write.
func WriteFile(path string, data []byte) error {
	return Options{}.WriteFile(path, data)
}

// WriteFile writes data to path through o.Write.
func (o Options) WriteFile(path string, data []byte) error {
	return o.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes the output path with write, as Write does.
func (o Options) Write(path string, write func(io.Writer) error) (err error) {
	f, err := o.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Abort()
		}
	}()
	if err := write(f.W); err != nil {
		return err // the caller's, as it is: it knows what it was writing
	}
	return f.Commit()
}

// File is an output being written: write to W, then Commit it (or Abort).
type File struct {
	W   io.Writer
	t   Target
	f   *os.File // nil for standard output
	tmp string   // the temporary of a Replace target
	// volatile: Commit renames without syncing (Options.Volatile).
	volatile bool
}

// Create opens the output path for writing (see the package
// documentation): nothing is in place until Commit.
func (o Options) Create(path string) (*File, error) {
	t, err := Resolve(path)
	if err != nil {
		return nil, err
	}
	out := &File{t: t, volatile: o.Volatile}
	switch t.How {
	case ToStdout:
		out.W = o.Stdout
		if out.W == nil {
			out.W = os.Stdout
		}
		return out, nil
	case Through:
		f, err := os.OpenFile(t.Path, os.O_WRONLY, 0)
		if err != nil {
			return nil, &Error{errors.Wrapf(err, "outfile: cannot write %s", path)}
		}
		out.f, out.W = f, f
		return out, nil
	}
	dir, base := filepath.Split(t.Path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPattern(base))
	if err != nil {
		return nil, &Error{errors.Wrapf(err, "outfile: cannot write %s", path)}
	}
	mode := o.Mode
	if mode == 0 {
		mode = 0o644
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, errors.Wrapf(err, "outfile: writing %s", path)
	}
	out.f, out.W, out.tmp = f, f, f.Name()
	return out, nil
}

// Create opens path with the default Options.
func Create(path string) (*File, error) { return Options{}.Create(path) }

// OSFile is the file being written (the temporary of a replaced file), or
// nil for standard output.
func (f *File) OSFile() *os.File { return f.f }

// Commit finishes the output: a replaced file is synced and renamed into
// place, with its directory synced.
func (f *File) Commit() error {
	if f.f == nil {
		return nil
	}
	if f.tmp == "" {
		return errors.Wrapf(f.f.Close(), "outfile: writing %s", f.t.Name)
	}
	var err error
	if !f.volatile {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.t.Path)
	}
	if err != nil {
		os.Remove(f.tmp)
		return errors.Wrapf(err, "outfile: writing %s", f.t.Name)
	}
	if f.volatile {
		return nil
	}
	if d, derr := os.Open(filepath.Dir(f.t.Path)); derr == nil {
		_ = d.Sync() // some file systems refuse; the file is in place anyway
		_ = d.Close()
	}
	return nil
}

// Abort drops an output: a temporary is removed, a file already at the
// path is left as it was.
func (f *File) Abort() {
	if f.f == nil {
		return
	}
	f.f.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
}
