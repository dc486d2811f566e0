package update_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// sumProgram adds float candidates (integers, so sums are exact).
var sumProgram = algo.PageRankProgram(1, 0.85)

// Whatever the mailbox size, every ValRD pair arrives exactly once: in the
// mailbox, or spilled to the inbox words by direct update.
func TestValRDLosesNothing(t *testing.T) {
	for _, capBytes := range []uint64{0, 12, 120, 1 << 16} {
		const n = 50
		g, _, err := csr.Open("uniform:50:10", csr.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		valCap := max(capBytes, update.ValRec)
		lcfg := csr.LayoutConfig{NumMN: 1, Bounds: []uint32{0, n}, AttrBytes: []int{8, 8}, Reserve: update.Reserve(1, 1, valCap, update.RefRec)}
		l, err := csr.Plan(g, lcfg)
		if err != nil {
			t.Fatal(err)
		}
		mb := update.PlanMailboxes(l, valCap, update.RefRec)
		want := make([]float64, n)
		got := make([]float64, n)
		err = onOneCN(l, func(net verbs.Network) error {
			ep, err := net.NewEndpoint()
			if err != nil {
				return err
			}
			var st update.Stats
			inbox := func(v uint32) verbs.Addr { return l.AttrAddr(1, v) }
			d, err := update.NewDirect(ep, sumProgram, inbox, &st)
			if err != nil {
				return err
			}
			s := update.NewSender(ep, sumProgram, mb, d, update.SenderConfig{Pairs: 7, RecordBytes: 4}, &st)
			rng := rand.New(rand.NewPCG(1, capBytes))
			for range 2000 {
				v := uint32(rng.IntN(n))
				want[v]++
				if err := s.Val(0, v, math.Float64bits(1)); err != nil {
					return err
				}
			}
			if err := s.Flush(); err != nil {
				return err
			}
			if _, err := mb.DrainVal(ep, 0, func(v uint32, val uint64) { got[v] += math.Float64frombits(val) }); err != nil {
				return err
			}
			if err := addInbox(ep, n, inbox, got); err != nil {
				return err
			}
			if capBytes < 120 && st.Spills == 0 {
				t.Errorf("cap %d: no spills: %+v", capBytes, st)
			}
			if capBytes == 1<<16 && st.Spills != 0 {
				t.Errorf("cap %d: spills: %+v", capBytes, st)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for v := range want {
			if got[v] != want[v] {
				t.Fatalf("cap %d: vertex %d received %g, sent %g", capBytes, v, got[v], want[v])
			}
		}
	}
}

func TestStatsRoundTrip(t *testing.T) {
	s := update.Stats{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if update.StatsFromInt64s(s.Int64s()) != s {
		t.Fatal("Int64s round trip")
	}
	var z update.Stats
	z.Add(s)
	z.Add(s)
	if z.Sub(s) != s {
		t.Fatal("Add/Sub")
	}
}

// RefRD under concurrency: several senders flush items into a mailbox
// while its owner's puller applies what is complete; after the senders are
// done, one Pull finds the mailbox quiet and takes the rest, and the
// iteration's Drain finds nothing left. Every edge of every item arrives
// exactly once — pulled, drained or spilled to direct update — whatever
// the mailbox size.
func TestRefRDPullWhileSending(t *testing.T) {
	const (
		n       = 64
		senders = 3
		items   = 300
	)
	for _, items4Cap := range []uint64{1, 5, 10000} {
		refCap := items4Cap * update.RefRec
		g, _, err := csr.Open("uniform:64:4", csr.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		// Attribute 2 holds the edge records the items refer to: record i
		// is destination i mod n.
		lcfg := csr.LayoutConfig{NumMN: 1, Bounds: []uint32{0, n}, AttrBytes: []int{8, 8, 4 * 8},
			Reserve: update.Reserve(1, 1, update.ValRec, refCap)}
		l, err := csr.Plan(g, lcfg)
		if err != nil {
			t.Fatal(err)
		}
		mb := update.PlanMailboxes(l, update.ValRec, refCap)
		want := make([]float64, n)
		got := make([]float64, n) // pulled and drained, then the inbox
		err = onOneCN(l, func(net verbs.Network) error {
			var err error
			eps := make([]verbs.Endpoint, senders+1)
			for i := range eps {
				if eps[i], err = net.NewEndpoint(); err != nil {
					return err
				}
			}
			recs := make([]byte, 4*8*n)
			for i := range 8 * n {
				binary.LittleEndian.PutUint32(recs[4*i:], uint32(i%n))
			}
			base := l.AttrAddr(2, 0)
			if err := verbs.WriteBulk(eps[0], base, recs); err != nil {
				return err
			}
			inbox := func(v uint32) verbs.Addr { return l.AttrAddr(1, v) }
			for s := range senders {
				rng := rand.New(rand.NewPCG(uint64(s), items4Cap))
				for range items {
					lo, k := rng.IntN(4*n), 1+rng.IntN(4*n)
					for i := lo; i < lo+k; i++ {
						want[i%n]++
					}
				}
			}
			cur := mb.RefCursor(0, 4, false)
			apply := func(it update.RefItem, dst uint32, _ float64) {
				got[dst] += math.Float64frombits(sumProgram.Edge(it.Val, uint64(it.Deg), 1))
			}
			stop := make(chan struct{})
			pulled := make(chan error, 1)
			go func() {
				for {
					if _, _, err := cur.Pull(eps[senders], eps[senders], 1, apply); err != nil {
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
			errs := make(chan error, senders)
			var spills uint64
			for s := range senders {
				go func() {
					var st update.Stats
					d, err := update.NewDirect(eps[s], sumProgram, inbox, &st)
					if err != nil {
						errs <- err
						return
					}
					snd := update.NewSender(eps[s], sumProgram, mb, d, update.SenderConfig{Items: 4, RecordBytes: 4, Commit: true}, &st)
					rng := rand.New(rand.NewPCG(uint64(s), items4Cap))
					for range items {
						lo, k := rng.IntN(4*n), 1+rng.IntN(4*n)
						it := update.RefItem{Seg: base.Add(uint64(4 * lo)), Edges: uint32(k), Deg: 1, Val: math.Float64bits(1)}
						if err := snd.Ref(0, it); err != nil {
							errs <- err
							return
						}
					}
					err = snd.Flush()
					atomic.AddUint64(&spills, st.Spills)
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
			// Quiet now: one Pull takes whatever the puller had not.
			if _, _, err := cur.Pull(eps[0], eps[0], 0, apply); err != nil {
				return err
			}
			its, edges, err := cur.Drain(eps[0], eps[0], apply)
			if err != nil {
				return err
			}
			if its != 0 || edges != 0 {
				t.Errorf("cap %d items: Drain after a quiet Pull applied %d items (%d edges)", items4Cap, its, edges)
			}
			if items4Cap < 10 && spills == 0 {
				t.Errorf("cap %d items: no spills", items4Cap)
			}
			if items4Cap == 10000 && spills != 0 {
				t.Errorf("cap %d items: %d spills", items4Cap, spills)
			}
			return addInbox(eps[0], n, inbox, got)
		})
		if err != nil {
			t.Fatal(err)
		}
		for v := range want {
			if got[v] != want[v] {
				t.Fatalf("cap %d items: vertex %d received %g, sent %g", items4Cap, v, got[v], want[v])
			}
		}
	}
}

// onOneCN runs fn on the CN of an in-process job of one CN and one MN
// whose pool holds layout l.
func onOneCN(l *csr.Layout, fn func(net verbs.Network) error) error {
	cluster := memfab.NewCluster()
	return spmd.RunLocal(2, func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, spmd.Roles{CN: 1, MN: 1})
		if err != nil {
			return err
		}
		pool := uint64(0)
		if w.Role == spmd.MN {
			pool = l.MN[0].Needed
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
}

// addInbox adds each vertex's inbox word (a float sum) to got.
func addInbox(ep verbs.Endpoint, n int, inbox func(uint32) verbs.Addr, got []float64) error {
	buf := make([]byte, 8)
	for v := range uint32(n) {
		if err := ep.Read(buf, inbox(v)); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		got[v] += math.Float64frombits(binary.LittleEndian.Uint64(buf))
	}
	return nil
}
