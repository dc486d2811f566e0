package rank_test

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// A run that continues from a kept state gives what the uninterrupted
// run gives, on another compute-node count: the engine's whole state at a
// boundary is the values and the next frontier. The states are kept in
// memory here (job's pool region is tested under mpirun, launch).

// kept is one checkpoint: every vertex's value and frontier byte.
type kept struct {
	vals   []uint64
	active []byte
	sum    uint64 // the job-wide sum Commit was given
	parts  uint64 // the sum of the chunks' sums Write returned
}

// memCkpt keeps every checkpoint of a run, by iterations done.
type memCkpt struct {
	mu    sync.Mutex
	n     int
	kept  map[int]*kept
	order []int
}

func chunkSum(lo uint32, vals []uint64, active []byte) uint64 {
	var s uint64
	for i, v := range vals {
		s += (uint64(lo)+uint64(i)+1)*0x9e3779b97f4a7c15 ^ v
		if active != nil {
			s += uint64(active[i]) << 32
		}
	}
	return s
}

func (m *memCkpt) Begin(verbs.Endpoint) error { return nil }

func (m *memCkpt) Write(_ verbs.Endpoint, s rank.State) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.kept[s.Done]
	if k == nil {
		k = &kept{vals: make([]uint64, m.n), active: make([]byte, m.n)}
		m.kept[s.Done] = k
	}
	copy(k.vals[s.Lo:], s.Values)
	if s.Active == nil {
		k.active = nil
	} else {
		copy(k.active[s.Lo:], s.Active)
	}
	sum := chunkSum(s.Lo, s.Values, s.Active)
	k.parts += sum
	return sum, nil
}

func (m *memCkpt) Commit(_ verbs.Endpoint, done int, sum uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.kept[done]
	if k == nil {
		return errors.Errorf("commit of %d iterations, never written", done)
	}
	k.sum = sum
	m.order = append(m.order, done)
	return nil
}

// memResume gives a run one of memCkpt's states.
type memResume struct {
	done    int
	k       *kept
	refused *atomic.Bool // set when Check refuses the sum
}

func (r memResume) Done() int { return r.done }

func (r memResume) Read(_ verbs.Endpoint, lo, hi uint32) (rank.State, uint64, error) {
	s := rank.State{Done: r.done, Lo: lo, Values: append([]uint64(nil), r.k.vals[lo:hi]...)}
	if r.k.active != nil {
		s.Active = append([]byte(nil), r.k.active[lo:hi]...)
	}
	return s, chunkSum(lo, s.Values, s.Active), nil
}

func (r memResume) Check(sum uint64) error {
	if sum != r.k.sum {
		if r.refused != nil {
			r.refused.Store(true)
		}
		return errors.Errorf("checksum %#x, kept %#x", sum, r.k.sum)
	}
	return nil
}

func TestResumeEqualsUninterrupted(t *testing.T) {
	dir := t.TempDir()
	path := randomGraph(t, dir, 3, 300, 1500)
	for _, name := range []string{"pr", "bfs", "sssp", "cdlp", "wcc"} {
		t.Run(name, func(t *testing.T) {
			a, err := algo.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			base := job.Config{Graph: path, Kernel: &a}
			whole := runJob(t, spmd.Roles{CN: 1, MN: 1}, base)
			n := len(whole.Result.Values)
			ck := &memCkpt{n: n, kept: map[int]*kept{}}
			cfg := base
			cfg.Engine.Checkpoint, cfg.Engine.Cadence = ck, rank.Cadence{Every: 1}
			out := runJob(t, spmd.Roles{CN: 2, MN: 2}, cfg)
			iters := len(out.Result.Iterations)
			if iters < 2 {
				t.Fatalf("%d iterations: too few to stop in between", iters)
			}
			// Every boundary but the last was kept, once, in order; the
			// committed sum is the chunks' sums added.
			if len(ck.order) != iters-1 || out.Result.Checkpoints != iters-1 {
				t.Fatalf("checkpoints at %v (%d reported) of %d iterations; want one after each but the last", ck.order, out.Result.Checkpoints, iters)
			}
			for i, d := range ck.order {
				if d != i+1 || ck.kept[d].sum != ck.kept[d].parts {
					t.Fatalf("checkpoint %d: after %d iterations, sum %#x of parts %#x", i, d, ck.kept[d].sum, ck.kept[d].parts)
				}
			}
			same(t, "checkpointed run", a, out.Result.Values, whole.Result.Values)
			for i, done := range []int{1, iters / 2, iters - 1} {
				for _, roles := range []spmd.Roles{{CN: 1, MN: 1}, {CN: 3, MN: 2}} {
					cfg := base
					cfg.Engine.Mode = rank.Modes[i%len(rank.Modes)]
					cfg.Engine.Resume = memResume{done: done, k: ck.kept[done]}
					res := runJob(t, roles, cfg)
					what := fmt.Sprintf("resumed after %d of %d iterations on %s in mode %s", done, iters, roles, cfg.Engine.Mode)
					if res.Result.StartedAt != done {
						t.Fatalf("%s: started at %d", what, res.Result.StartedAt)
					}
					if !a.Symmetric && !isRelax(a) && done+len(res.Result.Iterations) != iters {
						t.Fatalf("%s: ran %d more iterations, want %d", what, len(res.Result.Iterations), iters-done)
					}
					same(t, what, a, res.Result.Values, whole.Result.Values)
				}
			}
			// A damaged checkpoint is refused, never read as values.
			bad := *ck.kept[1]
			bad.vals = append([]uint64(nil), bad.vals...)
			bad.vals[n/2] ^= 1
			cfg = base
			var refused atomic.Bool
			cfg.Engine.Resume = memResume{done: 1, k: &bad, refused: &refused}
			if _, err := tryJob(spmd.Roles{CN: 2, MN: 1}, cfg); err == nil || !refused.Load() {
				t.Fatalf("a checkpoint with one value changed: %v (refused by its checksum: %v)", err, refused.Load())
			}
		})
	}
}

