package rank

import (
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// State is a run's state at an iteration boundary, one CN's chunk of it:
// what a run needs to continue from there. The engine's other state (its
// accumulators, contributions, the frontier's list form, the policy's
// history) follows from it, as it follows from Init at the start.
type State struct {
	// Done is the number of iterations completed: the run continues with
	// iteration Done.
	Done int
	// Lo is the chunk's first vertex.
	Lo uint32
	// Values are the chunk's values after iteration Done-1.
	Values []uint64
	// Active is the chunk's frontier for iteration Done, a byte per
	// vertex (1: active); nil for a kernel whose every vertex is active.
	Active []byte
}

// Checkpointer keeps a run's state where a later run can read it (a
// served pool's checkpoint region, package job). The engine calls it at
// the boundaries its Cadence chooses, each call behind a boundary of its
// own: Begin on world rank 0, Write on each CN, then, once every CN's
// write is complete, Commit on world rank 0.
type Checkpointer interface {
	// Begin checks that the run may write its checkpoint (that no other
	// run took it over).
	Begin(ep verbs.Endpoint) error
	// Write keeps this CN's chunk of the state over ep and returns the
	// chunk's part of the checksum, which the job sums over its CNs.
	Write(ep verbs.Endpoint, s State) (sum uint64, err error)
	// Commit makes the state of done iterations, whose chunks sum to
	// sum, the run's current one.
	Commit(ep verbs.Endpoint, done int, sum uint64) error
}

// Restorer gives a resumed run the state a Checkpointer kept.
type Restorer interface {
	// Done is the number of iterations the kept state completed.
	Done() int
	// Read reads the chunk [lo, hi) of the state over ep and returns it
	// with the chunk's part of the checksum.
	Read(ep verbs.Endpoint, lo, hi uint32) (s State, sum uint64, err error)
	// Check, on world rank 0, compares the job-wide sum of the chunks'
	// checksums with the one kept: a mismatch is a damaged checkpoint.
	Check(sum uint64) error
}

// Cadence says when a run keeps its state: every Every iterations, or,
// with Every 0, so that checkpoints cost about 1/Ratio of the compute:
// once the compute time since the last checkpoint reaches Ratio times
// what that checkpoint took, and before the first, once the fabric bytes
// the run moved reach Ratio times a checkpoint's bytes.
type Cadence struct {
	Every int
	Ratio float64
}

// AutoRatio is the automatic cadence's ratio: checkpoints cost about
// 2.5% of the compute, under the 5% the design allows.
const AutoRatio = 40

// ckptFacts is what the cadence decides on: numbers every rank has
// alike after an iteration's boundary (the job-wide sums, and the last
// checkpoint's cost as rank 0 measured it and told every rank).
type ckptFacts struct {
	done      int     // iterations completed
	last      int     // iterations the run's last checkpoint had completed
	final     bool    // the run ends here (its last iteration, or no vertex active)
	moved     uint64  // fabric bytes since the last checkpoint, job-wide
	ckptBytes uint64  // a checkpoint's bytes
	spent     float64 // compute seconds since the last checkpoint (the slowest CN's phases)
	cost      float64 // seconds the last checkpoint took (0: none yet)
}

// due says whether the state after f.done iterations is kept: never at
// the run's end (it finishes, and its checkpoint goes with it), nor
// twice at one boundary.
func (c Cadence) due(f ckptFacts) bool {
	switch {
	case f.final || f.done <= f.last:
		return false
	case c.Every > 0:
		return f.done%c.Every == 0
	}
	ratio := c.Ratio
	if ratio <= 0 {
		ratio = AutoRatio
	}
	if f.cost > 0 {
		return f.spent >= ratio*f.cost
	}
	return float64(f.moved) >= ratio*float64(f.ckptBytes)
}

// ckptState is the engine's record of its checkpoints.
type ckptState struct {
	last  int     // iterations completed at the last checkpoint (or at the start)
	bytes uint64  // job-wide fabric bytes then
	spent float64 // compute seconds since
	cost  float64 // the last checkpoint's seconds, as rank 0 measured them
	count int     // checkpoints written
	secs  float64
}

// ckptBytes is what one checkpoint writes, job-wide.
func (e *engine) ckptBytes() uint64 {
	n := uint64(e.st.N())
	if e.spec.AllActive {
		return 8 * n
	}
	return 9 * n
}

// checkpoint keeps the run's state after done iterations when the
// cadence says so. Each step is behind a boundary of its own: rank 0
// checks the run still holds its checkpoint, every CN writes its chunk,
// their checksums are summed (and every write is then complete), and
// rank 0 commits, telling every rank what the checkpoint cost.
func (e *engine) checkpoint(done int, next sums, res *Result) error {
	ck := e.cfg.Checkpoint
	if ck == nil {
		return nil
	}
	e.ckpt.spent += next.push + next.apply + next.wait
	f := ckptFacts{done: done, last: e.ckpt.last, moved: next.verbs.Bytes() - e.ckpt.bytes, ckptBytes: e.ckptBytes(),
		spent: e.ckpt.spent, cost: e.ckpt.cost,
		final: e.spec.Iterations > 0 && done >= e.spec.Iterations || e.spec.Iterations == 0 && next.activeV == 0}
	if !e.cfg.Cadence.due(f) {
		return nil
	}
	t := time.Now()
	var err error
	if e.w.Rank() == 0 {
		err = ck.Begin(e.wks[0].ep)
	}
	if err := e.cfg.Sync(err, nil); err != nil {
		return err
	}
	var sum uint64
	if e.cn {
		sum, err = ck.Write(e.wks[0].ep, e.state(done))
	}
	v := splitSum(sum)
	if err := e.cfg.Sync(err, v[:]); err != nil {
		return err
	}
	cost := []float64{0}
	if e.w.Rank() == 0 {
		err = ck.Commit(e.wks[0].ep, done, joinSum(v))
		cost[0] = time.Since(t).Seconds()
	}
	if err := e.cfg.Sync(err, cost); err != nil {
		return err
	}
	e.ckpt = ckptState{last: done, bytes: next.verbs.Bytes(), cost: cost[0], count: e.ckpt.count + 1, secs: e.ckpt.secs + time.Since(t).Seconds()}
	res.Checkpoints, res.CheckpointSeconds = e.ckpt.count, e.ckpt.secs
	if e.w.Rank() == 0 {
		e.cfg.Logf("checkpoint after iteration %d (%d iterations kept), %.4fs", done-1, done, time.Since(t).Seconds())
	}
	return nil
}

// state is this CN's chunk of the run's state after done iterations: the
// cache's values and the next iteration's frontier.
func (e *engine) state(done int) State {
	s := State{Done: done, Lo: e.lo, Values: e.val}
	if e.spec.AllActive {
		return s
	}
	e.front.asBits()
	s.Active = make([]byte, e.hi-e.lo)
	for i := range s.Active {
		if e.front.bits.has(uint32(i)) {
			s.Active[i] = 1
		}
	}
	return s
}

// startFrom replaces what Init gave the chunk with a kept state's values
// and frontier. A traversal's reached vertices are those whose value is
// no longer Init's, or that Init made active.
func (e *engine) startFrom(s *State, active []bool) error {
	n := int(e.hi - e.lo)
	if s.Lo != e.lo || len(s.Values) != n || s.Active != nil && len(s.Active) != n {
		return errors.Errorf("rank: a kept state of %d values from vertex %d for the chunk [%d, %d)", len(s.Values), s.Lo, e.lo, e.hi)
	}
	if e.spec.Traversal {
		for i, v := range s.Values {
			if active[i] || v != e.val[i] {
				e.reached.set(uint32(i))
			}
		}
	}
	copy(e.val, s.Values)
	for i := range active {
		active[i] = s.Active != nil && s.Active[i] != 0
	}
	return nil
}

// readState reads the CN's chunk of the kept state (Config.Resume) and
// has rank 0 check the job-wide checksum; every rank has read before any
// writes (Run's first boundary follows).
func (e *engine) readState(eps []verbs.Endpoint) error {
	r := e.cfg.Resume
	var sum uint64
	var err error
	if e.cn {
		var s State
		if s, sum, err = r.Read(eps[0], e.lo, e.hi); err == nil {
			e.start = &s
		}
		if _, all := e.mode.(famMode); all && err == nil {
			var whole State // checked by its owners' sums
			whole, _, err = r.Read(eps[0], 0, e.st.N())
			e.startAll = whole.Values
		}
	}
	v := splitSum(sum)
	if err := e.cfg.Sync(err, v[:]); err != nil {
		return err
	}
	if e.w.Rank() == 0 {
		err = r.Check(joinSum(v))
	}
	return e.cfg.Sync(err, nil)
}

// splitSum cuts a 64-bit checksum into four 16-bit parts, which a
// float64 all-reduce over any number of ranks sums exactly (joinSum adds
// them back, modulo 2^64).
func splitSum(s uint64) [4]float64 {
	var v [4]float64
	for i := range v {
		v[i] = float64(s >> (16 * i) & 0xffff)
	}
	return v
}

func joinSum(v [4]float64) uint64 {
	var s uint64
	for i := range v {
		s += uint64(v[i]) << (16 * i)
	}
	return s
}
