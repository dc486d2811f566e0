package launch

import "testing"

// The memory line names the index entries the CNs keep beside their
// cache, and how many vertices' when --cn-mem left room for some and not
// all.
func TestKeptEntries(t *testing.T) {
	for _, c := range []struct {
		kept, vertices, bytes uint64
		want                  string
	}{
		{1 << 20, 1 << 20, 33 << 19, ", and 17 MiB of index entries"},
		{0, 1 << 20, 0, ""},
		{238312, 262144, 3932148, ", and 3.7 MiB of index entries (238,312 of 262,144 vertices')"},
		{5, 0, 0, ""},
	} {
		if got := keptEntries(c.kept, c.vertices, c.bytes); got != c.want {
			t.Errorf("keptEntries(%d, %d, %d) = %q, want %q", c.kept, c.vertices, c.bytes, got, c.want)
		}
	}
}
