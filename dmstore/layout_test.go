package dmstore

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
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
func hubGraph(t testing.TB, n uint32, weighted bool) *csr.Graph {
	el := &csr.EdgeList{N: n, Directed: true}
	for v := uint32(1); v < n; v++ {
		el.Src = append(el.Src, 0, v)
		el.Dst = append(el.Dst, v, (v+1)%n)
	}
	for v := uint32(2); v < 6 && v < n; v++ {
		el.Src = append(el.Src, 1)
		el.Dst = append(el.Dst, v*7%n)
	}
	g, err := csr.Build(el, csr.Options{Weighted: weighted, Seed: 3})
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
		{"c4m2", LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, 4), AttrBytes: []int{8, 4}, Reserve: 100}},
		{"c2m3", LayoutConfig{NumMN: 3, Bounds: evenBounds(g.N, 2)}},
		{"c30m2-e16", LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, 30), EntrySize: 16, BatchVertices: 7}},
		{"empty-chunk", LayoutConfig{NumMN: 2, Bounds: []uint32{0, 0, 500, 500, 1000}, NoInPlace: true}},
		{"naive", LayoutConfig{Naive: true, NumMN: 2, Bounds: evenBounds(g.N, 3), AttrBytes: []int{8}}},
		{"packed-c4m2", LayoutConfig{Packed: true, NumMN: 2, Bounds: evenBounds(g.N, 4), AttrBytes: []int{8}}},
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
			checkBaseShift(t, g, l)
		})
	}
}

