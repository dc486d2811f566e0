package update_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
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
		cluster := memfab.NewCluster()
		want := make([]float64, n)
		got := make([]float64, n)
		err = spmd.RunLocal(2, func(rt spmd.Runtime) error {
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
	s := update.Stats{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
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