// isRelax says whether a kernel's iteration count depends on how its
// vertices are split (Gauss–Seidel within a CN).
func isRelax(a algo.Algorithm) bool { return a.New(algo.Params{}).Spec().Relax }

// same compares values: bit for bit, PageRank's within 1e-12 relative.
func same(t *testing.T, what string, a algo.Algorithm, got, want []uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	float := a.New(algo.Params{}).Spec().Float
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		x, y := math.Float64frombits(got[i]), math.Float64frombits(want[i])
		if float && math.Abs(x-y) <= 1e-12*math.Abs(y) {
			continue
		}
		t.Fatalf("%s: vertex %d has %#x, the uninterrupted run %#x", what, i, got[i], want[i])
	}
}

func TestCadence(t *testing.T) {
	for _, c := range []struct {
		name    string
		cadence rank.Cadence
		facts   rank.CkptFacts
		want    bool
	}{
		{"every 1", rank.Cadence{Every: 1}, rank.CkptFacts{Done: 1}, true},
		{"every 3, at 3", rank.Cadence{Every: 3}, rank.CkptFacts{Done: 3}, true},
		{"every 3, at 4", rank.Cadence{Every: 3}, rank.CkptFacts{Done: 4, Last: 3}, false},
		{"never at the end", rank.Cadence{Every: 1}, rank.CkptFacts{Done: 5, Final: true}, false},
		{"not where it resumed", rank.Cadence{Every: 1}, rank.CkptFacts{Done: 4, Last: 4}, false},
		{"auto, little moved", rank.Cadence{}, rank.CkptFacts{Done: 2, Moved: 39 << 20, CkptBytes: 1 << 20}, false},
		{"auto, enough moved", rank.Cadence{}, rank.CkptFacts{Done: 2, Moved: 40 << 20, CkptBytes: 1 << 20}, true},
		{"ratio 10", rank.Cadence{Ratio: 10}, rank.CkptFacts{Done: 2, Moved: 10 << 20, CkptBytes: 1 << 20}, true},
		{"auto at the end", rank.Cadence{}, rank.CkptFacts{Done: 9, Moved: 1 << 40, CkptBytes: 1, Final: true}, false},
		{"auto, measured: too soon", rank.Cadence{}, rank.CkptFacts{Done: 9, Last: 6, Moved: 1 << 40, CkptBytes: 1, Spent: 3.9, Cost: 0.1}, false},
		{"auto, measured: due", rank.Cadence{}, rank.CkptFacts{Done: 9, Last: 6, Moved: 0, CkptBytes: 1 << 30, Spent: 4, Cost: 0.1}, true},
		{"every 5 ignores the cost", rank.Cadence{Every: 5}, rank.CkptFacts{Done: 10, Last: 5, Spent: 0.01, Cost: 1}, true},
	} {
		if got := rank.Due(c.cadence, c.facts); got != c.want {
			t.Errorf("%s: due %v, want %v", c.name, got, c.want)
		}
	}
}
