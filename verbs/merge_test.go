package verbs_test

import (
	"bytes"
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

// The read merger against the reads it merges: on any set of reads, with
// any gap, length bound and separations, every buffer gets the bytes a
// READ of its own would have given, and it never posts more READs than
// requests, nor fewer than the groups and MNs they span force.
func FuzzReadMerger(f *testing.F) {
	f.Add([]byte{0, 10, 5, 1, 20, 7, 128, 3, 9}, uint16(16), uint16(0))
	f.Add([]byte{1, 200, 30, 0, 0, 255}, uint16(0), uint16(64))
	f.Fuzz(func(t *testing.T, spec []byte, gap, maxLen uint16) {
		p := &pool{mem: [][]byte{make([]byte, 4096), make([]byte, 4096)}}
		for m := range p.mem {
			for i := range p.mem[m] {
				p.mem[m][i] = byte(i*7 + m*13 + i>>8)
			}
		}
		mg, err := verbs.NewReadMerger(p, p, int(gap), int(maxLen))
		if err != nil {
			t.Fatal(err)
		}
		type req struct {
			dst []byte
			src verbs.Addr
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
			r := req{dst: make([]byte, n), src: a}
			if err := mg.Read(r.dst, r.src); err != nil {
				if p.Check(a, n) == nil {
					t.Fatalf("read %d at %v refused: %v", n, a, err)
				}
				continue
			}
			if n > 0 {
				reqs = append(reqs, r)
			}
		}
		if err := mg.Flush(); err != nil {
			t.Fatal(err)
		}
		for i, r := range reqs {
			want := p.mem[r.src.MN()][r.src.Offset() : r.src.Offset()+uint64(len(r.dst))]
			if !bytes.Equal(r.dst, want) {
				t.Fatalf("read %d (%d bytes at %v) got other bytes", i, len(r.dst), r.src)
			}
		}
		if p.reads > len(reqs) {
			t.Fatalf("%d READs for %d requests", p.reads, len(reqs))
		}
		if mg.Pending() != 0 {
			t.Fatalf("%d reads pending after Flush", mg.Pending())
		}
	})
}
