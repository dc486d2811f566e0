package pool

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// A run's checkpoint in the catalogue: a Checkpoint slot whose Aux
// extent is the region (checkpoint.go) and whose lease word is the run's
// holder id. The run is running while a live Job slot has that lease (its
// hold on the graph, renewed by its keeper); when that slot dies with its
// run, the checkpoint is unfinished, and a later run of the same graph,
// kernel and parameters may resume it, taking its lease.

// CkptKey names what a checkpoint computes: a graph, a kernel and a hash
// of the kernel's parameters.
type CkptKey struct {
	Graph  string
	Kernel string
	Params uint64
}

func (k CkptKey) String() string {
	return fmt.Sprintf("%s on graph %q (parameters %#x)", k.Kernel, k.Graph, k.Params)
}

func (k CkptKey) of(s *Slot) bool {
	return s.State == Checkpoint && s.Name == k.Graph && s.Kernel == k.Kernel && s.Params == k.Params
}

// RunningError is a checkpoint whose run is still alive.
type RunningError struct {
	Key CkptKey
	Run Reader
}

func (e *RunningError) Error() string {
	return fmt.Sprintf("the run of %s is still running (job %#x, last heartbeat %.1fs ago); a run is resumed after it ends (a killed run's lease expires %v after its last heartbeat)",
		e.Key, e.Run.Job, e.Run.Age.Seconds(), StaleAfter)
}

// runOf finds the live run that holds a checkpoint slot: the live Job
// slot with its lease.
func runOf(s *Slot, slots []Slot, now time.Time) (Reader, bool) {
	if s.Lease == 0 {
		return Reader{}, false
	}
	for i := range slots {
		j := &slots[i]
		if j.State == Job && j.Lease == s.Lease && !dead(j, now) {
			return Reader{Job: j.Lease, Age: age(now, j.Beat)}, true
		}
	}
	return Reader{}, false
}

// NewCheckpoint claims a checkpoint slot and a region for a run of key
// over n vertices on cns compute nodes, whose holder id is this client's
// (it must hold a Job slot of its own, or the checkpoint is taken for a
// dead run's). An unfinished checkpoint of the same key is freed first:
// the run starts that computation over. It takes the catalogue lock.
func (c *Client) NewCheckpoint(key CkptKey, n uint64, cns int) (int, Slot, error) {
	if err := c.Lock(2 * StaleAfter); err != nil {
		return -1, Slot{}, err
	}
	defer c.Unlock()
	slots, err := c.Slots()
	if err != nil {
		return -1, Slot{}, err
	}
	now := c.now()
	for i := range slots {
		if s := &slots[i]; key.of(s) {
			if _, alive := runOf(s, slots, now); !alive {
				if err := c.Drop(i); err != nil {
					return -1, Slot{}, err
				}
			}
		}
	}
	region, err := c.AllocAux(CkptRegionBytes(n))
	if err != nil {
		return -1, Slot{}, errors.WithMessage(err, "pool: a checkpoint region")
	}
	// No header of an earlier user of the extent survives into this one.
	zero := make([]byte, 2*CkptHeaderBytes)
	a, err := region.Addr()
	if err == nil {
		err = c.ep.Write(a, zero)
	}
	if err != nil {
		return -1, Slot{}, errors.Wrap(err, "pool: queueing the checkpoint headers' reset")
	}
	if err := c.flush("resetting the checkpoint headers"); err != nil {
		return -1, Slot{}, err
	}
	i, err := c.FreeSlot()
	if err != nil {
		return -1, Slot{}, err
	}
	ms := unixMS(now)
	s := Slot{State: Checkpoint, Lease: c.id, Beat: ms, Created: ms, Name: key.Graph, Graph: -1, CNs: cns,
		Vertices: n, Aux: region, Kernel: key.Kernel, Params: key.Params}
	return i, s, c.Put(i, s)
}

// ResumeCheckpoint takes over the most recent unfinished checkpoint of
// key (found false: there is none) for a run of cns compute nodes. A
// checkpoint whose run is still alive is waited for, up to wait (a
// killed run's Job slot dies StaleAfter after its last heartbeat), then
// reported as a *RunningError. It takes the catalogue lock.
func (c *Client) ResumeCheckpoint(key CkptKey, cns int, wait time.Duration) (i int, s Slot, found bool, err error) {
	start := time.Now()
	for {
		var busy *RunningError
		i, s, busy, err = c.resume(key, cns)
		switch {
		case err != nil:
			return -1, Slot{}, false, err
		case i >= 0:
			return i, s, true, nil
		case busy == nil:
			return -1, Slot{}, false, nil
		case time.Since(start) >= wait:
			return -1, Slot{}, false, busy
		}
		c.sleep(BeatEvery)
	}
}

