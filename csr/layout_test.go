package csr

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// evenBounds splits n vertices into c chunks of equal vertex count.
func evenBounds(n uint32, c int) []uint32 {
	b := make([]uint32, c+1)
	for k := range b {
		b[k] = uint32(uint64(n) * uint64(k) / uint64(c))
	}
	return b
}

// hubGraph: vertex 0 points at everyone (an overflow table for many
// chunks), vertex 1 has a few edges, the rest a ring.
func hubGraph(t testing.TB, n uint32, weighted bool) *Graph {
	el := &EdgeList{N: n, Directed: true}
	for v := uint32(1); v < n; v++ {
		el.Src = append(el.Src, 0, v)
		el.Dst = append(el.Dst, v, (v+1)%n)
	}
	for v := uint32(2); v < 6 && v < n; v++ {
		el.Src = append(el.Src, 1)
		el.Dst = append(el.Dst, v*7%n)
	}
	g, err := Build(el, Options{Weighted: weighted, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPlan(t *testing.T) {
	g := hubGraph(t, 1000, false)
	tests := []struct {
		name string
		cfg  LayoutConfig
	}{
		{"c1m1", LayoutConfig{NumMN: 1, Bounds: evenBounds(g.N, 1)}},
		{"c4m2", LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, 4), AttrBytes: []int{8, 4}}},
		{"c2m3", LayoutConfig{NumMN: 3, Bounds: evenBounds(g.N, 2)}},
		{"c30m2-e16", LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, 30), EntrySize: 16, BatchVertices: 7}},
		{"empty-chunk", LayoutConfig{NumMN: 2, Bounds: []uint32{0, 0, 500, 500, 1000}, NoInPlace: true}},
		{"naive", LayoutConfig{Naive: true, NumMN: 2, Bounds: evenBounds(g.N, 3), AttrBytes: []int{8}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Plan(g, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			l2, _ := Plan(g, tc.cfg)
			if !reflect.DeepEqual(l, l2) {
				t.Fatal("Plan is not deterministic")
			}
			// Every vertex is in exactly one batch, in order, in its chunk.
			next := uint32(0)
			for _, b := range l.Batches {
				if b.Lo != next || b.Hi <= b.Lo || b.Hi-b.Lo > uint32(l.Config.BatchVertices) {
					t.Fatalf("batch %+v after %d", b, next)
				}
				if b.Lo < l.Config.Bounds[b.Chunk] || b.Hi > l.Config.Bounds[b.Chunk+1] {
					t.Fatalf("batch %+v outside chunk", b)
				}
				next = b.Hi
			}
			if next != g.N {
				t.Fatalf("batches end at %d", next)
			}
			// No two pieces overlap on an MN, all lie below End.
			type span struct{ lo, hi uint64 }
			spans := make([][]span, tc.cfg.NumMN)
			add := func(a verbs.Addr, n uint64) {
				if n > 0 {
					spans[a.MN()] = append(spans[a.MN()], span{a.Offset(), a.Offset() + n})
				}
			}
			for k := 0; k < l.NumChunks(); k++ {
				lo, hi := l.Config.Bounds[k], l.Config.Bounds[k+1]
				if lo == hi {
					continue
				}
				add(l.EntryAddr(lo), l.indexBytes(Batch{Chunk: k, Lo: lo, Hi: hi}))
				for a := range l.Config.AttrBytes {
					add(l.AttrAddr(a, lo), uint64(hi-lo)*uint64(l.Config.AttrBytes[a]))
					if got := l.AttrAddr(a, hi-1) - l.AttrAddr(a, lo); uint64(got) != uint64(hi-1-lo)*uint64(l.Config.AttrBytes[a]) {
						t.Fatalf("attr %d not contiguous in chunk %d", a, k)
					}
				}
				if l.ChunkOf(lo) != k || l.ChunkOf(hi-1) != k {
					t.Fatalf("ChunkOf(%d)=%d ChunkOf(%d)=%d want %d", lo, l.ChunkOf(lo), hi-1, l.ChunkOf(hi-1), k)
				}
			}
			for _, b := range l.Batches {
				add(verbs.Addr(uint64(b.MN)<<48|b.EdgeOff), b.EdgeBytes)
			}
			for m, s := range spans {
				slices.SortFunc(s, func(x, y span) int { return int(int64(x.lo) - int64(y.lo)) })
				for i := range s {
					if s[i].hi > l.MN[m].End {
						t.Fatalf("MN %d: piece %v beyond End %d", m, s[i], l.MN[m].End)
					}
					if i > 0 && s[i].lo < s[i-1].hi {
						t.Fatalf("MN %d: pieces %v and %v overlap", m, s[i-1], s[i])
					}
				}
			}
			var edgeBytes uint64
			for _, u := range l.MN {
				edgeBytes += u.EdgeBytes
			}
			if tc.cfg.Naive && edgeBytes != 4*g.NumEdges() {
				t.Errorf("naive edge bytes %d", edgeBytes)
			}
			if !tc.cfg.Naive && !tc.cfg.NoInPlace && l.InPlace == 0 {
				t.Errorf("nothing in place")
			}
			if tc.cfg.NoInPlace && l.InPlace != 0 {
				t.Errorf("%d in place with NoInPlace", l.InPlace)
			}
			if tc.name == "c30m2-e16" && l.Overflow == 0 {
				t.Errorf("hub with 30 chunks in 16-byte entries has no overflow table")
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	g := hubGraph(t, 100, false)
	for _, cfg := range []LayoutConfig{
		{NumMN: 0, Bounds: evenBounds(100, 2)},
		{NumMN: 1, Bounds: []uint32{0, 50}},
		{NumMN: 1, Bounds: []uint32{0, 60, 50, 100}},
		{NumMN: 1, Bounds: evenBounds(100, 2), EntrySize: 24},
		{NumMN: 1, Bounds: evenBounds(100, 2), AttrBytes: []int{0}},
	} {
		if _, err := Plan(g, cfg); err == nil || !strings.HasPrefix(err.Error(), "csr: ") {
			t.Errorf("%+v: err %v", cfg, err)
		}
	}
	l, err := Plan(g, LayoutConfig{NumMN: 2, Bounds: evenBounds(100, 2), Reserve: 1000})
	if err != nil {
		t.Fatal(err)
	}
	need := l.Needed()
	if err := l.CheckCapacity(need); err != nil {
		t.Errorf("exact capacity rejected: %v", err)
	}
	short := slices.Clone(need)
	short[1]--
	err = l.CheckCapacity(short)
	var ce *CapacityError
	if err == nil || !errorsAs(err, &ce) || !strings.Contains(err.Error(), "MN 1 needs") || !strings.Contains(err.Error(), "short by 1 B") {
		t.Errorf("capacity error: %v", err)
	}
}

func errorsAs(err error, ce **CapacityError) bool {
	for err != nil {
		if e, ok := err.(*CapacityError); ok {
			*ce = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func TestPlanBalance(t *testing.T) {
	g, _, err := Open("kron:14", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Plan(g, LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, 2), AttrBytes: []int{8, 8}, Granule: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if l.Imbalance() > 1.1 {
		t.Errorf("bytes per MN %d / %d: imbalance %.3f", l.MN[0].End, l.MN[1].End, l.Imbalance())
	}
	if s := l.InPlaceShare(); s < 0.3 || s > 0.99 {
		t.Errorf("in-place share %.2f", s)
	}
}

// runLoad lays g out over roles, loads it with every CN and reads it
// back on CN 0.
func runLoad(t *testing.T, g *Graph, roles spmd.Roles, cfg LayoutConfig) (*Graph, *LoadReport) {
	t.Helper()
	cfg.NumMN = roles.MN
	cfg.Bounds = evenBounds(g.N, roles.CN)
	plan, err := Plan(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cluster := memfab.NewCluster()
	var mu sync.Mutex
	var back *Graph
	total := &LoadReport{}
	var progressCalls int
	err = spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		pc := verbs.Config{}
		if w.Role == spmd.MN {
			pc.PoolBytes = plan.MN[w.Index].Needed
		}
		net, err := memfab.Open(cluster, w, pc)
		if err != nil {
			return err
		}
		// On error return at once (RunLocal aborts the job); Close is
		// collective and only for the success path.
		if w.Role == spmd.CN {
			l, err := Plan(g, cfg) // every rank plans for itself
			if err != nil {
				return err
			}
			avail := make([]uint64, net.NumMN())
			for m := range avail {
				avail[m] = net.PoolSize(m)
			}
			if err := l.CheckCapacity(avail); err != nil {
				return err
			}
			var eps []verbs.Endpoint
			for i := 0; i < 2; i++ {
				ep, err := net.NewEndpoint()
				if err != nil {
					return err
				}
				eps = append(eps, ep)
			}
			rep, err := l.Load(g, w.Index, eps, LoadOptions{Progress: func(p LoadProgress) {
				mu.Lock()
				progressCalls++
				mu.Unlock()
				if p.Vertices > p.TotalVertices || p.Edges > p.TotalEdges || p.Bytes > p.TotalBytes {
					t.Errorf("progress %+v beyond totals", p)
				}
			}})
			if err != nil {
				return err
			}
			if rep.Vertices != uint64(cfg.Bounds[w.Index+1]-cfg.Bounds[w.Index]) {
				t.Errorf("CN %d loaded %d vertices", w.Index, rep.Vertices)
			}
			mu.Lock()
			total.Merge(rep)
			mu.Unlock()
			if err := w.Group.Barrier(); err != nil {
				return err
			}
			if w.Index == 0 {
				got, err := l.ReadGraph(eps[0])
				if err != nil {
					return err
				}
				back = got
			}
		}
		if err := w.Comm.Barrier(); err != nil {
			return err
		}
		return net.Close()
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	if progressCalls < roles.CN {
		t.Errorf("%d progress calls", progressCalls)
	}
	return back, total
}

func TestLoadRoundTrip(t *testing.T) {
	kron, _, err := Open("kron:9:8", Options{Seed: 4, Weighted: true})
	if err != nil {
		t.Fatal(err)
	}
	kronU, _, _ := Open("kron:9:8", Options{Seed: 4, Undirected: true})
	hub := hubGraph(t, 700, true)
	empty := &Graph{N: 0, Offsets: []uint64{0}, Directed: true}
	tests := []struct {
		name  string
		g     *Graph
		roles spmd.Roles
		cfg   LayoutConfig
	}{
		{"kron-w-c2m2", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{AttrBytes: []int{8}}},
		{"kron-u-c3m2-e64", kronU, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{EntrySize: 64, BatchVertices: 100}},
		{"kron-u-c1m3-e16", kronU, spmd.Roles{CN: 1, MN: 3}, LayoutConfig{EntrySize: 16, Granule: 1024}},
		{"hub-w-c5m2-e16", hub, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 64}},
		{"hub-noinplace", hub, spmd.Roles{CN: 2, MN: 1}, LayoutConfig{NoInPlace: true}},
		{"kron-naive", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Naive: true, BatchVertices: 50}},
		{"hub-naive-c3m1", hub, spmd.Roles{CN: 3, MN: 1}, LayoutConfig{Naive: true}},
		{"empty", empty, spmd.Roles{CN: 1, MN: 1}, LayoutConfig{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			back, rep := runLoad(t, tc.g, tc.roles, tc.cfg)
			if rep.Vertices != uint64(tc.g.N) || rep.Edges != tc.g.NumEdges() {
				t.Errorf("loaded %d vertices %d edges", rep.Vertices, rep.Edges)
			}
			if !slices.Equal(back.Offsets, tc.g.Offsets) || !slices.Equal(back.Dst, tc.g.Dst) {
				t.Fatalf("graph read back differs")
			}
			if (back.Weights == nil) != (tc.g.Weights == nil) {
				t.Fatalf("weightedness differs")
			}
			for i, w := range tc.g.Weights {
				if back.Weights[i] != float64(float32(w)) {
					t.Fatalf("weight %d: %v want %v", i, back.Weights[i], float32(w))
				}
			}
			if math.IsNaN(rep.EdgesPerSecond()) {
				t.Errorf("rate NaN")
			}
		})
	}
}

func TestDegrees(t *testing.T) {
	g := hubGraph(t, 100, false)
	s := Degrees(g)
	if s.Max != 99 || s.Min != 1 || s.Median != 1 || s.Zero != 0 {
		t.Errorf("%+v", s)
	}
	var sum uint64
	for _, c := range s.Log2 {
		sum += c
	}
	if sum != 100 || s.Log2[1] == 0 || s.Log2[7] != 1 {
		t.Errorf("log2 histogram %v", s.Log2)
	}
	if !strings.Contains(s.String(), "max 99") {
		t.Errorf("%s", s)
	}
}
