package outfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree makes a directory holding a regular file, a link to it, a dangling
// link, a FIFO, a subdirectory and, as root, a character device (null).
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("old\n"), 0o640))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	must(os.Symlink("missing", filepath.Join(dir, "dangling")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	_ = syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3) // root only
	return dir
}

func TestResolve(t *testing.T) {
	dir := tree(t)
	for _, tc := range []struct {
		name, path string
		how        How
		real       string // Target.Path relative to dir ("" : as given)
		bad        string // error substring; "" for none
	}{
		{"stdout", "-", ToStdout, "", ""},
		{"missing file", "new", Replace, "", ""},
		{"regular file", "file", Replace, "", ""},
		{"link to a regular file", "link", Replace, "file", ""},
		{"fifo", "fifo", Through, "", ""},
		{"dangling link", "dangling", 0, "", "symbolic link to a missing file"},
		{"directory", "sub", 0, "", "is a directory"},
		{"trailing slash", "new/", 0, "", "names a directory"},
		{"missing directory", "nodir/x", 0, "", "directory " + filepath.Join(dir, "nodir") + " does not exist"},
		{"empty", "", 0, "", "empty output path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			if p != "-" && p != "" {
				p = filepath.Join(dir, p)
				if strings.HasSuffix(tc.path, "/") {
					p += "/"
				}
			}
			got, err := Resolve(p)
			if tc.bad != "" {
				var oe *Error
				if err == nil || !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("Resolve(%q) = %+v, %v; want an *Error containing %q", p, got, err, tc.bad)
				}
				return
			}
			want := p
			if tc.real != "" {
				want = filepath.Join(dir, tc.real)
			}
			if err != nil || got.How != tc.how || got.Path != want {
				t.Fatalf("Resolve(%q) = %+v, %v; want how %d path %s", p, got, err, tc.how, want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "null")); err == nil {
		if got, err := Resolve(filepath.Join(dir, "null")); err != nil || got.How != Through {
			t.Errorf("character device: %+v, %v; want Through", got, err)
		}
	}
}

// Write replaces regular files by rename (a link stays a link, its target
// is replaced), writes devices and FIFOs in place, and leaves an existing
// file as it was when the writer fails.
func TestWrite(t *testing.T) {
	dir := tree(t)
	p := func(n string) string { return filepath.Join(dir, n) }
	ino := func(n string) uint64 {
		st, err := os.Lstat(p(n))
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	linkIno := ino("link")
	if err := WriteFile(p("link"), []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p("file")); string(b) != "new\n" || ino("link") != linkIno {
		t.Errorf("through a link: target %q, link inode changed %v", b, ino("link") != linkIno)
	}
	if st, _ := os.Lstat(p("link")); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}

	// A FIFO: written through, not replaced.
	fifoIno := ino("fifo")
	got := make(chan []byte)
	go func() {
		f, err := os.Open(p("fifo"))
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if err := WriteFile(p("fifo"), []byte("streamed\n")); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "streamed\n" || ino("fifo") != fifoIno {
		t.Errorf("fifo read %q; inode kept %v", b, ino("fifo") == fifoIno)
	}

	// A device (root): written through, still a device.
	if st, err := os.Stat(p("null")); err == nil {
		if err := WriteFile(p("null"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if st2, _ := os.Stat(p("null")); st2.Mode()&os.ModeCharDevice == 0 || st2.Mode() != st.Mode() {
			t.Errorf("device after a write: %v", st2.Mode())
		}
	}

	// Standard output.
	var buf bytes.Buffer
	if err := (Options{Stdout: &buf}).WriteFile("-", []byte("out\n")); err != nil || buf.String() != "out\n" {
		t.Errorf("stdout: %q, %v", buf.String(), err)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}

	// A failing writer leaves the old file and no temporary.
	before, _ := os.ReadDir(dir)
	boom := errors.New("boom")
	if err := Write(p("file"), func(w io.Writer) error { w.Write([]byte("part")); return boom }); err != boom {
		t.Errorf("failing writer: %v, want its error as it is", err)
	}
	if b, _ := os.ReadFile(p("file")); string(b) != "new\n" {
		t.Errorf("failed write changed the file to %q", b)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("failed write left %d entries, had %d", len(after), len(before))
	}

	// Mode of a new file.
	if err := (Options{Mode: 0o600}).WriteFile(p("secret"), nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p("secret")); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}

	// Volatile: replaced whole, without syncs, and no temporary left.
	before, _ = os.ReadDir(dir)
	for _, data := range []string{"one\n", "two\n"} {
		if err := (Options{Mode: 0o600, Volatile: true}).WriteFile(p("secret"), []byte(data)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p("secret")); string(b) != data {
			t.Errorf("volatile write: %q, want %q", b, data)
		}
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("volatile writes left %d entries, had %d", len(after), len(before))
	}
	if st, _ := os.Stat(p("secret")); st.Mode().Perm() != 0o600 {
		t.Errorf("volatile write: mode %v, want 0600", st.Mode().Perm())
	}
}

func TestDistinct(t *testing.T) {
	dir := tree(t)
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	os.Link("file", "hard")
	for _, tc := range []struct {
		a, b string
		bad  bool
	}{
		{"x", "y", false},
		{"x", "./x", true},
		{"x", "sub/../x", true},
		{"x", filepath.Join(dir, "x"), true},
		{"file", "link", true},
		{"file", "hard", true},
		{"-", "-", true},
		{"-", "x", false},
		{"", "", false},
		{"sub/a", "sub/b", false},
	} {
		err := Distinct([2]string{"--out", tc.a}, [2]string{"--json", tc.b})
		var oe *Error
		if tc.bad != (err != nil) || (err != nil && !errors.As(err, &oe)) {
			t.Errorf("Distinct(%q, %q) = %v; want bad %v", tc.a, tc.b, err, tc.bad)
		}
	}
}

func TestCheckLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := Check(filepath.Join(dir, "out")); err != nil {
		t.Errorf("writable path refused: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Check left %d files behind", len(entries))
	}
}
