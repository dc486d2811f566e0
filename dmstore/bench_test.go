package dmstore

import (
	"fmt"
	"testing"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// BenchmarkPipeline measures generate → build → plan → load (memfab,
// cn:2,mn:2) for kron graphs; run e.g.
//
//	go test ./dmstore -run XXX -bench Pipeline/kron:20 -benchtime 1x
func BenchmarkPipeline(b *testing.B) {
	for _, scale := range []int{16, 20} {
		spec := fmt.Sprintf("kron:%d", scale)
		b.Run(spec, func(b *testing.B) {
			var el *csr.EdgeList
			var g *csr.Graph
			var err error
			var l *Layout
			gs, _ := csr.ParseGenSpec(spec)
			b.Run("generate", func(b *testing.B) {
				for b.Loop() {
					if el, err = csr.Generate(spec, csr.Options{Seed: 1}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(gs.M)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
			b.Run("build", func(b *testing.B) {
				for b.Loop() {
					if g, err = csr.Build(el, csr.Options{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(gs.M)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
			roles := spmd.Roles{CN: 2, MN: 2}
			cfg := LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, 2), AttrBytes: []int{8, 8}}
			b.Run("plan", func(b *testing.B) {
				for b.Loop() {
					if l, err = Plan(g, cfg); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
			b.Run("load-cn2-mn2", func(b *testing.B) {
				var secs float64
				for b.Loop() {
					cluster := memfab.NewCluster()
					err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
						w, err := spmd.NewWorld(rt, roles)
						if err != nil {
							return err
						}
						pc := verbs.Config{}
						if w.Role == spmd.MN {
							pc.PoolBytes = l.MN[w.Index].Needed
						}
						net, err := memfab.Open(cluster, w, pc)
						if err != nil {
							return err
						}
						if w.Role == spmd.CN {
							ep, err := net.NewEndpoint()
							if err != nil {
								return err
							}
							rep, err := l.Load(g, w.Index, []verbs.Endpoint{ep}, LoadOptions{})
							if err != nil {
								return err
							}
							if w.Index == 0 {
								secs += rep.Seconds
							}
						}
						return net.Close()
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(g.NumEdges())*float64(b.N)/secs, "edges/s")
				b.ReportMetric(l.Imbalance(), "mn-imbalance")
				b.ReportMetric(l.InPlaceShare(), "in-place")
			})
		})
	}
}

// BenchmarkSegmentGranularity weighs the alternative to cutting a stored
// graph anew for another compute-node count (job/recut.go): entries that
// keep their lists' segment lengths at a fixed fine granularity G that
// any chunking on those boundaries could sum. It plans kron:20 (as
// undirected as a pool load of it) at C = 2 chunks and at G = 16, 64 and
// 256 equal chunks and reports each layout's bytes and its overflow
// tables' share; run
//
//	go test ./dmstore -run XXX -bench SegmentGranularity -benchtime 1x
func BenchmarkSegmentGranularity(b *testing.B) {
	g, _, err := csr.Open("kron:20", csr.Options{Seed: 1, Undirected: true})
	if err != nil {
		b.Fatal(err)
	}
	total := func(l *Layout) uint64 {
		var n uint64
		for _, u := range l.MN {
			n += u.IndexBytes + u.EdgeBytes
		}
		return n
	}
	var base uint64
	for _, parts := range []int{2, 16, 64, 256} {
		b.Run(fmt.Sprintf("chunks=%d", parts), func(b *testing.B) {
			var l *Layout
			for b.Loop() {
				if l, err = Plan(g, LayoutConfig{NumMN: 2, Bounds: evenBounds(g.N, parts)}); err != nil {
					b.Fatal(err)
				}
			}
			if parts == 2 {
				base = total(l)
			}
			b.ReportMetric(float64(total(l))/(1<<20), "MiB")
			b.ReportMetric(float64(total(l))/float64(base), "x_of_C2")
			b.ReportMetric(float64(l.Overflow)/float64(g.N), "overflow_share")
			b.ReportMetric(float64(l.InPlace)/float64(g.N), "inplace_share")
		})
	}
}
