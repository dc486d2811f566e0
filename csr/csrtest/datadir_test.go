package csrtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// recorder is a testing.TB that records Skip/Fatal instead of acting.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; runtime.Goexit() }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }

func call(t *testing.T) (dir string, r *recorder) {
	r = &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		dir = DataDir(r)
	}()
	<-done
	return dir, r
}

func TestDataDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv(EnvDataDir, tmp)
	if d, r := call(t); d != tmp || r.failed || r.skipped {
		t.Errorf("set and present: %q %+v", d, r)
	}
	t.Setenv(EnvDataDir, filepath.Join(tmp, "missing"))
	if _, r := call(t); !r.failed {
		t.Errorf("set and missing: not a failure")
	}
	os.Unsetenv(EnvDataDir)
	d, r := call(t)
	if r.failed {
		t.Errorf("unset: failed")
	}
	if !r.skipped && filepath.Base(d) != "data" {
		t.Errorf("unset: %q", d)
	}
}
