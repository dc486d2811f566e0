package verbs_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dmg-hpc/dmg/verbs"
)

// pool is a fake endpoint over in-memory pools: it serves reads at once
// and counts the READs it was given.
type pool struct {
	mem   [][]byte
	reads int
}

func (p *pool) Check(a verbs.Addr, n int) error {
	sizes := make([]uint64, len(p.mem))
	for i, m := range p.mem {
		sizes[i] = uint64(len(m))
	}
	return verbs.CheckRange(sizes, a, n)
}
func (p *pool) Read(dst []byte, src verbs.Addr) error {
	if err := p.Check(src, len(dst)); err != nil {
		return err
	}
	copy(dst, p.mem[src.MN()][src.Offset():])
	p.reads++
	return nil
}
func (p *pool) Write(verbs.Addr, []byte) error { return nil }
func (p *pool) Flush() error                   { return nil }
func (p *pool) Pending() int                   { return 0 }
func (p *pool) Counters() verbs.Counters       { return verbs.Counters{} }
func (p *pool) CountersByMN() []verbs.Counters { return nil }
func (p *pool) Close() error                   { return nil }

// regPool is a pool whose endpoint hands out buffers (BufferAllocator):
// the merger's views then live in them.
type regPool struct {
	pool
	live map[*byte]bool
}

func (p *regPool) AllocBuffer(n int) ([]byte, error) {
	b := make([]byte, n)
	p.live[&b[0]] = true
	return b, nil
}

func (p *regPool) FreeBuffer(b []byte) error {
	if !p.live[&b[0]] {
		return errors.New("freeing a buffer not allocated, or twice")
	}
	delete(p.live, &b[0])
	return nil
}

// The read merger against the reads it merges: on any set of reads, with
// any gap, length bound and separations, every buffer (and every view,
// views chosen by the bits of views) gets the bytes a READ of its own
// would have given, and it never posts more READs than requests, nor fewer
// than the groups and MNs they span force. It runs twice over one merger,
// so views of the second round come from a buffer the first grew, on an
// endpoint with registered buffers (reg) or without.
func FuzzReadMerger(f *testing.F) {
	f.Add([]byte{0, 10, 5, 1, 20, 7, 128, 3, 9}, uint16(16), uint16(0), uint64(0), false)
	f.Add([]byte{1, 200, 30, 0, 0, 255}, uint16(0), uint16(64), uint64(0b101), true)
	f.Add([]byte{0, 10, 5, 1, 20, 7, 128, 3, 9, 4, 11, 200}, uint16(4), uint16(0), ^uint64(0), true)
	f.Fuzz(func(t *testing.T, spec []byte, gap, maxLen uint16, views uint64, reg bool) {
		rp := &regPool{pool: pool{mem: [][]byte{make([]byte, 4096), make([]byte, 4096)}}, live: map[*byte]bool{}}
		p := &rp.pool
		for m := range p.mem {
			for i := range p.mem[m] {
				p.mem[m][i] = byte(i*7 + m*13 + i>>8)
			}
		}
		var ep verbs.Endpoint = p
		if reg {
			ep = rp
		}
		mg, err := verbs.NewReadMerger(ep, p, int(gap), int(maxLen))
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			p.reads = 0
			mergeRound(t, mg, p, spec[min(len(spec), round*3):], views>>round)
		}
		if reg && len(rp.live) > 1 {
			t.Fatalf("%d registered buffers live; the merger keeps one", len(rp.live))
		}
	})
}

func mergeRound(t *testing.T, mg *verbs.ReadMerger, p *pool, spec []byte, views uint64) {
	type req struct {
		dst  []byte
		src  verbs.Addr
		view int
	}
	var reqs []req
	for i := 0; i+2 < len(spec) && len(reqs) < 64; i += 3 {
		mn := int(spec[i] & 1)
		if spec[i]&2 != 0 {
			mg.Separate()
		}
		off := uint64(spec[i+1])*16 + uint64(spec[i]>>2)
		n := int(spec[i+2])
		a, _ := verbs.MakeAddr(mn, off)
		r := req{dst: make([]byte, n), src: a, view: -1}
		var err error
		if views>>(len(reqs)%64)&1 != 0 {
			r.view, err = mg.ReadView(r.src, n)
		} else {
			err = mg.Read(r.dst, r.src)
		}
		if err != nil {
			if p.Check(a, n) == nil {
				t.Fatalf("read %d at %v refused: %v", n, a, err)
			}
			continue
		}
		if n > 0 || r.view >= 0 {
			reqs = append(reqs, r)
		}
	}
	if err := mg.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		got := r.dst
		if r.view >= 0 {
			got = mg.View(r.view)
		}
		want := p.mem[r.src.MN()][r.src.Offset() : r.src.Offset()+uint64(len(r.dst))]
		if !bytes.Equal(got, want) {
			t.Fatalf("read %d (%d bytes at %v, view %d) got other bytes", i, len(r.dst), r.src, r.view)
		}
	}
	if p.reads > len(reqs) {
		t.Fatalf("%d READs for %d requests", p.reads, len(reqs))
	}
	if mg.Pending() != 0 {
		t.Fatalf("%d reads pending after Flush", mg.Pending())
	}
}
