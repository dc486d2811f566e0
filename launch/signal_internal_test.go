package launch

import (
	"io"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Progress lines stop for a while after a SIGCONT (Open MPI's first step
// in ending a job), so that the line saying why it ends fits the pipe.
func TestQuietAfterSIGCONT(t *testing.T) {
	in := newInterrupt(io.Discard, &sync.Mutex{}, time.Now(), true)
	defer in.stop()
	if in.quiet() {
		t.Fatal("quiet before any SIGCONT")
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !in.quiet(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not quiet 5 s after a SIGCONT")
		}
	}
	in.continued.Store(time.Now().Add(-contQuiet).UnixNano())
	if in.quiet() {
		t.Errorf("still quiet %v after a SIGCONT", contQuiet)
	}
	var nilIn *interrupt
	if nilIn.quiet() {
		t.Error("a nil interrupt is quiet")
	}
}
