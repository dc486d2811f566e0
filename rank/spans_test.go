package rank

import (
	"slices"
	"testing"

	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/verbs"
)

func TestTaskSpans(t *testing.T) {
	b := func(lo, hi uint32) dmstore.Batch { return dmstore.Batch{Lo: lo, Hi: hi} }
	four := []dmstore.Batch{b(100, 110), b(110, 120), b(120, 130), b(130, 135)}
	for _, c := range []struct {
		name string
		lbs  []dmstore.Batch
		n    int
		want []vertexRun
	}{
		{"none", nil, 8, nil},
		{"batch per span", four, 10, []vertexRun{{100, 110}, {110, 120}, {120, 130}, {130, 135}}},
		{"under a batch", four, 3, []vertexRun{{100, 110}, {110, 120}, {120, 130}, {130, 135}}},
		{"two together", four, 20, []vertexRun{{100, 120}, {120, 135}}},
		{"whole batches only", four, 25, []vertexRun{{100, 120}, {120, 135}}},
		{"all", four, 35, []vertexRun{{100, 135}}},
		{"more than all", four, 1 << 20, []vertexRun{{100, 135}}},
		{"a gap starts a span", []dmstore.Batch{b(0, 4), b(8, 12)}, 100, []vertexRun{{0, 4}, {8, 12}}},
	} {
		if got := taskSpans(c.lbs, c.n); !slices.Equal(got, c.want) {
			t.Errorf("%s: taskSpans(n=%d) = %v, want %v", c.name, c.n, got, c.want)
		}
	}
}

// roundTrips is a network that prices a round trip at rt bytes (the
// engine asks nothing else of it here).
type roundTrips struct {
	verbs.Network
	rt int
}

func (r roundTrips) RoundTripBytes() int { return r.rt }

func TestTaskVertices(t *testing.T) {
	// A store of n vertices in two chunks, with 32-byte entries and
	// lists of the given bytes in all.
	store := func(n uint32, lists uint64) *Store {
		return &Store{Out: &dmstore.Layout{N: n, Codec: dmstore.EntryCodec{Size: 32},
			Config:  dmstore.LayoutConfig{Bounds: []uint32{0, n / 2, n}},
			Batches: []dmstore.Batch{{EdgeBytes: lists / 2}, {EdgeBytes: lists - lists/2}}}}
	}
	kron20 := store(1<<20, 31_399_382*4) // 32 + 119 B a vertex
	for _, c := range []struct {
		name       string
		net        verbs.Network
		st         *Store
		goroutines int
		want       int
	}{
		{"a network that does not say", nil, kron20, 1, 1024},
		{"rdma, shm: no price", roundTrips{rt: 0}, kron20, 1, 1024},
		{"tcp on kron:20", roundTrips{rt: 1 << 20}, kron20, 1, 7168},
		{"tcp on a sparse graph", roundTrips{rt: 1 << 20}, store(1<<20, 2<<20), 1, 31744},
		{"at most 64 Ki", roundTrips{rt: 1 << 30}, store(1<<24, 0), 1, 64 << 10},
		{"at least a loading batch", roundTrips{rt: 1 << 10}, kron20, 1, 1024},
		{"8 tasks a goroutine", roundTrips{rt: 1 << 20}, kron20, 16, 4096},
		{"many goroutines: a loading batch", roundTrips{rt: 1 << 20}, kron20, 256, 1024},
		{"no vertices", roundTrips{rt: 1 << 20}, store(0, 0), 1, 1024},
	} {
		if got := taskVertices(c.net, c.st, c.goroutines); got != c.want {
			t.Errorf("%s: taskVertices = %d, want %d", c.name, got, c.want)
		}
	}
}
