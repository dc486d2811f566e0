package dmstore

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// A layout planned from degree bounds (RoomRange) gives every batch at
// least the bytes its lists take, exactly those when the bounds are the
// degrees and no list can need an overflow table; loaded with
// LoadOptions.Rooms it reads back as the graph, and the load counts the
// vertices in place and with a table that a layout measured from the
// rows (Plan) counts.
func TestLoadRooms(t *testing.T) {
	kron, _, err := csr.Open("kron:9:8", csr.Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	kronU, _, _ := csr.Open("kron:9:8", csr.Options{Seed: 4, Undirected: true})
	hub := hubGraph(t, 700, false)
	tests := []struct {
		name   string
		g      *csr.Graph
		roles  spmd.Roles
		cfg    LayoutConfig
		extra  int  // each bound is the degree plus up to extra
		tables bool // lists may need overflow tables
	}{
		{"kron-c2m2-exact", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{AttrBytes: []int{8}}, 0, false},
		{"kron-c2m2", kron, spmd.Roles{CN: 2, MN: 2}, LayoutConfig{AttrBytes: []int{8}}, 3, false},
		{"kron-u-c3m2-e64", kronU, spmd.Roles{CN: 3, MN: 2}, LayoutConfig{EntrySize: 64, BatchVertices: 100}, 5, false},
		{"kron-u-c1m3-e16", kronU, spmd.Roles{CN: 1, MN: 3}, LayoutConfig{EntrySize: 16, Granule: 1024}, 2, false},
		{"hub-c5m2-e16", hub, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 64}, 0, true},
		{"hub-c5m2-e16-extra", hub, spmd.Roles{CN: 5, MN: 2}, LayoutConfig{EntrySize: 16, BatchVertices: 64}, 40, true},
		{"hub-noinplace", hub, spmd.Roles{CN: 2, MN: 1}, LayoutConfig{NoInPlace: true}, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, cfg := tc.g, tc.cfg
			cfg.NumMN, cfg.Bounds = tc.roles.MN, evenBounds(g.N, tc.roles.CN)
			r := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			bound := make([]uint32, g.N)
			var edges uint64
			for v := range g.N {
				bound[v] = uint32(g.Degree(v)) + uint32(r.IntN(tc.extra+1))
				edges += uint64(bound[v])
			}
			measured, err := Plan(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			rooms := make([]ChunkSizes, tc.roles.CN)
			for k := range rooms {
				lo, hi := cfg.Bounds[k], cfg.Bounds[k+1]
				if rooms[k], err = RoomRange(bound[lo:hi], lo, g.N, false, cfg, k, lo, hi); err != nil {
					t.Fatal(err)
				}
				size, err := SizeChunk(g, cfg, k)
				if err != nil {
					t.Fatal(err)
				}
				for i, b := range size.EdgeBytes {
					room := rooms[k].EdgeBytes[i]
					if room < b || (room != b && tc.extra == 0 && !tc.tables) {
						t.Fatalf("chunk %d batch %d: room %d for %d bytes of lists", k, i, room, b)
					}
				}
			}
			l, err := PlanSizes(g.N, edges, false, cfg, rooms)
			if err != nil {
				t.Fatal(err)
			}
			var back *csr.Graph
			var inPlace, overflow uint64
			loaded := make([]*LoadReport, tc.roles.CN)
			onFabric(t, tc.roles, l.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
				if err := l.CheckCapacity(poolSizes(net)); err != nil {
					return err
				}
				rep, err := l.Load(g, w.Index, eps, LoadOptions{Rooms: true})
				if err != nil {
					return err
				}
				loaded[w.Index] = rep
				if err := w.Group.Barrier(); err != nil {
					return err
				}
				if w.Index == 0 {
					back, err = l.ReadGraph(eps[0])
				}
				return err
			})
			for _, rep := range loaded {
				inPlace, overflow = inPlace+rep.InPlace, overflow+rep.Overflow
			}
			checkReadBack(t, back, g, 0, g.N)
			if inPlace != measured.InPlace || overflow != measured.Overflow {
				t.Errorf("loaded %d in place and %d with a table; measured %d and %d", inPlace, overflow, measured.InPlace, measured.Overflow)
			}
			if tc.tables && overflow == 0 {
				t.Errorf("no list needed a table")
			}
		})
	}
}

// A layout of rooms loaded as if it were measured fails on the first
// batch whose lists take less than its room, and packed lists have no
// room, nor have a naive layout's (whose offsets give the lists their
// lengths).
func TestRoomsRefused(t *testing.T) {
	g := hubGraph(t, 300, false)
	cfg := LayoutConfig{NumMN: 1, Bounds: evenBounds(g.N, 1)}
	bound := make([]uint32, g.N)
	for v := range g.N {
		bound[v] = uint32(g.Degree(v)) + 20
	}
	rooms, err := RoomRange(bound, 0, g.N, false, cfg, 0, 0, g.N)
	if err != nil {
		t.Fatal(err)
	}
	l, err := PlanSizes(g.N, g.NumEdges()+20*uint64(g.N), false, cfg, []ChunkSizes{rooms})
	if err != nil {
		t.Fatal(err)
	}
	var loadErr error
	onFabric(t, spmd.Roles{CN: 1, MN: 1}, l.Needed(), func(w *spmd.World, net verbs.Network, eps []verbs.Endpoint) error {
		_, loadErr = l.Load(g, 0, eps, LoadOptions{})
		return nil
	})
	if loadErr == nil || !strings.Contains(loadErr.Error(), "the layout planned") {
		t.Errorf("a layout of rooms loaded without Rooms: %v", loadErr)
	}
	for _, c := range []LayoutConfig{{Packed: true}, {Naive: true}} {
		c.NumMN, c.Bounds = 1, cfg.Bounds
		if _, err := RoomRange(bound, 0, g.N, false, c, 0, 0, g.N); err == nil {
			t.Errorf("RoomRange sized the lists of %+v", c)
		}
	}
	if _, err := RoomRange(bound[:10], 0, g.N, false, LayoutConfig{NumMN: 1, Bounds: cfg.Bounds}, 0, 0, g.N); err == nil {
		t.Errorf("RoomRange sized vertices without a bound")
	}
}
