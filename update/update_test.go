package update_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/reduce"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// A one-chunk world on one MN: n vertices whose value and inbox words,
// edge records and mailboxes live in the MN's pool.
type rig struct {
	n        uint32
	inbox    verbs.Addr // n words
	value    verbs.Addr // n words
	segs     verbs.Addr // edge records
	mb       *update.Mailboxes
	poolSize uint64
}

func newRig(n uint32, segBytes, valCap, refCap, block uint64) *rig {
	r := &rig{n: n}
	r.inbox, _ = verbs.MakeAddr(0, 0)
	r.value = r.inbox.Add(8 * uint64(n))
	r.segs = r.value.Add(8 * uint64(n))
	start := []uint64{16*uint64(n) + segBytes}
	mb, end, err := update.PlanMailboxes([]uint32{0, n}, []int{0}, start, valCap, refCap, block)
	if err != nil {
		panic(err)
	}
	r.mb, r.poolSize = mb, end[0]
	return r
}

func (r *rig) ChunkOf(uint32) int            { return 0 }
func (r *rig) InboxAddr(v uint32) verbs.Addr { return r.inbox.Add(8 * uint64(v)) }
func (r *rig) ValueAddr(v uint32) verbs.Addr { return r.value.Add(8 * uint64(v)) }

// run opens the rig's pool on an MN and runs fn on the CN.
func (r *rig) run(t *testing.T, fn func(net verbs.Network) error) {
	t.Helper()
	cluster := memfab.NewCluster()
	err := spmd.RunLocal(2, func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, spmd.Roles{CN: 1, MN: 1})
		if err != nil {
			return err
		}
		pool := uint64(0)
		if w.Role == spmd.MN {
			pool = r.poolSize
		}
		net, err := memfab.Open(cluster, w, verbs.Config{PoolBytes: pool})
		if err != nil {
			return err
		}
		defer net.Close()
		if w.Role == spmd.MN {
			return w.Comm.Barrier()
		}
		defer w.Comm.Barrier()
		return fn(net)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) words(ep verbs.Endpoint, a verbs.Addr) ([]uint64, error) {
	b := make([]byte, 8*r.n)
	if err := verbs.ReadBulk(ep, b, a); err != nil {
		return nil, err
	}
	w := make([]uint64, r.n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return w, nil
}

var sumOp = reduce.OpOf(algo.Spec{Reduce: algo.Sum, Float: true})
var minOp = reduce.OpOf(algo.Spec{Reduce: algo.Min, Identity: math.MaxUint64})

// drainVal adds every pair of the ValRD mailbox to got (float sums).
func (r *rig) drainVal(t *testing.T, ep verbs.Endpoint, got []float64) {
	t.Helper()
	used, _, err := update.Used(ep, r.mb.Val[0], r.mb.ValCap)
	if err != nil {
		t.Fatal(err)
	}
	bb := r.mb.ValBlockBytes()
	used = used / bb * bb
	b := make([]byte, used)
	if err := verbs.ReadBulk(ep, b, update.Records(r.mb.Val[0], 0)); err != nil {
		t.Fatal(err)
	}
	for p := uint64(0); p < used; p += bb {
		dst, val, err := r.mb.ValBlockPairs(b[p:p+bb], 0, r.n, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range dst {
			got[d] += math.Float64frombits(val[i])
		}
	}
}

// Whatever the mailbox size, every ValRD pair arrives exactly once: in a
// block of the mailbox, or spilled to the inbox words by direct update;
// several senders share the mailbox.
func TestValRDLosesNothing(t *testing.T) {
	const n, senders, sends = 50, 3, 3000
	for _, c := range []struct {
		valCap, block uint64
		spills        bool
	}{{20, 1, true}, {200, 2, true}, {1 << 17, 16, false}, {1 << 20, 4096, false}} {
		r := newRig(n, 0, c.valCap, update.RefRec, c.block)
		want, got := make([]float64, n), make([]float64, n)
		var total update.Stats
		r.run(t, func(net verbs.Network) error {
			var mu sync.Mutex
			var wg sync.WaitGroup
			errs := make(chan error, senders)
			for s := range senders {
				ep, err := net.NewEndpoint()
				if err != nil {
					return err
				}
				rng := rand.New(rand.NewPCG(uint64(s), c.valCap))
				var dst []uint32
				for range sends {
					dst = append(dst, uint32(rng.IntN(n)))
				}
				for _, v := range dst {
					want[v]++
				}
				wg.Go(func() {
					var st update.Stats
					d, err := update.NewDirect(ep, sumOp, r, nil, update.DirectConfig{}, &st)
					if err == nil {
						snd := update.NewSender(ep, sumOp, r.mb, d, update.SenderConfig{Pairs: 7, RecordBytes: 4}, &st)
						for i := 0; i < len(dst) && err == nil; i += 10 {
							err = snd.ValSegment(0, dst[i:min(len(dst), i+10)], nil, math.Float64bits(1), nil)
						}
						if err == nil {
							err = snd.Flush()
						}
					}
					mu.Lock()
					total.Add(st)
					mu.Unlock()
					errs <- err
				})
			}
			wg.Wait()
			for range senders {
				if err := <-errs; err != nil {
					return err
				}
			}
			ep, err := net.NewEndpoint()
			if err != nil {
				return err
			}
			r.drainVal(t, ep, got)
			in, err := r.words(ep, r.inbox)
			for v, x := range in {
				got[v] += math.Float64frombits(x)
			}
			return err
		})
		for v := range want {
			if got[v] != want[v] {
				t.Fatalf("cap %d block %d: vertex %d received %g, sent %g (%+v)", c.valCap, c.block, v, got[v], want[v], total)
			}
		}
		if (total.Spills > 0) != c.spills {
			t.Errorf("cap %d block %d: %d spills, want spills %v", c.valCap, c.block, total.Spills, c.spills)
		}
	}
}

// RefRD under concurrency: senders flush items into a mailbox while its
// owner pulls what is complete; after the senders are done the owner takes
// the rest. Every edge of every item arrives exactly once (pulled, taken
// after the barrier, or spilled to direct update) whatever the mailbox
// size.
func TestRefRDPullWhileSending(t *testing.T) {
	const n, senders, items = 64, 3, 300
	for _, capItems := range []uint64{1, 5, 10000} {
		r := newRig(n, 4*8*n, 20, capItems*update.RefRec, 1)
		want, got := make([]float64, n), make([]float64, n)
		var spills uint64
		r.run(t, func(net verbs.Network) error {
			eps := make([]verbs.Endpoint, senders+1)
			for i := range eps {
				var err error
				if eps[i], err = net.NewEndpoint(); err != nil {
					return err
				}
			}
			// The segments: record i is destination i mod n.
			recs := make([]byte, 4*8*n)
			for i := range 8 * n {
				binary.LittleEndian.PutUint32(recs[4*i:], uint32(i%n))
			}
			if err := verbs.WriteBulk(eps[0], r.segs, recs); err != nil {
				return err
			}
			cur := r.mb.RefCursor(0)
			apply := func(ep verbs.Endpoint, upto uint64) error {
				for !cur.Done(upto) {
					its, _, err := cur.Take(ep, upto, 240, nil, 4, 1<<20, n, net, nil)
					if err != nil {
						return err
					}
					seg := make([]byte, update.SegmentBytes(its, 4))
					offs, err := update.FetchSegments(ep, its, 4, seg, nil)
					if err != nil {
						return err
					}
					if err := ep.Flush(); err != nil {
						return err
					}
					for i, it := range its {
						dst, _ := update.DecodeRecords(seg[offs[i]:offs[i]+4*int(it.Edges)], 4, false, nil, nil)
						for _, d := range dst {
							got[d] += math.Float64frombits(it.Val)
						}
					}
				}
				return nil
			}
			stop := make(chan struct{})
			pulled := make(chan error, 1)
			go func() {
				for {
					upto, err := cur.Pullable(eps[senders], 1)
					if err == nil {
						err = apply(eps[senders], upto)
					}
					if err != nil {
						pulled <- err
						return
					}
					select {
					case <-stop:
						pulled <- nil
						return
					default:
					}
				}
			}()
			var mu sync.Mutex
			errs := make(chan error, senders)
			for s := range senders {
				rng := rand.New(rand.NewPCG(uint64(s), capItems))
				var its []update.RefItem
				for range items {
					lo, k := rng.IntN(4*n), 1+rng.IntN(4*n)
					for i := lo; i < lo+k; i++ {
						want[i%n]++
					}
					its = append(its, update.RefItem{Seg: r.segs.Add(uint64(4 * lo)), Edges: uint32(k), Src: uint32(s), Val: math.Float64bits(1)})
				}
				go func() {
					var st update.Stats
					d, err := update.NewDirect(eps[s], sumOp, r, nil, update.DirectConfig{}, &st)
					if err == nil {
						snd := update.NewSender(eps[s], sumOp, r.mb, d, update.SenderConfig{Items: 4, RecordBytes: 4, Commit: true}, &st)
						for _, it := range its {
							if err = snd.Ref(0, it); err != nil {
								break
							}
						}
						if err == nil {
							err = snd.Flush()
						}
					}
					mu.Lock()
					spills += st.Spills
					mu.Unlock()
					errs <- err
				}()
			}
			for range senders {
				if err := <-errs; err != nil {
					return err
				}
			}
			close(stop)
			if err := <-pulled; err != nil {
				return err
			}
			upto, err := cur.Drainable(eps[0])
			if err != nil {
				return err
			}
			if err := apply(eps[0], upto); err != nil {
				return err
			}
			in, err := r.words(eps[0], r.inbox)
			for v, x := range in {
				got[v] += math.Float64frombits(x)
			}
			return err
		})
		for v := range want {
			if got[v] != want[v] {
				t.Fatalf("cap %d items: vertex %d received %g, sent %g", capItems, v, got[v], want[v])
			}
		}
		if capItems < 10 && spills == 0 {
			t.Errorf("cap %d items: no spills", capItems)
		}
		if capItems == 10000 && spills != 0 {
			t.Errorf("cap %d items: %d spills", capItems, spills)
		}
	}
}

// Direct updates with touched logs: several updaters race on overlapping
// destinations with minima; every destination touched appears in the log
// exactly once, and its inbox word holds the smallest candidate sent to it.
// With pruning, candidates not below the current value are not sent,
// whether the values are read one by one or as a chunk's range (gap), into
// the updater's buffer or as views of a read merger's.
func TestDirectLogsFirstTouch(t *testing.T) {
	const n, updaters = 200, 4
	for _, tc := range []struct {
		prune, views bool
		gap          int
	}{{false, false, 0}, {true, false, 0}, {true, false, 8}, {true, false, 1 << 20}, {true, true, 0}, {true, true, 8}, {true, true, 1 << 20}} {
		prune := tc.prune
		r := newRig(n, 0, 20, update.RefRec, 1)
		want := make([]uint64, n)
		for i := range want {
			want[i] = math.MaxUint64
		}
		values := make([]uint64, n)
		for i := range values {
			values[i] = math.MaxUint64
			if prune && i%2 == 0 {
				values[i] = 50 // candidates ≥ 50 change nothing here
			}
		}
		var logged, pruned uint64
		r.run(t, func(net verbs.Network) error {
			ep0, err := net.NewEndpoint()
			if err != nil {
				return err
			}
			b := make([]byte, 16*n)
			for v := range n {
				binary.LittleEndian.PutUint64(b[8*v:], math.MaxUint64)
				binary.LittleEndian.PutUint64(b[8*(n+v):], values[v])
			}
			if err := verbs.WriteBulk(ep0, r.inbox, b); err != nil {
				return err
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			errs := make(chan error, updaters)
			for u := range updaters {
				ep, err := net.NewEndpoint()
				if err != nil {
					return err
				}
				rng := rand.New(rand.NewPCG(uint64(u), 9))
				var dst []uint32
				var cands []uint64
				for range 500 {
					v := uint32(rng.IntN(n))
					c := uint64(rng.IntN(100))
					dst, cands = append(dst, v), append(cands, c)
					if c < values[v] {
						want[v] = min(want[v], c)
					}
				}
				wg.Go(func() {
					var st update.Stats
					cfg := update.DirectConfig{Log: true, Prune: prune, Pending: 37, Gap: tc.gap}
					if tc.views {
						m, err := verbs.NewReadMerger(ep, net, tc.gap, 1<<20)
						if err != nil {
							errs <- err
							return
						}
						cfg.Reader = m
					}
					d, err := update.NewDirect(ep, minOp, r, r.mb, cfg, &st)
					if err == nil {
						if err = d.AddSegment(dst, nil, 0, cands); err == nil {
							err = d.Flush()
						}
					}
					mu.Lock()
					logged += st.Logged
					pruned += st.Pruned
					mu.Unlock()
					errs <- err
				})
			}
			wg.Wait()
			for range updaters {
				if err := <-errs; err != nil {
					return err
				}
			}
			in, err := r.words(ep0, r.inbox)
			if err != nil {
				return err
			}
			used, over, err := update.Used(ep0, r.mb.Log[0], r.mb.LogCap[0])
			if err != nil || over {
				t.Errorf("log: %d bytes, overflow %v, %v", used, over, err)
				return err
			}
			lb := make([]byte, used)
			if err := verbs.ReadBulk(ep0, lb, update.Records(r.mb.Log[0], 0)); err != nil {
				return err
			}
			ids, err := update.DecodeLog(lb, 0, n, nil)
			if err != nil {
				return err
			}
			slices.Sort(ids)
			var touched []uint32
			for v := range uint32(n) {
				if want[v] != math.MaxUint64 {
					touched = append(touched, v)
				}
				if in[v] != want[v] {
					t.Errorf("prune %v: vertex %d's inbox holds %d, want %d", prune, v, in[v], want[v])
				}
			}
			if !slices.Equal(ids, touched) {
				t.Errorf("prune %v: log holds %v, want each touched vertex once: %v", prune, ids, touched)
			}
			return nil
		})
		if uint64(len(r.mb.Log)) == 0 || logged == 0 {
			t.Errorf("prune %v: nothing logged", prune)
		}
		if prune != (pruned > 0) {
			t.Errorf("prune %v: %d candidates pruned", prune, pruned)
		}
	}
}

func TestStatsRoundTrip(t *testing.T) {
	var s update.Stats
	v := make([]float64, update.NumStats)
	for i := range v {
		v[i] = float64(i + 1)
	}
	s = update.StatsFrom(v)
	w := make([]float64, update.NumStats)
	s.Put(w)
	if !slices.Equal(v, w) {
		t.Fatalf("Put(StatsFrom(v)) = %v, want %v", w, v)
	}
	var z update.Stats
	z.Add(s)
	z.Add(s)
	if z.Sub(s) != s {
		t.Fatal("Add/Sub")
	}
}
