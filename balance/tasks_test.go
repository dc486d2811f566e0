package balance

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// checkCover fails unless tasks cover every vertex of the chunk and every
// edge of every vertex exactly once, in order, within the limits.
func checkCover(t *testing.T, tasks []Task, deg []uint64, base uint32, batch int, hub uint64, split bool) {
	t.Helper()
	next := base      // next vertex expected
	var edgeAt uint64 // next edge expected within vertex next (split hubs)
	for i, tk := range tasks {
		if tk.Lo != next || tk.Hi <= tk.Lo {
			t.Fatalf("task %d = %+v; want one starting at vertex %d", i, tk, next)
		}
		if !tk.Whole() {
			d := deg[tk.Lo-base]
			if tk.Hi != tk.Lo+1 || tk.EdgeLo != edgeAt || tk.EdgeHi <= tk.EdgeLo || tk.EdgeHi > d {
				t.Fatalf("task %d = %+v; want edges from %d of vertex %d (degree %d)", i, tk, edgeAt, tk.Lo, d)
			}
			if !split || d <= hub || tk.EdgeHi-tk.EdgeLo > hub {
				t.Fatalf("task %d = %+v: an edge range, but split=%v hub=%d degree=%d", i, tk, split, hub, d)
			}
			edgeAt = tk.EdgeHi
			if edgeAt == d {
				next, edgeAt = tk.Hi, 0
			}
			continue
		}
		if edgeAt != 0 {
			t.Fatalf("task %d = %+v starts before hub %d's edges are done", i, tk, next)
		}
		if n := int(tk.Hi - tk.Lo); n > max(batch, 1) {
			t.Fatalf("task %d = %+v holds %d vertices > batch %d", i, tk, n, batch)
		}
		if e := tk.Edges(deg, base); hub > 0 && e > hub && tk.Hi-tk.Lo > 1 {
			t.Fatalf("task %d = %+v holds %d edges > hub degree %d", i, tk, e, hub)
		}
		for v := tk.Lo; v < tk.Hi; v++ {
			if d := deg[v-base]; hub > 0 && d > hub && (split || tk.Hi-tk.Lo > 1) {
				t.Fatalf("task %d = %+v holds hub %d (degree %d) with split=%v", i, tk, v, d, split)
			}
		}
		next = tk.Hi
	}
	if end := base + uint32(len(deg)); next != end || edgeAt != 0 {
		t.Fatalf("tasks end at vertex %d edge %d; want vertex %d", next, edgeAt, end)
	}
}

func TestTasksTable(t *testing.T) {
	whole := func(lo, hi uint32) Task { return Task{Lo: lo, Hi: hi} }
	part := func(v uint32, lo, hi uint64) Task { return Task{Lo: v, Hi: v + 1, EdgeLo: lo, EdgeHi: hi} }
	tests := []struct {
		name  string
		deg   []uint64
		base  uint32
		batch int
		hub   uint64
		split bool
		want  []Task
	}{
		{"empty", nil, 7, 4, 10, true, []Task{}},
		{"batches by count", []uint64{1, 1, 1, 1, 1}, 10, 2, 0, true, []Task{whole(10, 12), whole(12, 14), whole(14, 15)}},
		{"batch below one counts as one", []uint64{1, 1}, 0, 0, 0, false, []Task{whole(0, 1), whole(1, 2)}},
		{"closed early by edges", []uint64{3, 3, 3, 1}, 0, 8, 6, true, []Task{whole(0, 2), whole(2, 4)}},
		{"hub split evenly", []uint64{1, 10, 1}, 0, 8, 4, true, []Task{whole(0, 1), part(1, 0, 3), part(1, 3, 6), part(1, 6, 10), whole(2, 3)}},
		{"hub whole without split", []uint64{1, 10, 1}, 0, 8, 4, false, []Task{whole(0, 1), whole(1, 2), whole(2, 3)}},
		{"degree equal to hub is no hub", []uint64{4, 4}, 5, 8, 4, true, []Task{whole(5, 6), whole(6, 7)}},
		{"zero degrees share a batch", []uint64{0, 0, 0, 9, 0}, 0, 8, 4, true, []Task{whole(0, 3), part(3, 0, 3), part(3, 3, 6), part(3, 6, 9), whole(4, 5)}},
		{"adjacent hubs", []uint64{5, 5}, 0, 8, 4, true, []Task{part(0, 0, 2), part(0, 2, 5), part(1, 0, 2), part(1, 2, 5)}},
		{"hub off", []uint64{100, 1}, 0, 8, 0, true, []Task{whole(0, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tasks(tt.deg, tt.base, tt.batch, tt.hub, tt.split)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Tasks = %+v\nwant  %+v", got, tt.want)
			}
			checkCover(t, got, tt.deg, tt.base, tt.batch, tt.hub, tt.split)
		})
	}
}

// powerLaw returns n degrees with a heavy tail.
func powerLaw(r *rand.Rand, n int) []uint64 {
	deg := make([]uint64, n)
	for i := range deg {
		deg[i] = uint64(1/(r.Float64()*r.Float64()+1e-4)) - 1
	}
	return deg
}

func TestTasksCoverRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		deg := powerLaw(r, r.IntN(500))
		base := uint32(r.IntN(1000))
		batch := r.IntN(70)
		hub := uint64(r.IntN(200))
		split := i%2 == 0
		got := Tasks(deg, base, batch, hub, split)
		checkCover(t, got, deg, base, batch, hub, split)
		if again := Tasks(deg, base, batch, hub, split); !reflect.DeepEqual(got, again) {
			t.Fatal("Tasks is not deterministic")
		}
	}
}

func TestEdgeCost(t *testing.T) {
	deg := []uint64{2, 10, 3}
	c := EdgeCost(deg, 4, 1)
	for _, tc := range []struct {
		t    Task
		want uint64
	}{
		{Task{Lo: 4, Hi: 7}, 15 + 3},
		{Task{Lo: 5, Hi: 6, EdgeLo: 4, EdgeHi: 9}, 5 + 1},
		{Task{Lo: 6, Hi: 7}, 3 + 1},
	} {
		if got := c(tc.t); got != tc.want {
			t.Errorf("cost(%+v) = %d, want %d", tc.t, got, tc.want)
		}
	}
	if lo, hi := (Task{Lo: 5, Hi: 6}).EdgeRange(10); lo != 0 || hi != 10 {
		t.Errorf("whole EdgeRange = [%d,%d), want [0,10)", lo, hi)
	}
	if lo, hi := (Task{Lo: 5, Hi: 6, EdgeLo: 4, EdgeHi: 9}).EdgeRange(10); lo != 4 || hi != 9 {
		t.Errorf("split EdgeRange = [%d,%d), want [4,9)", lo, hi)
	}
}

func TestCutLarge(t *testing.T) {
	d := uint64(1) << 62
	if got := cut(d, 3, 4); got != 3<<60 {
		t.Fatalf("cut(2^62, 3, 4) = %d", got)
	}
}

func BenchmarkTasks(b *testing.B) {
	deg := powerLaw(rand.New(rand.NewPCG(3, 4)), 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		Tasks(deg, 0, 256, 4096, true)
	}
}
