package rank

import (
	"math"
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
// the push runs (DESIGN.md §5, --refrd-puller): it reads the referenced
// segments with its own endpoint, in merged, doorbell-batched READs, and
// folds their edges into the cache next to the workers, atomically (the
// workers' pulls then fold atomically too). Whatever it has not taken when
// the iteration's barrier is passed, the apply's drain takes: both advance
// the same cursor.
type puller struct {
	quit chan struct{}
	done chan error
}

func (e *engine) startPuller() (*puller, error) {
	m, err := verbs.NewReadMerger(e.pullEP, e.net, e.cfg.MergeGap, maxMergedRead)
	if err != nil {
		return nil, err
	}
	p := &puller{quit: make(chan struct{}), done: make(chan error, 1)}
	go func() { p.done <- p.run(e, m) }()
	return p, nil
}

func (p *puller) run(e *engine, rd reader) error {
	wait := pullMinWait
	ep := e.pullEP
	rec := e.st.Out.Codec.RecordBytes()
	var items []update.RefItem
	var recs, seg []byte
	var offs []int
	var dst []uint32
	var w []float32
	var pulled uint64
	defer func() { e.stats.pulled.Add(pulled) }()
	for {
		upto, err := e.mail.refCur.Pullable(ep, pullMinItems)
		if err != nil {
			return err
		}
		if e.mail.refCur.Done(upto) {
			select {
			case <-p.quit:
				return nil
			case <-time.After(wait):
			}
			wait = min(2*wait, pullMaxWait)
			continue
		}
		wait = pullMinWait
		for !e.mail.refCur.Done(upto) {
			if items, recs, err = e.mail.refCur.Take(ep, upto, recsBytes, recs, rec, math.MaxUint32>>2, e.st.N(), e.net, items[:0]); err != nil {
				return err
			}
			seg = grow(seg, update.SegmentBytes(items, rec))
			if offs, err = update.FetchSegments(rd, items, rec, seg, offs[:0]); err != nil {
				return err
			}
			if err := rd.Flush(); err != nil {
				return err
			}
			for i, it := range items {
				dst, w = update.DecodeRecords(seg[offs[i]:offs[i]+int(it.Edges)*rec], rec, e.st.Out.Weighted, dst[:0], w[:0])
				for j, d := range dst {
					if d < e.lo || d >= e.hi {
						return errRefSegment(it, e.lo, e.hi)
					}
					c := it.Val
					if w != nil {
						c = e.op.Candidate(c, w[j])
					}
					e.op.FoldAtomic(&e.acc[d-e.lo], c)
				}
				pulled += uint64(it.Edges)
			}
		}
	}
}

// stop ends the puller and returns its error.
func (p *puller) stop() error {
	close(p.quit)
	return <-p.done
}