// resume is one try of ResumeCheckpoint under the catalogue lock.
func (c *Client) resume(key CkptKey, cns int) (int, Slot, *RunningError, error) {
	if err := c.Lock(2 * StaleAfter); err != nil {
		return -1, Slot{}, nil, err
	}
	defer c.Unlock()
	slots, err := c.Slots()
	if err != nil {
		return -1, Slot{}, nil, err
	}
	now := c.now()
	best := -1
	var busy *RunningError
	for i := range slots {
		s := &slots[i]
		if !key.of(s) {
			continue
		}
		if r, alive := runOf(s, slots, now); alive {
			busy = &RunningError{Key: key, Run: r}
			continue
		}
		if best < 0 || s.Created > slots[best].Created {
			best = i
		}
	}
	if best < 0 {
		return -1, Slot{}, busy, nil
	}
	s := slots[best]
	s.Lease, s.CNs = c.id, cns
	return best, s, nil, c.Put(best, s)
}

// EndCheckpoint frees checkpoint slot i, whose run (this client's)
// finished. A slot another run has taken over is left to it.
func (c *Client) EndCheckpoint(i int) error {
	if err := c.checkSlot(i); err != nil {
		return err
	}
	if err := c.Lock(2 * StaleAfter); err != nil {
		return err
	}
	defer c.Unlock()
	w, err := c.readWords("the checkpoint's lease", SlotAddr(i)+OffState, SlotAddr(i)+OffLease)
	if err != nil {
		return err
	}
	if State(w[0]) != Checkpoint || w[1] != c.id {
		return errors.Errorf("pool: the checkpoint in slot %d is no longer this run's (state %s, lease %#x); another run resumed it while this one seemed dead", i, State(w[0]), w[1])
	}
	return c.Drop(i)
}

// Checkpoints returns the checkpoint slots of graph name.
func (c *Client) Checkpoints(name string) ([]int, error) {
	var out []int
	err := c.each(func(i int, s *Slot, _ time.Time) {
		if s.State == Checkpoint && s.Name == name {
			out = append(out, i)
		}
	})
	return out, err
}

// Running says whether checkpoint slot i of slots (read together) has a
// live run, and which.
func Running(slots []Slot, i int, now time.Time) (Reader, bool) {
	return runOf(&slots[i], slots, now)
}

// CheckCkptLease fails unless holder id still holds checkpoint slot i
// (a run about to write its checkpoint, on its own endpoint ep).
func CheckCkptLease(ep verbs.Endpoint, i int, id uint64) error {
	var b [8]byte
	if err := ep.Read(b[:], SlotAddr(i)+OffLease); err != nil {
		return errors.Wrapf(err, "pool: queueing a read of checkpoint slot %d's lease", i)
	}
	if err := ep.Flush(); err != nil {
		return errors.Wrapf(err, "pool: reading checkpoint slot %d's lease", i)
	}
	if h := binary.LittleEndian.Uint64(b[:]); h != id {
		return errors.Errorf("pool: the checkpoint in slot %d is held by %#x, not by this run (%#x): another run resumed it while this one seemed dead", i, h, id)
	}
	return nil
}

// CommitCkpt makes h the current checkpoint of slot i, whose region is
// region: its header first, then the slot's Done and Beat words (what
// dmg ls shows), over ep.
func CommitCkpt(ep verbs.Endpoint, i int, region Extent, h CkptHeader, now time.Time) error {
	b, err := h.Encode()
	if err != nil {
		return err
	}
	slot := h.Buffer() // epoch e's header is e mod 2, as its buffers
	a, err := verbs.MakeAddr(region.MN, region.Off+CkptHeaderOff(slot))
	if err == nil {
		err = ep.Write(a, b)
	}
	if err == nil {
		err = ep.Flush()
	}
	if err != nil {
		return errors.Wrapf(err, "pool: writing checkpoint header %d of slot %d", slot, i)
	}
	var w [16]byte
	binary.LittleEndian.PutUint64(w[:], h.Iteration)
	binary.LittleEndian.PutUint64(w[8:], unixMS(now))
	if err := ep.Write(SlotAddr(i)+OffDone, w[:8]); err != nil {
		return errors.Wrapf(err, "pool: queueing checkpoint slot %d's iteration", i)
	}
	if err := ep.Write(SlotAddr(i)+OffBeat, w[8:]); err != nil {
		return errors.Wrapf(err, "pool: queueing checkpoint slot %d's time", i)
	}
	return errors.Wrapf(ep.Flush(), "pool: recording checkpoint slot %d's iteration", i)
}
