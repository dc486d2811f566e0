package rank

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/verbs"
)

// The gang runs a phase on every worker, meets at barriers, and when one
// worker fails releases the others (their barrier reports it) and returns
// the failing worker's own error.
func TestGang(t *testing.T) {
	g := newGang(4)
	defer g.close()
	var hits atomic.Int64
	phase := func(w int) error {
		for range 10 {
			hits.Add(1)
			if err := g.barrier(); err != nil {
				return err
			}
		}
		return nil
	}
	for range 3 {
		if err := g.run(phase); err != nil {
			t.Fatal(err)
		}
	}
	if hits.Load() != 3*4*10 {
		t.Fatalf("%d barrier rounds, want %d", hits.Load(), 3*4*10)
	}
	boom := errors.New("boom")
	failing := func(w int) error {
		if w == 2 {
			return boom
		}
		for {
			if err := g.barrier(); err != nil {
				return err
			}
		}
	}
	if err := g.run(failing); !errors.Is(err, boom) {
		t.Fatalf("run = %v, want the failing worker's error", err)
	}
	panicking := func(w int) error {
		if w == 0 {
			var s []int
			_ = s[w+1] // index out of range
		}
		return g.barrier()
	}
	if err := g.run(panicking); err == nil {
		t.Fatal("a panicking worker did not fail the phase")
	}
	if err := g.run(phase); err != nil {
		t.Fatalf("the gang is unusable after a failed phase: %v", err)
	}
}

// The frontier's two forms hold the same set across conversions.
func TestFrontierForms(t *testing.T) {
	f := newFrontier(100, 200)
	want := []uint32{100, 101, 163, 164, 227, 299}
	for _, v := range want {
		f.bits.set(v - 100)
	}
	f.asList()
	if !slices.Equal(f.list, want) {
		t.Fatalf("list %v, want %v", f.list, want)
	}
	f.list = append(f.list[:0], 105, 250)
	f.asBits()
	for v := uint32(100); v < 300; v++ {
		if f.active(v) != (v == 105 || v == 250) {
			t.Fatalf("vertex %d active %v after the list became bits", v, f.active(v))
		}
	}
}

// Sparse tasks cover every frontier vertex and every edge of its hubs
// exactly once, in order, within the bounds.
func TestSparseTasks(t *testing.T) {
	deg := []uint32{3, 0, 50, 1, 1, 1, 1, 9, 100, 2}
	list := []uint32{10, 12, 13, 14, 15, 16, 17, 18, 19}
	for _, split := range []bool{false, true} {
		ts := sparseTasks(list, deg, 10, 3, 10, split, nil)
		edges := map[uint32]uint64{}
		seen := 0
		for _, tk := range ts {
			if tk.Hi > uint32(len(list)) || tk.Lo >= tk.Hi || (tk.Whole() && tk.Hi-tk.Lo > 3) {
				t.Fatalf("task %+v", tk)
			}
			for i := tk.Lo; i < tk.Hi; i++ {
				v := list[i]
				if tk.Whole() {
					edges[v] += uint64(deg[v-10])
				} else {
					edges[v] += tk.EdgeHi - tk.EdgeLo
					if tk.EdgeHi-tk.EdgeLo > 10 {
						t.Fatalf("hub piece %+v over 10 edges", tk)
					}
				}
			}
			if tk.Whole() || tk.EdgeLo == 0 {
				seen += int(tk.Hi - tk.Lo)
			}
		}
		if seen != len(list) {
			t.Fatalf("split %v: %d vertices covered, want %d", split, seen, len(list))
		}
		for _, v := range list {
			if edges[v] != uint64(deg[v-10]) {
				t.Fatalf("split %v: vertex %d: %d edges covered, want %d", split, v, edges[v], deg[v-10])
			}
		}
	}
	var _ balance.Task
}