// checkBaseShift checks that a base (uneven over the MNs, unaligned but
// for MN 0) shifts l, the layout of g without a base, and changes nothing
// else.
func checkBaseShift(t *testing.T, g *csr.Graph, l *Layout) {
	t.Helper()
	cfg := l.Config
	cfg.Base = make([]uint64, cfg.NumMN)
	for m := range cfg.Base {
		cfg.Base[m] = 3<<20*uint64(m) + 4096 - 7*uint64(m)
	}
	lb, err := Plan(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := shiftLayout(l, cfg.Base); !reflect.DeepEqual(lb, want) {
		t.Fatalf("layout with base %v:\n%+v\nwant the layout without, shifted:\n%+v", cfg.Base, lb, want)
	}
	last := l.EntryAddr(g.N - 1)
	if lb.Imbalance() != l.Imbalance() || lb.EntryAddr(g.N-1) != last.Add(lb.MN[last.MN()].Start) {
		t.Errorf("imbalance %v or entry address %v with a base; %v, %v without", lb.Imbalance(), lb.EntryAddr(g.N-1), l.Imbalance(), last)
	}
}

// shiftLayout is l moved by base: every offset in MN m by Base[m] rounded
// up to 64 bytes, the byte counts unchanged.
func shiftLayout(l *Layout, base []uint64) *Layout {
	s := *l
	s.Config.Base = base
	by := func(m int) uint64 { return (base[m] + 63) / 64 * 64 }
	s.IndexOff = slices.Clone(l.IndexOff)
	for k, mn := range l.ChunkMN {
		s.IndexOff[k] += by(mn)
	}
	s.AttrOff = make([][]uint64, len(l.AttrOff))
	for a, offs := range l.AttrOff {
		s.AttrOff[a] = slices.Clone(offs)
		for k, mn := range l.ChunkMN {
			s.AttrOff[a][k] += by(mn)
		}
	}
	s.Batches = slices.Clone(l.Batches)
	for i := range s.Batches {
		s.Batches[i].EdgeOff += by(s.Batches[i].MN)
	}
	s.MN = slices.Clone(l.MN)
	for m := range s.MN {
		s.MN[m].Start += by(m)
		s.MN[m].End += by(m)
		s.MN[m].Needed += by(m)
	}
	return &s
}

func TestPlanErrors(t *testing.T) {
	g := hubGraph(t, 100, false)
	for _, cfg := range []LayoutConfig{
		{NumMN: 0, Bounds: evenBounds(100, 2)},
		{NumMN: 1, Bounds: []uint32{0, 50}},
		{NumMN: 1, Bounds: []uint32{0, 60, 50, 100}},
		{NumMN: 1, Bounds: evenBounds(100, 2), EntrySize: 24},
		{NumMN: 1, Bounds: evenBounds(100, 2), AttrBytes: []int{0}},
		{NumMN: 2, Bounds: evenBounds(100, 2), Base: []uint64{0}},
		{NumMN: 1, Bounds: evenBounds(100, 2), Base: []uint64{0, 0}},
		{NumMN: 1, Bounds: evenBounds(100, 2), Base: []uint64{verbs.MaxOffset + 2}},
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
	g, _, err := csr.Open("kron:14", csr.Options{Seed: 1})
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
	checkBaseShift(t, g, l)
}

// onFabric runs an in-process job of roles over memfab, MN m with a pool
// of pools[m] bytes, and calls cn on every CN with two endpoints; then
// every rank meets at a barrier and closes the network. On error cn returns
// at once (RunLocal aborts the job); Close is collective and only for the
// success path.
func onFabric(t *testing.T, roles spmd.Roles, pools []uint64, cn func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error) {
	t.Helper()
	cluster := memfab.NewCluster()
	err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		pc := verbs.Config{}
		if w.Role == spmd.MN {
			pc.PoolBytes = pools[w.Index]
		}
		net, err := memfab.Open(cluster, w, pc)
		if err != nil {
			return err
		}
		if w.Role == spmd.CN {
			var eps []verbs.Endpoint
			for range 2 {
				ep, err := net.NewEndpoint()
				if err != nil {
					return err
				}
				eps = append(eps, ep)
			}
			if err := cn(w, net, eps); err != nil {
				return err
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
}

// poolSizes are the pool sizes of net's MNs.
func poolSizes(net verbs.Network) []uint64 {
	avail := make([]uint64, net.NumMN())
	for m := range avail {
		avail[m] = net.PoolSize(m)
	}
	return avail
}

// runLoad lays g out over roles, loads it with every CN and reads it
// back on CN 0.
func runLoad(t *testing.T, g *csr.Graph, roles spmd.Roles, cfg LayoutConfig) (*csr.Graph, *LoadReport) {
	t.Helper()
	cfg.NumMN = roles.MN
	cfg.Bounds = evenBounds(g.N, roles.CN)
	plan, err := Plan(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var back *csr.Graph
	total := &LoadReport{}
	var progressCalls int
	onFabric(t, roles, plan.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
		l, err := Plan(g, cfg) // every rank plans for itself
		if err != nil {
			return err
		}
		if err := l.CheckCapacity(poolSizes(net)); err != nil {
			return err
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
		return nil
	})
	if progressCalls < roles.CN {
		t.Errorf("%d progress calls", progressCalls)
	}
	return back, total
}

// checkReadBack checks that the rows [lo, hi) of back, a graph read back
// from DM, are those of want, weights as float32.
func checkReadBack(t *testing.T, back, want *csr.Graph, lo, hi uint32) {
	t.Helper()
	if back.N != want.N || (back.Weights == nil) != (want.Weights == nil) {
		t.Fatalf("read back %d vertices, weighted %v; want %d, %v", back.N, back.Weights != nil, want.N, want.Weights != nil)
	}
	for v := lo; v < hi; v++ {
		if !slices.Equal(back.Neighbors(v), want.Neighbors(v)) {
			t.Fatalf("vertex %d read back %v, want %v", v, back.Neighbors(v), want.Neighbors(v))
		}
		if want.Weights == nil {
			continue
		}
		for i, w := range want.EdgeWeights(v) {
			if got := back.EdgeWeights(v)[i]; got != float64(float32(w)) {
				t.Fatalf("vertex %d edge %d: weight %v read back, want %v", v, i, got, float32(w))
			}
		}
	}
}

func TestLoadRoundTrip(t *testing.T) {
	kron, _, err := csr.Open("kron:9:8", csr.Options{Seed: 4, Weighted: true})
	if err != nil {
		t.Fatal(err)
	}
	kronU, _, _ := csr.Open("kron:9:8", csr.Options{Seed: 4, Undirected: true})
	kron8, kron16 := integerWeights(kron, 255), integerWeights(kron, 65535)
	hub := hubGraph(t, 700, true)
	empty := &csr.Graph{N: 0, Offsets: []uint64{0}, Directed: true}
	tests := []struct {
		name  string
		g     *csr.Graph
		roles spmd.Roles
		cfg   LayoutConfig
	}{
		{"kron-w-c2m2", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{AttrBytes: []int{8}}},
		{"kron-u-c3m2-e64", kronU, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{EntrySize: 64, BatchVertices: 100}},
		{"kron-u-c1m3-e16", kronU, spmd.Roles{CN: 1, MN: 3}, LayoutConfig{EntrySize: 16, Granule: 1024}},
		{"hub-w-c5m2-e16", hub, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 64}},
		{"hub-noinplace", hub, spmd.Roles{CN: 2, MN: 1}, LayoutConfig{NoInPlace: true}},
		{"kron-w-packed-c2m2", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Packed: true, AttrBytes: []int{8}}},
		{"kron-u-packed-c3m2-e16", kronU, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{Packed: true, EntrySize: 16, BatchVertices: 100}},
		{"hub-w-packed-noinplace", hub, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{Packed: true, NoInPlace: true, BatchVertices: 64}},
		// A list too long to pack beside packed ones, in one batch.
		{"star-packed", hubGraph(t, MaxPackedDegree+3, false), spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Packed: true}},
		{"kron-naive", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Naive: true, BatchVertices: 50}},
		{"hub-naive-c3m1", hub, spmd.Roles{CN: 3, MN: 1}, LayoutConfig{Naive: true}},
		{"empty", empty, spmd.Roles{CN: 1, MN: 1}, LayoutConfig{}},
		// Integer weights in one or two bytes: records, in place, packed,
		// naive.
		{"kron-w8-c2m2", kron8, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{AttrBytes: []int{8}, Weights: WeightUint8}},
		{"kron-w8-c3m2-e16", kron8, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 100, Weights: WeightUint8}},
		{"kron-w16-c2m2-e64", kron16, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{EntrySize: 64, Weights: WeightUint16}},
		{"kron-w8-packed", kron8, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Packed: true, Weights: WeightUint8}},
		{"kron-w16-packed-noinplace", kron16, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{Packed: true, NoInPlace: true, Weights: WeightUint16}},
		{"kron-w8-naive", kron8, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Naive: true, Weights: WeightUint8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			back, rep := runLoad(t, tc.g, tc.roles, tc.cfg)
			if rep.Vertices != uint64(tc.g.N) || rep.Edges != tc.g.NumEdges() {
				t.Errorf("loaded %d vertices %d edges", rep.Vertices, rep.Edges)
			}
			checkReadBack(t, back, tc.g, 0, tc.g.N)
			if math.IsNaN(rep.EdgesPerSecond()) {
				t.Errorf("rate NaN")
			}
		})
	}
}

