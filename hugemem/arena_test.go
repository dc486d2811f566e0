package hugemem

import "testing"

// The arena's arrays are zeroed, as long as asked, writable to the last
// word, and distinct; large ones come from its own mappings, which free
// releases.
func TestArena(t *testing.T) {
	for _, c := range []struct {
		name   string
		n      int
		mapped bool
	}{
		{"empty", 0, false},
		{"small", 1000, false},
		{"just-below", hugeMin/8 - 1, false},
		{"huge", hugeMin / 8, true},
		{"several-huge", 3*hugeMin/8 + 5, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a Arena
			x, y := a.Words(c.n), a.Words(c.n)
			if len(x) != c.n || len(y) != c.n {
				t.Fatalf("len %d, %d, want %d", len(x), len(y), c.n)
			}
			for i := range x {
				if x[i] != 0 || y[i] != 0 {
					t.Fatalf("word %d not zero", i)
				}
				x[i], y[i] = uint64(i), ^uint64(i)
			}
			for i := range x {
				if x[i] != uint64(i) || y[i] != ^uint64(i) {
					t.Fatalf("word %d overwritten", i)
				}
			}
			probe := mapHuge(hugeMin) // nil where the system maps nothing
			if probe != nil {
				unmap(probe)
			}
			if mapped := len(a.maps) == 2; mapped != (c.mapped && probe != nil) {
				t.Fatalf("%d mappings for two arrays of %d words", len(a.maps), c.n)
			}
			a.Free()
			if a.maps != nil {
				t.Fatal("free kept its mappings")
			}
		})
	}
}
