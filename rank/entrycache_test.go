package rank

import (
	"bytes"
	"testing"

	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/hugemem"
)

// The entry caches take at most a quarter of the CN's budget, only what
// the rest of its cache leaves of three quarters, shared by the layouts
// in proportion to their entries (and a byte a vertex each); no budget
// caches the whole chunk.
func TestEntryCacheBudget(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget uint64
		rest   uint64
		n      uint32
		sizes  []int
		want   uint32
	}{
		{"no budget", 0, 1 << 40, 1000, []int{32, 32}, 1000},
		{"room for all", 1 << 30, 1 << 20, 1000, []int{32}, 1000},
		{"a quarter", 33 * 4 * 100, 0, 1000, []int{32}, 100},
		{"two layouts share", 66 * 4 * 100, 0, 1000, []int{32, 32}, 100},
		{"sizes weigh", (17 + 65) * 4 * 100, 0, 1000, []int{16, 64}, 100},
		{"the rest leaves less", 33 * 4 * 100, 33*3*100 - 33*10, 1000, []int{32}, 10},
		{"the rest leaves nothing", 1 << 20, 3 << 18, 1000, []int{32}, 0},
		{"the rest is past the budget", 1 << 20, 1 << 30, 1000, []int{32}, 0},
		{"no layouts", 1 << 20, 0, 1000, nil, 1000},
		{"empty chunk", 1 << 20, 0, 0, []int{32}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := entryCacheBudget(c.budget, c.rest, c.n, c.sizes); got != c.want {
				t.Fatalf("entryCacheBudget(%d, %d, %d, %v) = %d, want %d", c.budget, c.rest, c.n, c.sizes, got, c.want)
			}
		})
	}
}

// A cache of the first vertices of a chunk gives back what was put in,
// nothing for a vertex not put yet, and nothing (and takes nothing) for a
// vertex it does not cover or an entry of the wrong size.
func TestEntryCache(t *testing.T) {
	var mem hugemem.Arena
	defer mem.Free()
	codec := dmstore.EntryCodec{Size: 16}
	c := newEntryCache(&mem, codec, 100, 4) // vertices 100..103
	e := func(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }
	c.put(101, e(1))
	c.put(103, e(3))
	c.put(104, e(4))     // past the cache
	c.put(99, e(9))      // before it
	c.put(102, e(2)[:8]) // not an entry
	for v, want := range map[uint32][]byte{99: nil, 100: nil, 101: e(1), 102: nil, 103: e(3), 104: nil, 1 << 31: nil} {
		if got := c.get(v); !bytes.Equal(got, want) {
			t.Errorf("get(%d) = %v, want %v", v, got, want)
		}
	}
	if c.bytes() != 4*16+4 {
		t.Errorf("bytes() = %d, want %d", c.bytes(), 4*16+4)
	}
	var none *entryCache
	if none.get(100) != nil || none.bytes() != 0 || newEntryCache(&mem, codec, 0, 0) != nil {
		t.Error("a cache of no vertices holds something")
	}
	none.put(100, e(1)) // must not panic
}
