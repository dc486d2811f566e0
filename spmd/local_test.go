package spmd

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pkg/errors"
)

func TestLocalCollectives(t *testing.T) {
	for _, roles := range []Roles{{1, 1}, {2, 1}, {3, 2}, {4, 4}} {
		t.Run(roles.String(), func(t *testing.T) {
			err := RunLocal(roles.Size(), func(rt Runtime) error {
				for range 3 { // reuse of the rendezvous across rounds
					if err := exerciseComm(rt, roles); err != nil {
						return err
					}
				}
				return rt.Finalize()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLocalRolesMismatch(t *testing.T) {
	err := RunLocal(4, func(rt Runtime) error {
		_, err := NewWorld(rt, Roles{CN: 2, MN: 3})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "adds up to 5 ranks but the job has 4") {
		t.Fatalf("got %v", err)
	}
}

// One rank failing must release every rank blocked in a collective.
func TestLocalAbortReleasesBlockedRanks(t *testing.T) {
	var aborted atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- RunLocal(4, func(rt Runtime) error {
			if rt.World().Rank() == 2 {
				return errors.New("disk on fire")
			}
			err := rt.World().Barrier()
			if errors.Is(err, ErrAborted) {
				aborted.Add(1)
			}
			return err
		})
	}()
	select {
	case err := <-done:
		var re *RankError
		if !errors.As(err, &re) || re.Rank != 2 || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("want rank 2's error first, got %v", err)
		}
		if aborted.Load() != 3 {
			t.Fatalf("%d ranks saw ErrAborted, want 3", aborted.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ranks still blocked 10 s after another rank failed")
	}
}

func TestLocalPanicBecomesError(t *testing.T) {
	err := RunLocal(2, func(rt Runtime) error {
		if rt.World().Rank() == 1 {
			var m map[string]int
			m["x"] = 1
		}
		return rt.World().Barrier()
	})
	if err == nil || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("got %v", err)
	}
}

// Ranks in different collectives get an error on every rank, never a
// panic or a hang, and the job is aborted.
func TestLocalMismatch(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	err := RunLocal(3, func(rt Runtime) error {
		c := rt.World()
		var err error
		switch c.Rank() {
		case 0:
			_, err = c.AllGather([]byte("x"))
		case 1:
			err = c.AllReduceFloat64([]float64{1}, Sum)
		default:
			err = c.Barrier()
		}
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		if err == nil {
			return nil
		}
		// The job is aborted: a later collective does not wait.
		return c.Barrier()
	})
	if err == nil {
		t.Fatal("RunLocal returned nil")
	}
	reports := 0
	for _, e := range errs {
		var mm *MismatchError
		if !errors.As(e, &mm) {
			t.Fatalf("rank error %v; want a *MismatchError", e)
		}
		if mm.Report() {
			reports++
		}
		want := "rank 0 in AllGather, rank 1 in AllReduceFloat64 sum, rank 2 in Barrier"
		if !strings.Contains(mm.Error(), want) {
			t.Errorf("%v; want it to contain %q", mm, want)
		}
	}
	if len(errs) != 3 || reports != 1 {
		t.Errorf("%d errors, %d reports; want 3 and 1", len(errs), reports)
	}
}

// A round that completed is read by every rank even if a rank that read
// it first aborted the job at once.
func TestLocalRoundBeforeAbort(t *testing.T) {
	for range 50 {
		var mu sync.Mutex
		aborted := 0
		_ = RunLocal(4, func(rt Runtime) error {
			v := []float64{float64(rt.World().Rank())}
			err := rt.World().AllReduceFloat64(v, Sum)
			if err != nil {
				mu.Lock()
				aborted++
				mu.Unlock()
				return err
			}
			return errors.New("done") // RunLocal aborts the job at the first
		})
		if aborted > 0 {
			t.Fatalf("%d ranks lost a completed round to an abort", aborted)
		}
	}
}
