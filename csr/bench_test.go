package csr

import (
	"fmt"
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// BenchmarkPipeline measures generate → build → plan → load (memfab,
// cn:2,mn:2) for kron graphs; run e.g.
//
//	go test ./csr -run XXX -bench Pipeline/kron:20 -benchtime 1x
func BenchmarkPipeline(b *testing.B) {
	for _, scale := range []int{16, 20} {
		spec := fmt.Sprintf("kron:%d", scale)
		b.Run(spec, func(b *testing.B) {
			var el *EdgeList
			var g *Graph
			var err error
			var l *Layout
			gs, _ := ParseGenSpec(spec)
			b.Run("generate", func(b *testing.B) {
				for b.Loop() {
					if el, err = Generate(spec, Options{Seed: 1}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(gs.M)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
			b.Run("build", func(b *testing.B) {
				for b.Loop() {
					if g, err = Build(el, Options{}); err != nil {
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
