package csr

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestCutRounds(t *testing.T) {
	for _, c := range []struct {
		name     string
		deg, in  []uint32
		lo       uint32
		r        int
		align    uint32
		want     []uint32
		wantRecs []uint64 // records in each round
	}{
		{"even", []uint32{1, 1, 1, 1}, nil, 10, 2, 1, []uint32{10, 12, 14}, []uint64{2, 2}},
		{"in-degrees count", []uint32{4, 0, 0, 0}, []uint32{0, 0, 0, 4}, 0, 2, 1, []uint32{0, 1, 4}, []uint64{4, 4}},
		{"aligned", []uint32{1, 1, 1, 1, 1, 1, 1, 1}, nil, 0, 4, 2, []uint32{0, 2, 4, 6, 8}, []uint64{2, 2, 2, 2}},
		{"a hub fills rounds", []uint32{9, 1, 1, 1}, nil, 0, 3, 1, []uint32{0, 1, 1, 4}, []uint64{9, 0, 3}},
		{"more rounds than steps", []uint32{1, 1, 1}, nil, 0, 5, 2, []uint32{0, 2, 2, 2, 3, 3}, []uint64{2, 0, 0, 1, 0}},
		{"no edges", []uint32{0, 0, 0}, nil, 5, 2, 1, []uint32{5, 6, 8}, []uint64{0, 0}},
		{"empty chunk", nil, nil, 7, 3, 4, []uint32{7, 7, 7, 7}, []uint64{0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hi := c.lo + uint32(len(c.deg))
			got := cutRounds(c.deg, c.in, c.lo, hi, c.r, c.align)
			if !slices.Equal(got, c.want) {
				t.Fatalf("cutRounds = %v, want %v", got, c.want)
			}
			for k := range c.r {
				var recs uint64
				for v := got[k]; v < got[k+1]; v++ {
					recs += uint64(c.deg[v-c.lo])
					if c.in != nil {
						recs += uint64(c.in[v-c.lo])
					}
					if r := roundOf(got, uint64(v)); r != k {
						t.Fatalf("roundOf(%d) = %d, want %d", v, r, k)
					}
				}
				if recs != c.wantRecs[k] {
					t.Fatalf("round %d holds %d records, want %d", k, recs, c.wantRecs[k])
				}
			}
		})
	}
}

func TestLayRounds(t *testing.T) {
	// Two CNs, two chunks of a part in each of two rounds: rooms[c][g],
	// part g = o·2+k.
	rooms := [][]uint64{{1, 2, 3, 4}, {5, 6, 7, 8}}
	l := layRounds(rooms, []int{0, 1, 0, 1}, 2)
	// Round 0: chunk 0 from CN 0 (1), CN 1 (5); chunk 1 from CN 0 (3),
	// CN 1 (7): 16. Round 1: 2, 6, 4, 8: 20.
	want := [][]uint64{{0, 0, 6, 8}, {1, 2, 9, 12}}
	if !slices.EqualFunc(l.at, want, slices.Equal) || l.recs != 20 {
		t.Fatalf("at %v, largest round %d; want %v, 20", l.at, l.recs, want)
	}
}

func TestRoundWindows(t *testing.T) {
	deg := []uint32{10, 10, 10, 10, 0, 0}
	so := ShareOptions{RowBytes: 144, Align: 1}
	// Rounds [0, 3) and [3, 6) of the share [0, 6); 4 B an edge and 32 a
	// row: 144 B is two vertices of 10 edges.
	if got, want := roundWindows(deg, nil, []uint32{0, 3, 6}, false, so), []uint32{0, 2, 3, 6}; !slices.Equal(got, want) {
		t.Fatalf("windows %v, want %v", got, want)
	}
	if got, want := roundWindows(deg, nil, []uint32{0, 6, 6}, false, ShareOptions{}), []uint32{0, 6}; !slices.Equal(got, want) {
		t.Fatalf("no RowBytes: windows %v, want %v", got, want)
	}
	if got, want := roundWindows(nil, nil, []uint32{4, 4, 4}, false, so), []uint32{4, 4}; !slices.Equal(got, want) {
		t.Fatalf("an empty share: windows %v, want %v", got, want)
	}
	// WindowBytes below RowBytes cuts every round at it: 72 B is one
	// vertex of 10 edges.
	small := ShareOptions{RowBytes: 1000, WindowBytes: 72, Align: 1}
	if got, want := roundWindows(deg, nil, []uint32{0, 3, 6}, false, small), []uint32{0, 1, 2, 3, 4, 6}; !slices.Equal(got, want) {
		t.Fatalf("WindowBytes: windows %v, want %v", got, want)
	}
}

