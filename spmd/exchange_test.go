package spmd

import (
	"fmt"
	"testing"

	"github.com/pkg/errors"
)

// Exchange hands every rank the payloads in rank order, or the lowest
// failing rank's error: its own on that rank, a PeerError naming it on
// the others.
func TestExchange(t *testing.T) {
	for _, c := range []struct {
		name   string
		size   int
		failed []int
	}{
		{"none fails", 3, nil},
		{"one fails", 3, []int{1}},
		{"two fail, the lower is named", 4, []int{3, 2}},
		{"alone", 1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := RunLocal(c.size, func(rt Runtime) error {
				comm := rt.World()
				me := comm.Rank()
				var mine error
				for _, r := range c.failed {
					if r == me {
						mine = errors.Errorf("boom on %d", me)
					}
				}
				all, err := Exchange(comm, mine, []byte(fmt.Sprint("p", me)))
				if len(c.failed) == 0 {
					if err != nil || len(all) != c.size {
						return errors.Errorf("rank %d: %d payloads, %v", me, len(all), err)
					}
					for r, p := range all {
						if string(p) != fmt.Sprint("p", r) {
							return errors.Errorf("rank %d: payload %d is %q", me, r, p)
						}
					}
					return nil
				}
				low := min(c.failed[0], c.failed[len(c.failed)-1])
				var pe *PeerError
				switch {
				case me == low && err != mine:
					return errors.Errorf("rank %d: %v, want its own error", me, err)
				case me != low && (!errors.As(err, &pe) || pe.Rank != low || pe.Msg != fmt.Sprint("boom on ", low)):
					return errors.Errorf("rank %d: %v, want rank %d's error", me, err, low)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
