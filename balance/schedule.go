package balance

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/errors"
)

// Stats is what Run measured, per worker.
type Stats struct {
	// Busy is the time each worker spent inside fn.
	Busy []time.Duration `json:"busy"`
	// Tasks is the number of tasks each worker ran.
	Tasks []int `json:"tasks"`
	// Steals is the number of successful steals by each worker, and Stolen
	// the number of tasks those steals moved.
	Steals []int `json:"steals"`
	Stolen []int `json:"stolen"`
	// Wall is the elapsed time of the whole Run.
	Wall time.Duration `json:"wall"`
}

func newStats(workers int) Stats {
	return Stats{
		Busy: make([]time.Duration, workers), Tasks: make([]int, workers),
		Steals: make([]int, workers), Stolen: make([]int, workers),
	}
}

// Add accumulates o into s worker by worker (for a job-wide total over
// iterations); s grows to o's number of workers.
func (s *Stats) Add(o Stats) {
	for len(s.Busy) < len(o.Busy) {
		s.Busy, s.Tasks = append(s.Busy, 0), append(s.Tasks, 0)
		s.Steals, s.Stolen = append(s.Steals, 0), append(s.Stolen, 0)
	}
	for i := range o.Busy {
		s.Busy[i] += o.Busy[i]
		s.Tasks[i] += o.Tasks[i]
		s.Steals[i] += o.Steals[i]
		s.Stolen[i] += o.Stolen[i]
	}
	s.Wall += o.Wall
}

// TotalSteals is the number of steals over all workers.
func (s Stats) TotalSteals() int {
	n := 0
	for _, x := range s.Steals {
		n += x
	}
	return n
}

// TailRatio is the maximum over the median of the workers' busy times
// (the median of an even count is the mean of the middle two): 1 means
// perfectly even. It is 1 for one worker, for no workers and when no
// worker was busy. When the median is zero but some worker was busy, it is
// max/mean instead, which stays finite (at most the number of workers).
func (s Stats) TailRatio() float64 { return Tail([]Stats{s}) }

// MaxBusy and MedianBusy are the largest and the median busy time.
func (s Stats) MaxBusy() time.Duration {
	mx, _, _ := s.busySummary()
	return mx
}

// MedianBusy is the median busy time (mean of the middle two for an even
// number of workers).
func (s Stats) MedianBusy() time.Duration {
	_, med, _ := s.busySummary()
	return med
}

func (s Stats) busySummary() (mx, med, mean time.Duration) {
	n := len(s.Busy)
	if n == 0 {
		return 0, 0, 0
	}
	b := slices.Clone(s.Busy)
	slices.Sort(b)
	var sum time.Duration
	for _, x := range b {
		sum += x
	}
	med = b[n/2]
	if n%2 == 0 {
		med = (b[n/2-1] + b[n/2]) / 2
	}
	return b[n-1], med, sum / time.Duration(n)
}

// Tail is the tail ratio over several phases separated by barriers (the
// iterations of a job): Σ max busy / Σ median busy, the time the phases
// waited for their slowest worker against a typical one. It follows
// TailRatio's conventions: 1 without workers or busy time, and the mean in
// place of a zero median.
func Tail(phases []Stats) float64 {
	var mx, med, mean float64
	workers := 0
	for _, s := range phases {
		a, b, c := s.busySummary()
		mx, med, mean = mx+float64(a), med+float64(b), mean+float64(c)
		workers = max(workers, len(s.Busy))
	}
	switch {
	case workers <= 1 || mx == 0:
		return 1
	case med == 0:
		return mx / mean
	}
	return mx / med
}

// Run executes every task once on workers goroutines and returns per-worker
// statistics, dealing and stealing as Queue does (cost nil: every task
// costs 1; without steal each worker runs only its own share). fn(worker,
// task) is called on the worker's goroutine, so per-worker state indexed by
// worker needs no locking. The first error stops every worker before its
// next task and is returned.
func Run(workers int, tasks []Task, cost func(Task) uint64, steal bool, fn func(worker int, t Task) error) (Stats, error) {
	if workers < 1 {
		return Stats{}, errors.Errorf("balance: %d workers; need at least 1", workers)
	}
	if fn == nil {
		return Stats{}, errors.New("balance: Run needs a task function")
	}
	q := NewQueue(workers)
	q.Reset(tasks, cost, steal)
	var (
		stop    atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for !stop.Load() {
				t, ok := q.Next(w)
				if !ok {
					return
				}
				t0 := time.Now()
				err := fn(w, t)
				q.AddBusy(w, time.Since(t0))
				if err != nil {
					errOnce.Do(func() { first = err })
					stop.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	st := q.Stats()
	return Stats{Busy: slices.Clone(st.Busy), Tasks: slices.Clone(st.Tasks), Steals: slices.Clone(st.Steals),
		Stolen: slices.Clone(st.Stolen), Wall: st.Wall}, first
}

// deal cuts costs into workers contiguous ranges [lo, hi) of near-equal
// total cost: a task goes to the share its cost midpoint falls into.
// With no cost at all, the ranges hold near-equal counts.
func deal(costs []uint64, workers int) [][2]int {
	var total uint64
	for _, c := range costs {
		total += c
	}
	out := make([][2]int, workers)
	n := len(costs)
	if total == 0 {
		for w := range out {
			out[w] = [2]int{n * w / workers, n * (w + 1) / workers}
		}
		return out
	}
	w, lo := 0, 0
	var before float64 // cost of tasks before i
	for i, c := range costs {
		mid := before + float64(c)/2
		for w < workers-1 && mid >= float64(total)*float64(w+1)/float64(workers) {
			out[w] = [2]int{lo, i}
			lo = i
			w++
		}
		before += float64(c)
	}
	for ; w < workers; w++ {
		out[w] = [2]int{lo, n}
		lo = n
	}
	return out
}