// integerWeights is g with its weights made integers 0..most (in turn,
// so that both ends and zero occur).
func integerWeights(g *csr.Graph, most int) *csr.Graph {
	h := *g
	h.Weights = make([]float64, len(g.Weights))
	for i, w := range g.Weights {
		h.Weights[i] = math.Round(w * float64(most))
	}
	h.Weights[0], h.Weights[len(h.Weights)-1] = 0, float64(most)
	return &h
}

// A layout whose weight code does not hold a weight of the graph refuses
// to load it, naming the weight.
func TestLoadRefusesWeights(t *testing.T) {
	kron, _, err := csr.Open("kron:9:8", csr.Options{Seed: 4, Weighted: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		g    *csr.Graph
		code WeightCode
	}{
		{kron, WeightUint8},                      // fractions
		{integerWeights(kron, 256), WeightUint8}, // past 255
		{integerWeights(kron, 70000), WeightUint16},
	} {
		cfg := LayoutConfig{NumMN: 1, Bounds: []uint32{0, tc.g.N}, Weights: tc.code}
		l, err := Plan(tc.g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		onFabric(t, spmd.Roles{CN: 1, MN: 1}, l.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
			_, err = l.Load(tc.g, 0, eps, LoadOptions{})
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), tc.code.String()+" weights do not hold") {
			t.Fatalf("%s: %v, want a refusal of the weight", tc.code, err)
		}
	}
}

// fanGraph: vertex 0 points at everyone and everyone points at vertex 1
// (an overflow table for many chunks in the out- and in-adjacency), the
// rest a ring; written as a directed .bel in dir.
func fanGraph(t *testing.T, dir string, n uint32) string {
	el := &csr.EdgeList{N: n, Directed: true}
	for v := uint32(1); v < n; v++ {
		el.Src = append(el.Src, 0, v, v)
		el.Dst = append(el.Dst, v, 1, (v+1)%n)
	}
	g, err := csr.Build(el, csr.Options{Weighted: true, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := csr.WriteBinary(&buf, g, csr.BinaryOptions{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "fan.bel")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// shareCase is a graph read in shares and laid out over roles.
type shareCase struct {
	name, spec string
	opts       csr.Options
	roles      spmd.Roles
	cfg        LayoutConfig
}

// The out- and in-adjacency of every CN's share, laid out one after the
// other on the same pools (the in-layout's base is the out-layout's end),
// load and read back as the shares' rows, the in-lists' segments counted
// by source chunk.
func TestLoadOutIn(t *testing.T) {
	fan := fanGraph(t, t.TempDir(), 700)
	tests := []shareCase{
		{"kron-w-c2m2", "kron:9:8", csr.Options{Seed: 4, Weighted: true}, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{}},
		{"kron-c3m2-e64", "kron:9:8", csr.Options{Seed: 5}, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{EntrySize: 64, BatchVertices: 100, Granule: 1024}},
		{"fan-c5m2-e16", fan, csr.Options{}, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 64}},
		{"fan-noinplace-c2m3", fan, csr.Options{}, spmd.Roles{CN: 2, MN: 3}, LayoutConfig{NoInPlace: true, BatchVertices: 50}},
		{"kron-w-packed-c3m2", "kron:9:8", csr.Options{Seed: 4, Weighted: true}, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{Packed: true, BatchVertices: 100}},
		{"fan-packed-c5m2-e16", fan, csr.Options{}, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{Packed: true, EntrySize: 16, BatchVertices: 64}},
		{"kron-naive", "kron:9:8", csr.Options{Seed: 4, Weighted: true}, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Naive: true, BatchVertices: 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			full, _, err := csr.Open(tc.spec, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			C := tc.roles.CN
			outCfg := tc.cfg
			outCfg.NumMN, outCfg.Bounds, outCfg.AttrBytes = tc.roles.MN, evenBounds(full.N, C), []int{8}
			inCfg := outCfg
			inCfg.AttrBytes, inCfg.Reserve = nil, 1000
			shares := make([]*csr.Share, C)
			outSizes, inSizes := make([]ChunkSizes, C), make([]ChunkSizes, C)
			var outEdges, inEdges uint64
			for k := range shares {
				sh, _, err := csr.OpenShareWith(tc.spec, tc.opts, csr.ShareOptions{In: true}, func([]uint64) (uint32, uint32, error) {
					return outCfg.Bounds[k], outCfg.Bounds[k+1], nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if outSizes[k], err = SizeChunk(sh.Graph, outCfg, k); err != nil {
					t.Fatal(err)
				}
				if inSizes[k], err = SizeChunk(sh.In, inCfg, k); err != nil {
					t.Fatal(err)
				}
				outEdges += sh.Graph.NumEdges()
				inEdges += sh.In.NumEdges()
				shares[k] = sh
			}
			if inEdges != outEdges {
				t.Fatalf("%d in-edges, %d out-edges", inEdges, outEdges)
			}
			weighted := full.Weights != nil
			out, err := PlanSizes(full.N, outEdges, weighted, outCfg, outSizes)
			if err != nil {
				t.Fatal(err)
			}
			inCfg.Base = make([]uint64, tc.roles.MN)
			for m := range inCfg.Base {
				inCfg.Base[m] = out.MN[m].End
			}
			in, err := PlanSizes(full.N, inEdges, weighted, inCfg, inSizes)
			if err != nil {
				t.Fatal(err)
			}
			for m, u := range in.MN {
				if u.Start != out.MN[m].End || u.Needed != u.End+inCfg.Reserve || u.Needed < out.MN[m].Needed {
					t.Fatalf("MN %d: in-layout %+v after out-layout %+v", m, u, out.MN[m])
				}
			}
			if !tc.cfg.Naive && !tc.cfg.Packed && tc.cfg.EntrySize == 16 && (out.Overflow == 0 || in.Overflow == 0) {
				t.Errorf("%d out- and %d in-lists with an overflow table; want both > 0", out.Overflow, in.Overflow)
			}
			if tc.cfg.Packed && (out.Overflow != 0 || in.Overflow != 0) {
				t.Errorf("%d out- and %d in-lists with an overflow table in a packed layout", out.Overflow, in.Overflow)
			}
			var mu sync.Mutex
			var backOut, backIn *csr.Graph
			var loaded LoadReport
			onFabric(t, tc.roles, in.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
				if err := in.CheckCapacity(poolSizes(net)); err != nil {
					return err
				}
				sh := shares[w.Index]
				for _, x := range []struct {
					l *Layout
					g *csr.Graph
				}{{out, sh.Graph}, {in, sh.In}} {
					rep, err := x.l.Load(x.g, w.Index, eps, LoadOptions{})
					if err != nil {
						return err
					}
					mu.Lock()
					loaded.Merge(rep)
					mu.Unlock()
				}
				if err := w.Group.Barrier(); err != nil {
					return err
				}
				if w.Index != 0 {
					return nil
				}
				if backOut, err = out.ReadGraph(eps[0]); err != nil {
					return err
				}
				if backIn, err = in.ReadGraph(eps[0]); err != nil {
					return err
				}
				for _, l := range []*Layout{out, in} {
					if err := checkEntryRegions(l, eps[0]); err != nil {
						return err
					}
				}
				return nil
			})
			if loaded.Edges != outEdges+inEdges || loaded.Vertices != 2*uint64(full.N) {
				t.Errorf("loaded %d vertices, %d edges; want %d, %d", loaded.Vertices, loaded.Edges, 2*full.N, outEdges+inEdges)
			}
			for k, sh := range shares {
				checkReadBack(t, backOut, sh.Graph, sh.Lo, sh.Hi)
				checkReadBack(t, backIn, sh.In, sh.Lo, sh.Hi)
				if sh.Lo != outCfg.Bounds[k] {
					t.Fatalf("share %d starts at %d", k, sh.Lo)
				}
			}
			checkReadBack(t, backIn, full.Transpose(), 0, full.N)
		})
	}
}

// checkEntryRegions reads every index entry (naive: offset word) of l
// through ep and checks that the edge list it points at, with its overflow
// table, lies in l's part of the list's MN, between MN[m].Start and
// MN[m].End.
func checkEntryRegions(l *Layout, ep verbs.Endpoint) error {
	size := l.Codec.Size
	buf := make([]byte, size)
	var e Entry
	for v := range l.N {
		if err := ep.Read(buf, l.EntryAddr(v)); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		var a verbs.Addr
		var tb uint64
		if l.Config.Naive {
			a = verbs.Addr(binary.LittleEndian.Uint64(buf))
		} else {
			if err := l.Codec.Decode(buf, &e); err != nil {
				return err
			}
			if e.Kind == InPlace {
				continue
			}
			a, tb = verbs.Addr(e.Addr), uint64(e.TableBytes)
		}
		if u := l.MN[a.MN()]; a.Offset()-tb < u.Start || a.Offset() > u.End {
			return errors.Errorf("vertex %d: list at %v (table %d bytes) outside [%d, %d) of MN %d", v, a, tb, u.Start, u.End, a.MN())
		}
	}
	return nil
}

func TestDegrees(t *testing.T) {
	g := hubGraph(t, 100, false)
	s := csr.Degrees(g)
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

// A windowed share (csr.ShareOptions.RowBytes a quarter of its rows or
// less) measures, plans, loads and reads back window by window exactly
// as the share built whole: the same sizes, layouts, meta and rows in DM.
func TestLoadWindowed(t *testing.T) {
	fan := fanGraph(t, t.TempDir(), 700)
	tests := []shareCase{
		{"kron-w-c2m2", "kron:9:8", csr.Options{Seed: 4, Weighted: true}, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{BatchVertices: 16}},
		{"kron-u-c3m2-e64", "kron:9:8", csr.Options{Seed: 5, Undirected: true}, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{EntrySize: 64, BatchVertices: 10}},
		{"fan-c2m2-e16", fan, csr.Options{}, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 8}},
		{"kron-w-packed-c2m2", "kron:9:8", csr.Options{Seed: 4, Weighted: true}, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{Packed: true, BatchVertices: 16}},
		{"kron-naive-c1m2", "kron:9:8", csr.Options{Seed: 4, Weighted: true}, spmd.Roles{CN: 1, MN: 2}, LayoutConfig{Naive: true, BatchVertices: 50}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			C := tc.roles.CN
			full, _, err := csr.Open(tc.spec, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			outCfg := tc.cfg
			outCfg.NumMN, outCfg.Bounds, outCfg.AttrBytes = tc.roles.MN, evenBounds(full.N, C), []int{8}
			inCfg := outCfg
			inCfg.AttrBytes, inCfg.Naive = nil, false
			whole, win := make([]*csr.Share, C), make([]*csr.Share, C)
			metas := make([]*csr.Meta, C) // the whole shares'

			var plans [2][2]*Layout // [whole, windowed][out, in]
			for i, shares := range [][]*csr.Share{whole, win} {
				outSizes, inSizes := make([]ChunkSizes, C), make([]ChunkSizes, C)
				var edges uint64
				for k := range shares {
					part := func(deg []uint64) (uint32, uint32, error) { return outCfg.Bounds[k], outCfg.Bounds[k+1], nil }
					so := csr.ShareOptions{In: true, Align: uint32(tc.cfg.BatchVertices)}
					if i == 1 {
						sh := whole[k]
						rows := int64(sh.Graph.NumEdges()) * 4
						if sh.In != nil {
							rows *= 2
						}
						so.RowBytes = rows / 4
					}
					sh, meta, err := csr.OpenShareWith(tc.spec, tc.opts, so, part)
					if err != nil {
						t.Fatal(err)
					}
					var windows int
					if err := sh.Windows(func(g, in *csr.Graph, lo, hi uint32) error {
						windows++
						s, err := SizeRange(g, outCfg, k, lo, hi)
						outSizes[k].Add(s)
						edges += g.NumEdges()
						if in != nil {
							s, err = SizeRange(in, inCfg, k, lo, hi)
							inSizes[k].Add(s)
						}
						return err
					}); err != nil {
						t.Fatal(err)
					}
					if i == 1 {
						wm, wmeta := whole[k], metas[k]
						if windows < 4 || !sh.Windowed() || sh.Symmetric() != wm.Symmetric() {
							t.Fatalf("share %d: %d windows (windowed %v), symmetric %v; want ≥ 4, true, %v", k, windows, sh.Windowed(), sh.Symmetric(), wm.Symmetric())
						}
						if !reflect.DeepEqual(meta, wmeta) {
							t.Fatalf("share %d: meta %+v; built whole %+v", k, *meta, *wmeta)
						}
					} else {
						metas[k] = meta
					}
					shares[k] = sh
				}
				weighted := full.Weights != nil
				if plans[i][0], err = PlanSizes(full.N, edges, weighted, outCfg, outSizes); err != nil {
					t.Fatal(err)
				}
				if whole[0].In == nil {
					continue // undirected: no in-rows
				}
				icfg := inCfg
				icfg.Base = make([]uint64, tc.roles.MN)
				for m := range icfg.Base {
					icfg.Base[m] = plans[i][0].MN[m].End
				}
				if plans[i][1], err = PlanSizes(full.N, edges, weighted, icfg, inSizes); err != nil {
					t.Fatal(err)
				}
			}
			for j := range 2 {
				if !reflect.DeepEqual(plans[0][j], plans[1][j]) {
					t.Fatalf("layout %d of the windowed shares differs from the whole shares'", j)
				}
			}
			out, in := plans[1][0], plans[1][1]
			last := in
			if in == nil {
				last = out
			}
			var backOut, backIn *csr.Graph
			onFabric(t, tc.roles, last.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
				sh := win[w.Index]
				var done LoadProgress
				var los []uint32
				if err := sh.Windows(func(g, gin *csr.Graph, lo, hi uint32) error {
					if los = append(los, lo); len(los) == 1 && hi != sh.Hi {
						t.Errorf("the second sweep starts with window [%d, %d), not the last one the first built", lo, hi)
					}
					o := LoadOptions{Lo: lo, Hi: hi, Done: done, Progress: func(p LoadProgress) {
						if p.Vertices > p.TotalVertices || p.Bytes > p.TotalBytes || p.Vertices < done.Vertices {
							t.Errorf("progress %+v after %+v", p, done)
						}
					}}
					rep, err := out.Load(g, w.Index, eps, o)
					if err != nil {
						return err
					}
					done.Vertices, done.Bytes = done.Vertices+rep.Vertices, done.Bytes+rep.Bytes
					if gin != nil {
						o.Progress = nil
						_, err = in.Load(gin, w.Index, eps, o)
					}
					return err
				}); err != nil {
					return err
				}
				if err := w.Group.Barrier(); err != nil {
					return err
				}
				if w.Index != 0 {
					return nil
				}
				var err error
				if backOut, err = out.ReadGraph(eps[0]); err != nil || in == nil {
					return err
				}
				backIn, err = in.ReadGraph(eps[0])
				return err
			})
			for _, sh := range whole {
				checkReadBack(t, backOut, sh.Graph, sh.Lo, sh.Hi)
				if sh.In != nil {
					checkReadBack(t, backIn, sh.In, sh.Lo, sh.Hi)
				}
			}
		})
	}
}

// A window that does not fall on the layout's batches is refused.
func TestLoadWindowUnaligned(t *testing.T) {
	g, _, err := csr.Open("kron:8:4", csr.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := LayoutConfig{NumMN: 1, Bounds: []uint32{0, g.N}, BatchVertices: 10}
	l, err := Plan(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	onFabric(t, spmd.Roles{CN: 1, MN: 1}, l.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
		for _, win := range [][2]uint32{{5, 20}, {0, 15}, {20, 10}, {0, g.N + 10}} {
			if _, err := l.Load(g, 0, eps, LoadOptions{Lo: win[0], Hi: win[1]}); err == nil || !strings.Contains(err.Error(), "loading batches") {
				t.Errorf("window %v: error %v", win, err)
			}
		}
		_, err := l.Load(g, 0, eps, LoadOptions{Lo: 0, Hi: g.N})
		return err
	})
}
