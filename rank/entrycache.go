package rank

import (
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/hugemem"
	"github.com/dmg-hpc/dmg/verbs"
)

// entryCache is a CN's copy of index entries of its own chunk, one
// layout's (out or in), kept from the iteration that first reads them to
// the end of the run: the index does not change while a kernel runs. A
// task whose entries are all here skips its first round trip (the READ of
// the entries) and the index's bytes, and an in-place list then costs no
// READ at all. A dense iteration reads the index's 32 B a vertex beside
// about 4 B an edge of lists (a fifth of a kron:20 PageRank iteration's
// bytes); a sparse one merges the READs of scattered entries across the
// merge gap and reads most of the index for a frontier of one vertex in
// a few thousand.
//
// It holds the chunk's first vertices, as many as its budget takes
// (entryCacheBudget). The whole task that read an entry copies it in;
// that task is the only one holding the vertex in its iteration (a hub's
// pieces are not whole, and copy nothing), so no two workers write one
// entry, and have is a byte a vertex, not a bit, for the same reason.
type entryCache struct {
	lo   uint32
	size int
	b    []byte
	have []bool
}

// newEntryCache makes the cache of the first n vertices of [lo, ...) for
// entries of codec c, from the arena (its pages are touched only as
// entries come in).
func newEntryCache(mem *hugemem.Arena, c dmstore.EntryCodec, lo, n uint32) *entryCache {
	if n == 0 {
		return nil
	}
	return &entryCache{lo: lo, size: c.Size, b: mem.Bytes(int(n) * c.Size), have: make([]bool, n)}
}

// at is v's index in the cache, or -1 when the cache does not cover v.
func (c *entryCache) at(v uint32) int {
	if c == nil || v < c.lo || uint64(v-c.lo) >= uint64(len(c.have)) {
		return -1
	}
	return int(v - c.lo)
}

// get returns v's entry, or nil when it is not in the cache yet.
func (c *entryCache) get(v uint32) []byte {
	i := c.at(v)
	if i < 0 || !c.have[i] {
		return nil
	}
	return c.b[i*c.size : (i+1)*c.size]
}

// put copies v's entry b in, when the cache covers v.
func (c *entryCache) put(v uint32, b []byte) {
	if i := c.at(v); i >= 0 && len(b) == c.size {
		copy(c.b[i*c.size:], b)
		c.have[i] = true
	}
}

// fill reads every entry the cache covers from layout l, in READs of a
// few MiB (the chunk's index is contiguous on its MN).
func (c *entryCache) fill(ep verbs.Endpoint, l *dmstore.Layout) error {
	if c == nil {
		return nil
	}
	if err := verbs.ReadBulk(ep, c.b[:len(c.have)*c.size], l.EntryAddr(c.lo)); err != nil {
		return err
	}
	for i := range c.have {
		c.have[i] = true
	}
	return nil
}

// bytes is what the cache holds room for.
func (c *entryCache) bytes() uint64 {
	if c == nil {
		return 0
	}
	return uint64(len(c.b) + len(c.have))
}

// entryCaches makes the engine's entry caches once (the first fetcher
// asks), for the layouts the store has, within Config.CNMem.
func (e *engine) entryCaches() [2]*entryCache {
	if e.ecacheMade || e.cfg.NoEntryCache {
		return e.ecache
	}
	e.ecacheMade = true
	ls := []*dmstore.Layout{e.st.Out, e.st.In}
	var sizes []int
	for _, l := range ls {
		if l != nil {
			sizes = append(sizes, l.Codec.Size)
		}
	}
	n := entryCacheBudget(e.cfg.CNMem, e.cacheBytes(), e.hi-e.lo, sizes)
	for s, l := range ls {
		if l != nil {
			e.ecache[s] = newEntryCache(&e.mem, l.Codec, e.lo, n)
		}
	}
	return e.ecache
}

// prefillEntries fills the entry cache of the side the dense iterations
// read first, the in-entries where the kernel pulls over an in-layout,
// else the out-entries, with one bulk read at set-up: the first dense
// iteration then finds them kept, as every later one does, instead of
// reading them task by task, a round trip each, and copying them in. The
// other side's fill as its tasks read them.
func (e *engine) prefillEntries(ep verbs.Endpoint) error {
	if !e.ecacheMade {
		return nil
	}
	if e.st.In != nil && e.mode.pulls(&e.cfg, e.spec) {
		return e.ecache[1].fill(ep, e.st.In)
	}
	return e.ecache[0].fill(ep, e.st.Out)
}

// keptEntries is how many of the chunk's vertices the entry caches keep
// room for (the most of the two layouts).
func (e *engine) keptEntries() int {
	n := 0
	for _, c := range e.ecache {
		if c != nil {
			n = max(n, len(c.have))
		}
	}
	return n
}

// keptBytes is what the entry caches hold room for.
func (e *engine) keptBytes() uint64 { return e.ecache[0].bytes() + e.ecache[1].bytes() }

// entryCacheBudget is how many vertices of a chunk of n the entry caches
// of the given layouts (entry sizes) may each hold within a CN's memory
// budget (0: none, the whole chunk): at most a quarter of it, and no more
// than what the rest of the cache (rest bytes) leaves of three quarters,
// so that the workers' buffers, the mailboxes and the heap keep the last
// quarter. The layouts share it in proportion to their entry sizes.
func entryCacheBudget(budget, rest uint64, n uint32, sizes []int) uint32 {
	if budget == 0 {
		return n
	}
	room := budget / 4
	if left := budget / 4 * 3; left > rest {
		room = min(room, left-rest)
	} else {
		return 0
	}
	per := uint64(0)
	for _, s := range sizes {
		per += uint64(s) + 1
	}
	if per == 0 {
		return n
	}
	return uint32(min(uint64(n), room/per))
}
