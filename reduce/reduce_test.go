package reduce

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
)

// Every loop against the one-edge-at-a-time definition (Candidate, then
// Combine), for every reduction and edge map.
func TestLoopsAgreeWithDefinition(t *testing.T) {
	specs := []algo.Spec{
		{Reduce: algo.Sum, Float: true, Identity: 0},
		{Reduce: algo.Sum, Identity: 0},
		{Reduce: algo.Min, Float: true, Identity: math.Float64bits(math.Inf(1))},
		{Reduce: algo.Min, Identity: math.MaxUint64},
		{Reduce: algo.Min, Float: true, Edge: algo.AddWeight, Identity: math.Float64bits(math.Inf(1))},
		{Reduce: algo.Sum, Float: true, Edge: algo.AddWeight, Identity: 0},
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n, base = 64, 1000
	for si, s := range specs {
		o := OpOf(s)
		word := func() uint64 {
			if s.Float {
				return math.Float64bits(float64(r.IntN(1000)) / 8)
			}
			return uint64(r.IntN(1000))
		}
		dst := make([]uint32, 200)
		w := make([]float32, len(dst))
		cands := make([]uint64, len(dst))
		for i := range dst {
			dst[i] = base + uint32(r.IntN(n))
			w[i] = float32(r.IntN(16)) / 4
			cands[i] = word()
		}
		slices.Sort(dst)
		c := word()
		init := make([]uint64, n)
		for i := range init {
			init[i] = word()
		}
		// Scatter and ScatterCands.
		got, want := slices.Clone(init), slices.Clone(init)
		o.Scatter(got, base, dst, w, c)
		for i, d := range dst {
			want[d-base] = o.Combine(want[d-base], o.Candidate(c, w[i]))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("spec %d: Scatter differs from the definition", si)
		}
		got, want = slices.Clone(init), slices.Clone(init)
		o.ScatterCands(got, base, dst, cands)
		for i, d := range dst {
			want[d-base] = o.Combine(want[d-base], cands[i])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("spec %d: ScatterCands differs from the definition", si)
		}
		// ScatterAtomic reports each destination it took from the
		// identity (minima: exactly once).
		acc := make([]uint64, n)
		for i := range acc {
			acc[i] = s.Identity
		}
		touched := o.ScatterAtomic(acc, base, dst, w, c, nil, nil)
		want = make([]uint64, n)
		for i := range want {
			want[i] = s.Identity
		}
		for i, d := range dst {
			want[d-base] = o.Combine(want[d-base], o.Candidate(c, w[i]))
		}
		if !slices.Equal(acc, want) {
			t.Fatalf("spec %d: ScatterAtomic differs from the definition", si)
		}
		if o.IsMin() {
			u := slices.Compact(slices.Clone(dst))
			if !slices.Equal(touched, u) {
				t.Fatalf("spec %d: ScatterAtomic touched %v, want %v", si, touched, u)
			}
		}
		// Gather: contributions of sources, identity for inactive ones.
		contrib := make([]uint64, n)
		for i := range contrib {
			contrib[i] = word()
			if r.IntN(4) == 0 {
				contrib[i] = s.Identity
			}
		}
		g := o.Gather(s.Identity, contrib, nil, base, dst, w, false)
		x := s.Identity
		for i, u := range dst {
			if contrib[u-base] == s.Identity && o.IsMin() {
				continue
			}
			x = o.Combine(x, o.Candidate(contrib[u-base], w[i]))
		}
		if s.Reduce == algo.Sum && s.Float {
			if math.Abs(math.Float64frombits(g)-math.Float64frombits(x)) > 1e-9*math.Abs(math.Float64frombits(x)) {
				t.Fatalf("spec %d: Gather %v, want %v", si, math.Float64frombits(g), math.Float64frombits(x))
			}
		} else if (s.Edge != algo.AddWeight || o.IsMin()) && g != x {
			t.Fatalf("spec %d: Gather %#x, want %#x", si, g, x)
		}
		// Gather with the bitmap of the active sources: the same result.
		active := make([]uint64, (n+63)/64)
		for i, c := range contrib {
			if c != s.Identity {
				active[i>>6] |= 1 << (i & 63)
			}
		}
		if ga := o.Gather(s.Identity, contrib, active, base, dst, w, false); s.Edge != algo.AddWeight || o.IsMin() {
			if ga != g && !(s.Reduce == algo.Sum && s.Float && math.Abs(math.Float64frombits(ga)-math.Float64frombits(g)) <= 1e-9*math.Abs(math.Float64frombits(g))) {
				t.Fatalf("spec %d: Gather over the active sources %#x, want %#x", si, ga, g)
			}
		}
		if ga, gf := o.Gather(s.Identity, contrib, active, base, dst, w, true), o.Gather(s.Identity, contrib, nil, base, dst, w, true); ga != gf {
			t.Fatalf("spec %d: first-wins Gather over the active sources %#x, want %#x", si, ga, gf)
		}
		// KeepBelow keeps exactly the candidates below their bound as it
		// was lowered by the run's earlier candidates, and leaves each
		// bound at the minimum of its old value and the run's candidates.
		if o.IsMin() {
			bound := make([]uint64, base+n)
			for i := range bound {
				bound[i] = word()
			}
			wantB := slices.Clone(bound)
			var wantD []uint32
			var wantC []uint64
			dropped := uint64(0)
			for i, d := range dst {
				cand := o.Candidate(c, w[i])
				if !o.Better(cand, wantB[d]) {
					dropped++
					continue
				}
				wantB[d] = cand
				wantD, wantC = append(wantD, d), append(wantC, cand)
			}
			gotD, gotC, gotDropped := o.KeepBelow(bound, dst, w, c, nil, nil, nil)
			if !slices.Equal(gotD, wantD) || !slices.Equal(gotC, wantC) || gotDropped != dropped || !slices.Equal(bound, wantB) {
				t.Fatalf("spec %d: KeepBelow kept %v %v (dropped %d), want %v %v (dropped %d)", si, gotD, gotC, gotDropped, wantD, wantC, dropped)
			}
			if dropped == 0 || len(wantD) == 0 {
				t.Fatalf("spec %d: KeepBelow's case keeps %d and drops %d; want both", si, len(wantD), dropped)
			}
		}
		// FoldPairs takes only its lane.
		got, want = slices.Clone(init), slices.Clone(init)
		o.FoldPairs(got, base, base+10, base+40, dst, cands)
		for i, d := range dst {
			if d >= base+10 && d < base+40 {
				want[d-base] = o.Combine(want[d-base], cands[i])
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("spec %d: FoldPairs differs from the definition", si)
		}
	}
}

// A minimum over vertex ids in 4 bytes: the same result as GatherRelaxed
// over their 8-byte words, the identity kept apart from every id.
func TestMinIDs(t *testing.T) {
	o := OpOf(algo.Spec{Reduce: algo.Min, Identity: math.MaxUint64})
	none := uint64(math.MaxUint64)
	for _, c := range []struct {
		name  string
		acc   uint64
		words []uint64
		src   []uint32
	}{
		{"no sources", 7, []uint64{1}, nil},
		{"no sources, identity", none, []uint64{1}, nil},
		{"identity sources", none, []uint64{none, none}, []uint32{0, 1}},
		{"one below", 9, []uint64{none, 3}, []uint32{0, 1}},
		{"none below", 2, []uint64{5, 3}, []uint32{0, 1}},
		{"largest id", none, []uint64{NoID - 1, none}, []uint32{0, 1}},
		{"id zero", 5, []uint64{4, 0, 6}, []uint32{0, 1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ids := make([]uint32, len(c.words))
			for i, x := range c.words {
				if ids[i] = NarrowID(x); WidenID(ids[i]) != x {
					t.Fatalf("word %#x narrows to %#x, which widens to %#x", x, ids[i], WidenID(ids[i]))
				}
			}
			want := o.GatherRelaxed(c.acc, c.words, 0, c.src, nil)
			if got := WidenID(MinIDsRelaxed(NarrowID(c.acc), ids, c.src)); got != want {
				t.Fatalf("MinIDsRelaxed gives %#x, GatherRelaxed %#x", got, want)
			}
		})
	}
}
