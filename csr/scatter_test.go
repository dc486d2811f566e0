package csr

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScatterRows: rows that buffer their edges (scatter.go) end with the
// edges, weights and fill positions of rows that add them at once, for
// rows above scatterMin entries, weighted or not, with a buffer flushed
// many times and once part full; and a row that got an edge more than
// counted still shows in its fill position (changed).
func TestScatterRows(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        uint32
		weighted bool
		extra    bool // one edge more than counted
	}{
		{"unweighted", 5000, false, false},
		{"weighted", 70000, true, false},
		{"an edge too many", 3000, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.n), 7))
			count := make([]uint32, c.n)
			var m uint64
			for m < scatterMin+scatterEdges/3 {
				i := r.IntN(int(c.n))
				count[i]++
				m++
			}
			type edge struct {
				s, d uint64
				w    float64
			}
			var es []edge
			const lo = 100
			for i, k := range count {
				for range k {
					es = append(es, edge{uint64(lo + i), uint64(r.IntN(1 << 20)), r.Float64()})
				}
			}
			if c.extra {
				es = append(es, edge{lo + 7, 1, 0.5})
			}
			r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
			at, buf := newShareRows(count, lo, lo+c.n, c.weighted, nil), newShareRows(count, lo, lo+c.n, c.weighted, nil)
			if buf.buf == nil {
				t.Fatalf("rows of %d entries do not buffer their edges", m)
			}
			at.buf = nil
			for _, e := range es {
				at.add(e.s, e.d, e.w)
				buf.add(e.s, e.d, e.w)
			}
			at.flush()
			buf.flush()
			if !slices.Equal(at.pos, buf.pos) {
				t.Fatal("the fill positions differ")
			}
			if err := changed("g", buf); (err != nil) != c.extra {
				t.Fatalf("changed: %v, want an error %v", err, c.extra)
			}
			if c.extra {
				return
			}
			rowOf := func(x *shareRows, v int) []edge {
				var row []edge
				for k := x.off[v]; k < x.off[v+1]; k++ {
					e := edge{d: uint64(x.dst[k])}
					if x.ws != nil {
						e.w = x.ws[k]
					}
					row = append(row, e)
				}
				slices.SortFunc(row, func(a, b edge) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.w, b.w)) })
				return row
			}
			for v := range int(c.n) {
				if !slices.Equal(rowOf(at, v), rowOf(buf, v)) {
					t.Fatalf("row %d differs", lo+v)
				}
			}
		})
	}
}