// spans joins sorted ids at most gap apart and covers each once.
func TestSpans(t *testing.T) {
	ids := []uint32{1, 2, 5, 30, 31, 100}
	var got [][2]uint32
	if err := spans(ids, 3, func(x, y uint32) error { got = append(got, [2]uint32{x, y}); return nil }); err != nil {
		t.Fatal(err)
	}
	want := [][2]uint32{{1, 6}, {30, 32}, {100, 101}}
	if !slices.Equal(got, want) {
		t.Fatalf("spans %v, want %v", got, want)
	}
}

// The triangle operator's intersection against a map: merges of lists of
// similar length and binary searches of a short list in a long one (both
// ways round), with ids across the whole 32-bit range.
func TestIntersect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	list := func(n int, univ uint32) []uint32 {
		s := make([]uint32, n)
		for i := range s {
			s[i] = r.Uint32N(univ)
		}
		slices.Sort(s)
		return slices.Compact(s)
	}
	for _, c := range []struct{ np, nq int }{{0, 5}, {5, 0}, {1, 1}, {30, 40}, {200, 150}, {3, 500}, {500, 3}, {1, 100}} {
		for _, univ := range []uint32{64, 1000, math.MaxUint32} {
			p, q := list(c.np, univ), list(c.nq, univ)
			ip, iq := make([]int32, min(len(p), len(q))+1), make([]int32, min(len(p), len(q))+1)
			n := intersect(p, q, ip, iq)
			in := map[uint32]int{}
			for i, x := range q {
				in[x] = i
			}
			var want [][2]int32
			for i, x := range p {
				if k, ok := in[x]; ok {
					want = append(want, [2]int32{int32(i), int32(k)})
				}
			}
			if n != len(want) {
				t.Fatalf("%d and %d ids below %d: %d common, want %d", len(p), len(q), univ, n, len(want))
			}
			for j, w := range want {
				if ip[j] != w[0] || iq[j] != w[1] {
					t.Fatalf("%d and %d ids below %d: match %d at (%d, %d), want %v", len(p), len(q), univ, j, ip[j], iq[j], w)
				}
			}
		}
	}
}

// cpuAtomics is a network whose MNs' CPUs execute remote atomics (or not).
type cpuAtomics struct {
	verbs.Network
	onCPU bool
}

func (n cpuAtomics) AtomicsOnTargetCPU() bool { return n.onCPU }

// Sparse iterations send every segment by value where a remote CAS waits
// for the MN's CPU, only hubs' where the NIC or the memory executes it, and
// a network that does not say is taken for the latter.
func TestSparseValRDMinFollowsTheFabric(t *testing.T) {
	for _, c := range []struct {
		net  verbs.Network
		want uint32
	}{
		{cpuAtomics{onCPU: true}, 1},
		{cpuAtomics{onCPU: false}, 32},
		{struct{ verbs.Network }{}, 32},
	} {
		if got := sparseValRDMin(c.net); got != c.want {
			t.Errorf("%T (on CPU %v): %d, want %d", c.net, verbs.AtomicsOnTargetCPU(c.net), got, c.want)
		}
	}
}

// TestListSetKeep: keep leaves the vertices its test accepts, in order,
// with their own entries, and every entry's buffers belong to one entry.
func TestListSetKeep(t *testing.T) {
	s := &listSet{ids: []uint32{3, 5, 8, 9, 12}}
	for _, d := range []uint32{4, 9, 1, 6, 2} {
		s.dec = append(s.dec, dmstore.Entry{Degree: d, Dst: make([]uint32, 1)})
	}
	total := 0
	got := s.keep(func(i int) bool { // at most 8 edges, in order
		if d := int(s.degree(i)); total+d <= 8 {
			total += d
			return true
		}
		return false
	})
	if !slices.Equal(got, []uint32{3, 8, 12}) || len(s.dec) != 3 {
		t.Fatalf("kept %v (%d entries), want [3 8 12]", got, len(s.dec))
	}
	for i, want := range []uint32{4, 1, 2} {
		if s.degree(i) != want {
			t.Errorf("entry %d has degree %d, want %d", i, s.degree(i), want)
		}
	}
	s.dec[0].Dst[0], s.dec[1].Dst[0] = 1, 2
	if s.dec[0].Dst[0] != 1 {
		t.Errorf("two kept entries share a buffer")
	}
}
