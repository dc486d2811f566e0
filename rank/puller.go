package rank

import (
	"time"

	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// Puller back-off: how long it sleeps after a look at the mailbox found
// nothing new complete, doubling from pullMinWait to pullMaxWait.
const (
	pullMinWait = 50 * time.Microsecond
	pullMaxWait = 2 * time.Millisecond
)

// pullMinItems is how many complete RefRD items the puller waits for
// before it reads them: fewer would turn the segments into small READs.
const pullMinItems = 64

// puller is the goroutine that drains the own chunk's RefRD mailbox while
// the push runs (DESIGN.md §5): it reads the referenced segments with its
// own endpoint, in merged, doorbell-batched READs, and folds their edges
// into the cache next to the workers (atomically, as they do). Whatever it
// has not taken when the iteration's barrier is passed, the drain in apply
// takes.
type puller struct {
	cur  *update.RefCursor
	quit chan struct{}
	done chan error
}

func (e *engine) startPuller() (*puller, error) {
	r, err := newReader(e, e.pullEP)
	if err != nil {
		return nil, err
	}
	p := &puller{cur: e.mb.RefCursor(e.w.Index, e.st.Codec.RecordBytes(), e.st.Weighted),
		quit: make(chan struct{}), done: make(chan error, 1)}
	fold := func(ri update.RefItem, dst uint32, w float64) {
		reduceLocal(e.p, &e.acc[dst-e.lo], e.p.Edge(ri.Val, uint64(ri.Deg), w))
	}
	go func() { p.done <- p.run(e, e.pullEP, r, fold) }()
	return p, nil
}

func (p *puller) run(e *engine, ep verbs.Endpoint, r update.Reader, fold update.RefApply) error {
	wait := pullMinWait
	var edges uint64
	defer func() { e.addStats(update.Stats{RefPulled: edges}) }()
	for {
		_, n, err := p.cur.Pull(ep, r, pullMinItems, fold)
		if err != nil {
			return err
		}
		edges += n
		if n > 0 {
			wait = pullMinWait
			continue
		}
		select {
		case <-p.quit:
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, pullMaxWait)
	}
}

// stop ends the puller and returns its error.
func (p *puller) stop() error {
	close(p.quit)
	return <-p.done
}
