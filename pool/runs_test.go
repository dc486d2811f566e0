package pool

import (
	"testing"
	"time"

	"github.com/pkg/errors"
)

// Which checkpoint a resume takes: the newest of its graph, kernel and
// parameters whose run is gone; a live run's is waited for, then named.
func TestResumeCheckpoint(t *testing.T) {
	withGraph(t, func(a, b *Client) error {
		key := CkptKey{Graph: "g", Kernel: "pr", Params: 7}
		stale := uint64(time.Now().Add(-2 * StaleAfter).UnixMilli())
		const gone, alive = 0xdead, 0xa11e
		ck := func(lease, created uint64, k CkptKey) Slot {
			return Slot{State: Checkpoint, Lease: lease, Created: created, Name: k.Graph, Kernel: k.Kernel, Params: k.Params, Graph: -1, Done: 3}
		}
		run := Slot{State: Job, Lease: alive, Beat: nowMS(), Name: "g", Graph: 3}
		for _, c := range []struct {
			name  string
			slots map[int]Slot
			want  int  // the slot resumed, -1 none
			busy  bool // a *RunningError
		}{
			{"none", nil, -1, false},
			{"another kernel", map[int]Slot{5: ck(gone, 1, CkptKey{"g", "bfs", 7})}, -1, false},
			{"other parameters", map[int]Slot{5: ck(gone, 1, CkptKey{"g", "pr", 8})}, -1, false},
			{"another graph", map[int]Slot{5: ck(gone, 1, CkptKey{"h", "pr", 7})}, -1, false},
			{"unfinished", map[int]Slot{5: ck(gone, 1, key)}, 5, false},
			{"the newest", map[int]Slot{5: ck(gone, 1, key), 6: ck(gone+1, 2, key)}, 6, false},
			{"its run alive", map[int]Slot{5: ck(alive, 1, key), 9: run}, -1, true},
			{"its run's slot stale", map[int]Slot{5: ck(alive, 1, key), 9: {State: Job, Lease: alive, Beat: stale, Name: "g", Graph: 3}}, 5, false},
			{"its run gave its lease up", map[int]Slot{5: ck(alive, 1, key), 9: {State: Job, Name: "g", Graph: 3}}, 5, false},
			{"a live one beside", map[int]Slot{5: ck(alive, 2, key), 6: ck(gone, 1, key), 9: run}, 6, false},
		} {
			for i, s := range c.slots {
				if err := a.Put(i, s); err != nil {
					return err
				}
			}
			i, s, found, err := b.ResumeCheckpoint(key, 2, 0)
			var busy *RunningError
			if errors.As(err, &busy) != c.busy || (err != nil && !c.busy) || found != (c.want >= 0) || i != c.want {
				return errors.Errorf("%s: ResumeCheckpoint = %d, found %v, %v; want %d (a live run named: %v)", c.name, i, found, err, c.want, c.busy)
			}
			if found {
				// The resumer now holds it, with its count; it is running
				// once the resumer holds a Job slot.
				slots, err := a.Slots()
				if err != nil {
					return err
				}
				if slots[i].Lease != b.ID() || slots[i].CNs != 2 || s.Lease != b.ID() || slots[i].Done != 3 {
					return errors.Errorf("%s: slot %d after the resume: %+v", c.name, i, slots[i])
				}
			}
			if c.busy && busy.Run.Job != alive {
				return errors.Errorf("%s: named job %#x, want %#x", c.name, busy.Run.Job, alive)
			}
			for i := range c.slots {
				if err := a.Drop(i); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// A new checkpoint replaces its key's unfinished ones, not a live run's
// nor another key's; it outlives its run (Reclaim leaves it) until the
// run ends it or a drop of its graph.
func TestNewCheckpoint(t *testing.T) {
	withGraph(t, func(a, b *Client) error {
		key := CkptKey{Graph: "g", Kernel: "pr", Params: 7}
		other := CkptKey{Graph: "g", Kernel: "bfs", Params: 7}
		const gone, alive = 0xdead, 0xa11e
		check := []struct {
			i int
			s Slot
		}{
			{5, Slot{State: Checkpoint, Lease: gone, Name: "g", Kernel: "pr", Params: 7, Graph: -1}},
			{6, Slot{State: Checkpoint, Lease: alive, Name: "g", Kernel: "pr", Params: 7, Graph: -1}},
			{7, Slot{State: Job, Lease: alive, Beat: nowMS(), Name: "g", Graph: 3}},
			{8, Slot{State: Checkpoint, Lease: gone, Name: "g", Kernel: "bfs", Params: 7, Graph: -1}},
		}
		for _, c := range check {
			if err := a.Put(c.i, c.s); err != nil {
				return err
			}
		}
		i, s, err := b.NewCheckpoint(key, 1000, 2)
		if err != nil {
			return err
		}
		if s.Aux.Len < CkptRegionBytes(1000) || s.Lease != b.ID() || s.Vertices != 1000 {
			return errors.Errorf("new checkpoint %+v", s)
		}
		slots, err := a.Slots()
		if err != nil {
			return err
		}
		if slots[5].State != Free && i != 5 || slots[6].State != Checkpoint || slots[8].State != Checkpoint {
			return errors.Errorf("after NewCheckpoint in slot %d: slot 5 %s (an unfinished one of its key), 6 %s (a live run's), 8 %s (another kernel's)", i, slots[5].State, slots[6].State, slots[8].State)
		}
		if n, err := a.Reclaim(); err != nil || slots[i].Dead(time.Now()) {
			return errors.Errorf("Reclaim freed %d (%v); the checkpoint dead: %v", n, err, slots[i].Dead(time.Now()))
		}
		if got, err := a.Checkpoints("g"); err != nil || len(got) != 3 {
			return errors.Errorf("Checkpoints(g) = %v, %v; want the new one, slot 6's and slot 8's", got, err)
		}
		if err := a.EndCheckpoint(i); err == nil {
			return errors.New("a run ended another's checkpoint")
		}
		if err := b.EndCheckpoint(i); err != nil {
			return err
		}
		_, _, found, err := b.ResumeCheckpoint(other, 1, 0)
		if err != nil || !found {
			return errors.Errorf("the other kernel's checkpoint: found %v, %v", found, err)
		}
		return nil
	})
}