// TestWindowBytes: a staged share past RowBytes is cut at WindowBytes
// when its windows read only their own records, and at RowBytes when
// each window's pass goes over the CN's kept edges; a share within
// RowBytes is built whole either way.
func TestWindowBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     Options
		so    ShareOptions
		least int // windows of the first CN, at least
		most  int // and at most (0: built whole)
	}{
		{"cut small", Options{KeepBytes: -1}, ShareOptions{In: true, RowBytes: 120_000, WindowBytes: 10_000, Align: 4}, 40, 1 << 20},
		{"at RowBytes", Options{KeepBytes: -1}, ShareOptions{In: true, RowBytes: 120_000, Align: 4}, 2, 10},
		{"kept edges", Options{}, ShareOptions{In: true, RowBytes: 120_000, WindowBytes: 10_000, Align: 4}, 2, 10},
		{"within RowBytes", Options{KeepBytes: -1}, ShareOptions{In: true, RowBytes: 1 << 30, WindowBytes: 10_000, Align: 4}, 0, 0},
		{"rounds", Options{KeepBytes: -1}, ShareOptions{In: true, RowBytes: 120_000, WindowBytes: 10_000, StageBytes: 900_000, Align: 4}, 40, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			shares, _, err := stagedShares(t, "kron:13", c.o, c.so, 2, 1, "balanced", nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			if sh := shares[0]; sh.Windowed() {
				n = len(sh.win.bounds) - 1
			}
			if n < c.least || n > c.most {
				t.Fatalf("%d windows, want %d to %d", n, c.least, c.most)
			}
		})
	}
}

// A CN whose sweep fails in rounds hands its error to the others at
// their next round: no CN waits for it.
func TestRoundsFailure(t *testing.T) {
	for _, at := range []int{0, 1, 3} { // the failing CN's window
		shares, _, err := stagedShares(t, "kron:12", Options{KeepBytes: -1}, ShareOptions{In: true, StageBytes: 200_000, RowBytes: 40_000, Align: 4}, 3, 2, "balanced", nil)
		if err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		errs := make([]error, len(shares))
		var wg sync.WaitGroup
		for k, sh := range shares {
			wg.Go(func() {
				i := 0
				errs[k] = sh.Windows(func(g, in *Graph, lo, hi uint32) error {
					if i++; k == 1 && i > at {
						return boom
					}
					return nil
				})
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("window %d: a CN still waits 20 s after CN 1 failed", at)
		}
		if !errors.Is(errs[1], boom) {
			t.Fatalf("window %d: CN 1's error %v, want boom", at, errs[1])
		}
		for k, err := range errs {
			if x := shares[k].win.sweep; k != 1 && err == nil && x.next != len(x.seq) {
				t.Fatalf("window %d: CN %d ended its sweep early without an error", at, k)
			}
		}
	}
}

// TestOwnerIndex: the bucketed lookup finds the owner the binary search
// does, for every id, with empty ranges, bounds inside and on bucket
// edges, and id spaces past a bucket per id; and a mask of the owners
// picked (every other one, the last one, none) lets through every id of
// a picked owner.
func TestOwnerIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name string
		b    owners
	}{
		{"one owner", owners{0, 10}},
		{"empty ranges", owners{0, 0, 5, 5, 5, 9, 12, 12}},
		{"a bound at each id", owners{0, 1, 2, 3, 4}},
		{"past 2^16 ids", owners{0, 70000, 70001, 131072, 200000}},
		{"random, many owners", func() owners {
			b := owners{0}
			for range 130 {
				b = append(b, b[len(b)-1]+uint32(r.IntN(3000)))
			}
			return b
		}()},
	} {
		x := c.b.index()
		for v := uint64(0); v < uint64(c.b[len(c.b)-1])+3; v++ {
			if got, want := x.of(v), c.b.of(v); got != want {
				t.Fatalf("%s: of(%d) = %d, want %d", c.name, v, got, want)
			}
		}
		owners := len(c.b) - 1
		for _, pick := range []func(g int) bool{
			func(g int) bool { return g%2 == 0 },
			func(g int) bool { return g == owners-1 },
			func(int) bool { return false },
		} {
			want := make([]bool, owners)
			for g := range want {
				want[g] = pick(g)
			}
			m, passed := x.mask(want), 0
			for v := uint64(0); v < uint64(c.b[len(c.b)-1]); v++ {
				may := x.may(m, v)
				if want[x.of(v)] && !may {
					t.Fatalf("%s: id %d of owner %d, picked, is masked", c.name, v, x.of(v))
				}
				if may {
					passed++
				}
			}
			if picked := slices.Index(want, true) >= 0; !picked && passed > 0 {
				t.Fatalf("%s: %d ids pass a mask of no owner", c.name, passed)
			}
		}
	}
}

