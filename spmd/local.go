package spmd

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/pkg/errors"
)

// group is the shared state of one in-process communicator: a reusable
// rendezvous where every member deposits a value and reads all of them.
type group struct {
	job   *localJob
	size  int
	mu    sync.Mutex
	cond  *sync.Cond
	slots []any
	in    int    // ranks that deposited in the current round
	out   int    // ranks that have read the current round
	gen   uint64 // round number
	subMu sync.Mutex
	subs  map[uint64]map[int]*group // split round → color → group
}

func newGroup(job *localJob, size int) *group {
	g := &group{job: job, size: size, slots: make([]any, size), subs: map[uint64]map[int]*group{}}
	g.cond = sync.NewCond(&g.mu)
	job.register(g)
	return g
}

// exchange deposits v for rank and returns everyone's values for the round.
func (g *group) exchange(rank int, v any) ([]any, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Wait until the previous round has been read by everyone.
	for g.out != 0 && !g.job.aborted() {
		g.cond.Wait()
	}
	if g.job.aborted() {
		return nil, ErrAborted
	}
	gen := g.gen
	g.slots[rank] = v
	g.in++
	if g.in == g.size {
		g.gen++
		g.cond.Broadcast()
	}
	for g.gen == gen && !g.job.aborted() {
		g.cond.Wait()
	}
	if g.gen == gen {
		// Aborted before the round completed. A round that completed is
		// read even if a peer, done with it, aborted the job since: as
		// under MPI, every rank then leaves the collective with its result
		// (else each would report the failure the ranks agreed on).
		return nil, ErrAborted
	}
	all := make([]any, g.size)
	copy(all, g.slots)
	g.out++
	if g.out == g.size {
		g.in, g.out = 0, 0
		for i := range g.slots {
			g.slots[i] = nil
		}
		g.cond.Broadcast()
	}
	return all, nil
}

type localJob struct {
	mu     sync.Mutex
	abort  bool
	code   int
	groups []*group
}

func (j *localJob) register(g *group) {
	j.mu.Lock()
	j.groups = append(j.groups, g)
	j.mu.Unlock()
}

func (j *localJob) aborted() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.abort
}

