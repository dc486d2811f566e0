package spmd

import (
	"strings"
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
