package rank

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/verbs"
)

// Probe is a sample of a run that rank 0 reads from DM before iteration
// At (after the last, when At is past it), for a check of a result too
// large for one process to verify whole (algo.Sample): the in-lists of
// Sample.Vertices, their in-neighbours' values and out-degrees, and the
// iteration's dangling mass. The engine fills Sample on rank 0; the
// caller adds the final values.
type Probe struct {
	At     int
	Sample *algo.Sample
	// OutIsIn says the out-lists are the in-lists (a symmetric graph);
	// otherwise the store must hold in-lists (Store.In).
	OutIsIn bool
	// MaxIn bounds the in-edges read: a vertex whose in-list would pass
	// it leaves the sample (0: no bound).
	MaxIn int
	// Done says the sample was read.
	Done bool
}

// probe takes the run's sample at the boundary before iteration it, if
// the probe asks for that one: every CN writes its chunk's values to DM,
// then rank 0 reads.
func (e *engine) probe(it int, s sums) error {
	p := e.cfg.Probe
	if p == nil || p.At != it || p.Done {
		return nil
	}
	t := time.Now()
	defer func() { e.probeTime += time.Since(t) }()
	if err := e.cfg.Sync(e.catchUpValues(), nil); err != nil {
		return err
	}
	var err error
	if e.w.Rank() == 0 {
		err = e.readSample(p, s.dangling)
	}
	if err = e.cfg.Sync(err, nil); err == nil {
		p.Done = true
	}
	return err
}

// sampleReads is how many in-neighbours readSample reads at a time.
const sampleReads = 4096

// readSample reads the probe's sample on worker 0's endpoint in three
// rounds of merged READs: the sample's in-list entries, then the lists
// of those that fit MaxIn, then the in-neighbours' out-list entries
// (their out-degrees) and value words.
func (e *engine) readSample(p *Probe, dangling float64) error {
	lay := e.st.In
	if lay == nil {
		if !p.OutIsIn {
			return errors.New("rank: a sampled check needs the in-lists on DM, and this store has none")
		}
		lay = e.st.Out
	}
	// A reader of its own, joining only adjacent reads: with the
	// fabric's gap, the sample's 30 k scattered reads of a billion-edge
	// graph's values and index joined into runs over most of them, which
	// worker 0's reader then held (190 MB more on rank 0 at kron:26).
	rd, err := verbs.NewReadMerger(e.wks[0].ep, e.net, 0, maxMergedRead)
	if err != nil {
		return err
	}
	smp := p.Sample
	slices.Sort(smp.Vertices)
	smp.Vertices = slices.Compact(smp.Vertices)
	ins := newListSet(lay)
	if err := ins.queueEntries(rd, smp.Vertices); err != nil {
		return err
	}
	if err := rd.Flush(); err != nil {
		return err
	}
	if err := ins.decodeEntries(); err != nil {
		return err
	}
	// Keep the vertices whose in-lists fit MaxIn, and read those lists.
	total := 0
	smp.Vertices = ins.keep(func(i int) bool {
		d := int(ins.degree(i))
		if p.MaxIn > 0 && total+d > p.MaxIn {
			return false
		}
		total += d
		return true
	})
	if err := ins.queueLists(rd); err != nil {
		return err
	}
	if err := rd.Flush(); err != nil {
		return err
	}
	if err := ins.decodeLists(); err != nil {
		return err
	}
	smp.Off, smp.In = []int{0}, nil
	for i := range smp.Vertices {
		smp.In = append(smp.In, ins.list(i)...)
		smp.Off = append(smp.Off, len(smp.In))
	}
	// The in-neighbours' out-degrees and values, each read once, a
	// piece at a time: the fabric holds a piece's READs in flight, not
	// all 30 k at once.
	us := slices.Compact(slices.Sorted(slices.Values(smp.In)))
	vals, degs := make([]uint64, len(us)), make([]uint32, len(us))
	outs := newListSet(e.st.Out)
	words := make([]byte, 8*min(len(us), sampleReads))
	for a := 0; a < len(us); a += sampleReads {
		part := us[a:min(a+sampleReads, len(us))]
		if err := outs.queueEntries(rd, part); err != nil {
			return err
		}
		for i, u := range part {
			if err := rd.Read(words[8*i:8*i+8], e.st.ValueAddr(u)); err != nil {
				return err
			}
		}
		if err := rd.Flush(); err != nil {
			return err
		}
		if err := outs.decodeEntries(); err != nil {
			return err
		}
		for i := range part {
			vals[a+i], degs[a+i] = binary.LittleEndian.Uint64(words[8*i:]), outs.degree(i)
		}
	}
	smp.Values, smp.Degrees = make([]uint64, len(smp.In)), make([]uint32, len(smp.In))
	for k, u := range smp.In {
		i, _ := slices.BinarySearch(us, u)
		smp.Values[k], smp.Degrees[k] = vals[i], degs[i]
	}
	smp.N, smp.Dangling = e.st.N(), dangling
	return nil
}
