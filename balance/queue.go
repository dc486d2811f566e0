package balance

import (
	"sync"
	"sync/atomic"
	"time"
)

// Queue is stage 2's work-stealing scheduler for workers that live for the
// whole job: Reset deals a phase's tasks, and each worker calls Next until
// it reports no more. The tasks are dealt as contiguous shares of equal
// total cost, one per worker, in order; each worker runs its share from
// the front. With stealing, a worker whose share is done takes the back
// half (by cost) of the share with the most cost queued and carries on,
// until no work is queued anywhere. A Queue allocates only when a phase
// has more tasks than any before it.
type Queue struct {
	ds    []deque
	costs []uint64
	steal bool
	stats Stats
	start time.Time
}

// NewQueue makes a queue for the given number of workers (at least 1).
func NewQueue(workers int) *Queue {
	workers = max(workers, 1)
	return &Queue{ds: make([]deque, workers), stats: newStats(workers)}
}

// Workers is the number of workers.
func (q *Queue) Workers() int { return len(q.ds) }

// Reset deals tasks for a new phase (cost nil: every task costs 1). It must
// not run while workers call Next. The queue keeps tasks until the next
// Reset; the caller must not change them meanwhile.
func (q *Queue) Reset(tasks []Task, cost func(Task) uint64, steal bool) {
	if cap(q.costs) < len(tasks) {
		q.costs = make([]uint64, len(tasks))
	}
	q.costs = q.costs[:len(tasks)]
	for i, t := range tasks {
		c := uint64(1)
		if cost != nil {
			c = cost(t)
		}
		q.costs[i] = min(c, 1<<52) // keep the queued sums inside int64
	}
	q.steal = steal
	for w, b := range deal(q.costs, len(q.ds)) {
		d := &q.ds[w]
		d.mu.Lock()
		d.tasks, d.costs, d.head, d.tail = tasks[b[0]:b[1]], q.costs[b[0]:b[1]], 0, b[1]-b[0]
		var sum uint64
		for _, c := range d.costs {
			sum += c
		}
		d.rem.Store(int64(sum))
		d.mu.Unlock()
	}
	for w := range q.ds {
		q.stats.Busy[w], q.stats.Tasks[w], q.stats.Steals[w], q.stats.Stolen[w] = 0, 0, 0, 0
	}
	q.start = time.Now()
}

// Next is worker w's next task: the front of its own share, else (with
// stealing) one of the back half of the busiest other share.
func (q *Queue) Next(w int) (Task, bool) {
	for {
		if t, ok := q.ds[w].pop(); ok {
			q.stats.Tasks[w]++
			return t, true
		}
		if !q.steal {
			return Task{}, false
		}
		n := stealInto(q.ds, w)
		if n == 0 {
			return Task{}, false
		}
		q.stats.Steals[w]++
		q.stats.Stolen[w] += n
	}
}

// AddBusy adds to worker w's busy time (the caller times its tasks).
func (q *Queue) AddBusy(w int, d time.Duration) { q.stats.Busy[w] += d }

// Stats is what the phase since the last Reset measured. Call it when no
// worker is in Next; the slices are the queue's own, valid until the next
// Reset.
func (q *Queue) Stats() Stats {
	q.stats.Wall = time.Since(q.start)
	return q.stats
}

// deque is one worker's share: the owner pops from the front, thieves take
// from the back. rem is the cost still queued, read without the lock to
// pick a victim. tasks and costs are views of the phase's arrays, so a
// steal hands over a range without copying.
type deque struct {
	mu         sync.Mutex
	tasks      []Task
	costs      []uint64
	head, tail int
	rem        atomic.Int64
}

// pop takes the front task.
func (d *deque) pop() (Task, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head == d.tail {
		return Task{}, false
	}
	t, c := d.tasks[d.head], d.costs[d.head]
	d.head++
	d.rem.Add(-int64(c))
	return t, true
}

// stealHalf removes tasks from the back while they hold less than half of
// the queued cost (at least one task) and returns them in order.
func (d *deque) stealHalf() ([]Task, []uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head == d.tail {
		return nil, nil
	}
	k, got := d.tail-1, d.costs[d.tail-1]
	if rem := uint64(d.rem.Load()); rem == 0 {
		k = d.tail - (d.tail-d.head+1)/2 // all free: half by count
	} else {
		for k > d.head && got+d.costs[k-1] <= rem/2 {
			k--
			got += d.costs[k]
		}
	}
	ts, cs := d.tasks[k:d.tail:d.tail], d.costs[k:d.tail:d.tail]
	d.tail = k
	d.rem.Add(-int64(got))
	return ts, cs
}

// install replaces an empty deque's contents with stolen tasks.
func (d *deque) install(ts []Task, cs []uint64) {
	var sum uint64
	for _, c := range cs {
		sum += c
	}
	d.mu.Lock()
	d.tasks, d.costs, d.head, d.tail = ts, cs, 0, len(ts)
	d.rem.Add(int64(sum))
	d.mu.Unlock()
}

// stealInto moves the back half of the busiest other share into worker w's
// (empty) deque and returns the number of tasks moved: 0 when no work is
// queued anywhere.
func stealInto(ds []deque, w int) int {
	for {
		victim, most := -1, int64(0)
		for i := range ds {
			if r := ds[i].rem.Load(); i != w && r > most {
				victim, most = i, r
			}
		}
		if victim < 0 {
			// Zero-cost tasks leave rem at 0: look for any queued task.
			victim = anyQueued(ds, w)
			if victim < 0 {
				return 0
			}
		}
		ts, cs := ds[victim].stealHalf()
		if len(ts) > 0 {
			ds[w].install(ts, cs)
			return len(ts)
		}
	}
}

// anyQueued returns a worker other than w with a queued task, or -1.
func anyQueued(ds []deque, w int) int {
	for i := range ds {
		if i == w {
			continue
		}
		ds[i].mu.Lock()
		n := ds[i].tail - ds[i].head
		ds[i].mu.Unlock()
		if n > 0 {
			return i
		}
	}
	return -1
}
