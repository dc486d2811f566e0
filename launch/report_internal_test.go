package launch

import "testing"

// The memory line names the vertices whose index entries the CNs keep
// only when --cn-mem left room for some and not all.
func TestKeptEntries(t *testing.T) {
	for _, c := range []struct {
		kept, vertices uint64
		want           string
	}{
		{1 << 20, 1 << 20, ""},
		{0, 1 << 20, ""},
		{238312, 262144, " (index entries of 238,312 of 262,144 vertices kept)"},
		{5, 0, ""},
	} {
		if got := keptEntries(c.kept, c.vertices); got != c.want {
			t.Errorf("keptEntries(%d, %d) = %q, want %q", c.kept, c.vertices, got, c.want)
		}
	}
}