func (j *localJob) doAbort(code int) {
	j.mu.Lock()
	if !j.abort {
		j.abort, j.code = true, code
	}
	gs := append([]*group(nil), j.groups...)
	j.mu.Unlock()
	for _, g := range gs {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// localComm is one rank's handle on an in-process group.
type localComm struct {
	g     *group
	rank  int
	round uint64 // collectives this rank has entered on g, for Split
}

var _ Comm = (*localComm)(nil)

func (c *localComm) Rank() int { return c.rank }
func (c *localComm) Size() int { return c.g.size }

func (c *localComm) Barrier() error {
	c.round++
	_, err := c.g.exchange(c.rank, nil)
	return err
}

func (c *localComm) AllGather(blob []byte) ([][]byte, error) {
	c.round++
	all, err := c.g.exchange(c.rank, append([]byte(nil), blob...))
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(all))
	for i, v := range all {
		out[i] = append([]byte{}, v.([]byte)...)
	}
	return out, nil
}

func (c *localComm) Bcast(root int, blob []byte) ([]byte, error) {
	if root < 0 || root >= c.g.size {
		return nil, errors.Errorf("spmd: bcast root %d out of range [0,%d)", root, c.g.size)
	}
	all, err := c.AllGather(blob)
	if err != nil {
		return nil, err
	}
	return all[root], nil
}

func (c *localComm) AllReduceInt64(vals []int64, op Op) error {
	c.round++
	all, err := c.g.exchange(c.rank, append([]int64(nil), vals...))
	if err != nil {
		return err
	}
	for r, v := range all {
		other := v.([]int64)
		if len(other) != len(vals) {
			return errors.Errorf("spmd: allreduce length %d on rank %d but %d on rank %d", len(vals), c.rank, len(other), r)
		}
	}
	for i := range vals {
		acc := all[0].([]int64)[i]
		for _, v := range all[1:] {
			x := v.([]int64)[i]
			switch op {
			case Sum:
				acc += x
			case Min:
				acc = min(acc, x)
			case Max:
				acc = max(acc, x)
			}
		}
		vals[i] = acc
	}
	return nil
}

func (c *localComm) AllReduceFloat64(vals []float64, op Op) error {
	c.round++
	all, err := c.g.exchange(c.rank, append([]float64(nil), vals...))
	if err != nil {
		return err
	}
	for r, v := range all {
		if len(v.([]float64)) != len(vals) {
			return errors.Errorf("spmd: allreduce length %d on rank %d but %d on rank %d", len(vals), c.rank, len(v.([]float64)), r)
		}
	}
	for i := range vals {
		// Reduce in rank order so every rank gets the same bits.
		acc := all[0].([]float64)[i]
		for _, v := range all[1:] {
			x := v.([]float64)[i]
			switch op {
			case Sum:
				acc += x
			case Min:
				acc = math.Min(acc, x)
			case Max:
				acc = math.Max(acc, x)
			}
		}
		vals[i] = acc
	}
	return nil
}

func (c *localComm) Split(color int) (Comm, error) {
	c.round++
	round := c.round
	all, err := c.g.exchange(c.rank, color)
	if err != nil {
		return nil, err
	}
	var members []int
	for r, v := range all {
		if v.(int) == color {
			members = append(members, r)
		}
	}
	sort.Ints(members)
	c.g.subMu.Lock()
	byColor, ok := c.g.subs[round]
	if !ok {
		byColor = map[int]*group{}
		c.g.subs[round] = byColor
	}
	sub, ok := byColor[color]
	if !ok {
		sub = newGroup(c.g.job, len(members))
		byColor[color] = sub
	}
	c.g.subMu.Unlock()
	return &localComm{g: sub, rank: sort.SearchInts(members, c.rank)}, nil
}

// localRuntime is one rank of an in-process job.
type localRuntime struct {
	job   *localJob
	world *localComm
}

func (r *localRuntime) World() Comm     { return r.world }
func (r *localRuntime) Abort(code int)  { r.job.doAbort(code) }
func (r *localRuntime) Finalize() error { return r.world.Barrier() }
func (r *localRuntime) Library() string { return "in-process (goroutines)" }
func (r *localRuntime) String() string  { return fmt.Sprintf("local rank %d", r.world.rank) }

// NewLocal creates the runtimes of an n-rank in-process job; give each to
// its own goroutine.
func NewLocal(n int) ([]Runtime, error) {
	if n < 1 {
		return nil, errors.Errorf("spmd: local job needs at least 1 rank, got %d", n)
	}
	job := &localJob{}
	g := newGroup(job, n)
	rts := make([]Runtime, n)
	for i := range rts {
		rts[i] = &localRuntime{job: job, world: &localComm{g: g, rank: i}}
	}
	return rts, nil
}

// RankError is an error that happened on one rank of a job.
type RankError struct {
	Rank int
	Err  error
}

func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }
func (e *RankError) Unwrap() error { return e.Err }
func (e *RankError) Cause() error  { return e.Err }

// RunLocal runs fn as an n-rank in-process job, one goroutine per rank. The
// first rank to fail aborts the job, so ranks blocked in collectives return
// ErrAborted; RunLocal returns that first failure (as *RankError), or nil.
func RunLocal(n int, fn func(rt Runtime) error) error {
	rts, err := NewLocal(n)
	if err != nil {
		return err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first *RankError
	)
	for i, rt := range rts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						err = errors.Errorf("panic: %v", p)
					}
				}()
				err = fn(rt)
			}()
			if err == nil {
				return
			}
			mu.Lock()
			if first == nil || (errors.Is(first.Err, ErrAborted) && !errors.Is(err, ErrAborted)) {
				first = &RankError{Rank: i, Err: err}
			}
			mu.Unlock()
			rt.Abort(2)
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return nil
}
