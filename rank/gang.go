package rank

import (
	"fmt"
	"sync"

	"github.com/pkg/errors"
)

// gang is a CN's workers: goroutines that live for the whole job and run
// one phase function at a time (push, apply), so no goroutine, endpoint or
// buffer is created per iteration. Inside a phase the workers can meet at
// barrier; a worker that fails releases the others, whose barrier then
// reports the failure.
type gang struct {
	n     int
	start []chan func(int) error
	done  chan error
	quit  chan struct{}

	mu     sync.Mutex
	cond   *sync.Cond
	count  int
	gen    uint64
	failed bool
}

func newGang(n int) *gang {
	g := &gang{n: n, start: make([]chan func(int) error, n), done: make(chan error, n), quit: make(chan struct{})}
	g.cond = sync.NewCond(&g.mu)
	for w := range n {
		g.start[w] = make(chan func(int) error)
		go g.loop(w)
	}
	return g
}

func (g *gang) loop(w int) {
	for {
		select {
		case f := <-g.start[w]:
			g.done <- g.call(f, w)
		case <-g.quit:
			return
		}
	}
}

// WorkerPanic is a worker that panicked: it read data no store holds (a
// corrupt store, a peer that died under its reads) or met a bug.
type WorkerPanic struct {
	Worker int
	Value  any
}

func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("rank: worker %d failed: %v (corrupt store or engine bug)", p.Worker, p.Value)
}

// call runs f(w), turning a panic (a corrupt store indexing out of range,
// say) into an error so that it does not take the process down without a
// word, and releasing the other workers when f fails.
func (g *gang) call(f func(int) error, w int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &WorkerPanic{Worker: w, Value: r}
		}
		if err != nil {
			g.fail()
		}
	}()
	return f(w)
}

// run runs f on every worker and returns the first error (nil if none).
// f must be a function value made once (a stored method value), not a new
// closure per call, so a phase allocates nothing.
func (g *gang) run(f func(int) error) error {
	g.mu.Lock()
	g.failed, g.count = false, 0
	g.mu.Unlock()
	for w := range g.n {
		g.start[w] <- f
	}
	var first error
	for range g.n {
		if err := <-g.done; err != nil && (first == nil || errors.Is(first, errGangFailed)) {
			first = err
		}
	}
	return first
}

// errGangFailed is what a worker returns from a barrier another worker
// broke; run reports the failing worker's own error instead.
var errGangFailed = errors.New("rank: another worker failed")

// barrier waits until every worker of the phase has arrived. It returns
// errGangFailed if a worker failed (then the caller must return it).
func (g *gang) barrier() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed {
		return errGangFailed
	}
	gen := g.gen
	g.count++
	if g.count == g.n {
		g.count = 0
		g.gen++
		g.cond.Broadcast()
		return nil
	}
	for gen == g.gen && !g.failed {
		g.cond.Wait()
	}
	if g.failed {
		return errGangFailed
	}
	return nil
}

func (g *gang) fail() {
	g.mu.Lock()
	g.failed = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

// close ends the goroutines (after the last run).
func (g *gang) close() { close(g.quit) }

func (g *gang) String() string { return fmt.Sprintf("gang of %d", g.n) }