// recordLog is a staging memory that logs the edge records (of codec
// c) read from its records' region (from base).
type recordLog struct {
	Staging
	c    recCodec
	base uint64
	mu   sync.Mutex
	recs []byte
}

func (l *recordLog) Read(b []byte, off uint64) error {
	if err := l.Staging.Read(b, off); err != nil || off < l.base {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, b...)
	return nil
}

// take returns the records logged, decoded as records of the part from
// lo, and empties the log.
func (l *recordLog) take(lo uint32) []edgeRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	var recs []edgeRec
	for b := l.recs; len(b) >= l.c.bytes; b = b[l.c.bytes:] {
		recs = append(recs, l.c.get(b, uint64(lo)))
	}
	l.recs = nil
	return recs
}

// TestStagedWindowsReadOwn: a staged share's windows, with one round
// and with several, each read the records routed to them, not their
// round's: every record a window reads from the staging memory has an
// end in the window.
func TestStagedWindowsReadOwn(t *testing.T) {
	for _, c := range []struct {
		name string
		so   ShareOptions
		rec  uint64 // bytes a record
	}{
		{"windows", ShareOptions{In: true, RowBytes: 60_000, Align: 4}, 6},
		{"rounds and windows", ShareOptions{In: true, RowBytes: 60_000, StageBytes: 900_000, Align: 4}, 6},
		{"rounds and windows, 8-byte records", ShareOptions{In: true, RowBytes: 60_000, StageBytes: 900_000, Align: 4}, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := func(int) *readConfig { return &readConfig{wideRecords: c.rec == 8} }
			shares, _, err := stagedShares(t, "kron:13", Options{KeepBytes: -1}, c.so, 2, 1, "balanced", rc)
			if err != nil {
				t.Fatal(err)
			}
			errs := make([]error, len(shares))
			var wg sync.WaitGroup
			for k, sh := range shares {
				if !sh.Windowed() || len(sh.win.bounds) < 4 {
					t.Fatalf("CN %d: %d windows, want 3 or more", k, len(sh.win.bounds)-1)
				}
				s := sh.win.sweep.s
				if s.p.recBytes() != c.rec {
					t.Fatalf("CN %d: %d-byte records, want %d", k, s.p.recBytes(), c.rec)
				}
				log := &recordLog{Staging: s.edges, c: s.p.codec, base: s.ebase}
				s.edges = log
				wg.Go(func() {
					var read uint64
					errs[k] = sh.Windows(func(g, in *Graph, lo, hi uint32) error {
						recs := log.take(lo)
						for _, e := range recs {
							if (e.s < uint64(lo) || e.s >= uint64(hi)) && (e.d < uint64(lo) || e.d >= uint64(hi)) {
								return fmt.Errorf("window [%d, %d) read edge %d→%d", lo, hi, e.s, e.d)
							}
						}
						read += uint64(len(recs))
						return nil
					})
					if errs[k] == nil && read < g0(sh) {
						errs[k] = fmt.Errorf("the windows read %d records for %d out-edges", read, g0(sh))
					}
				})
			}
			wg.Wait()
			for k, err := range errs {
				if err != nil {
					t.Fatalf("CN %d: %v", k, err)
				}
			}
		})
	}
}

// g0 is a share's out-edges before de-duplication (its degrees summed).
func g0(sh *Share) uint64 {
	var n uint64
	for _, d := range sh.Degrees {
		n += uint64(d)
	}
	return n
}
