package csr

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/balance"
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

// benchTextFile is the text edge list BenchmarkReadText reads:
// $DMG_BENCH_TEXT, else the kron:20 edge list of ../shared/peers/graph.sh.
func benchTextFile(b *testing.B) string {
	p := os.Getenv("DMG_BENCH_TEXT")
	if p == "" {
		p = "/tmp/dmg-peers/k20.el"
	}
	if _, err := os.Stat(p); err != nil {
		b.Skipf("no text edge list to read: %v (set DMG_BENCH_TEXT, or run ../shared/peers/graph.sh 20)", err)
	}
	return p
}

// peakHeap samples the bytes of live and unswept heap objects every few
// milliseconds until stop is called, and returns the largest sample.
func peakHeap() (stop func() uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// BenchmarkReadText reads a large text edge list whole (Open, the
// verifier's path) and as CN 0 of two reads its share for PageRank
// (OpenShareWith with in-edges, as dmg run does); run it with
//
//	go test ./csr -run XXX -bench ReadText -benchtime 1x -cpu 1,2
//
// peak-heap-MB is the largest heap seen while one iteration runs (the
// heap left by an earlier one collected first). The file is read once
// before, so that it comes from the page cache, not the disk.
func BenchmarkReadText(b *testing.B) {
	path := benchTextFile(b)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var edges uint64
	measure := func(b *testing.B, f func() uint64) {
		var peak uint64
		for b.Loop() {
			b.StopTimer()
			runtime.GC()
			stop := peakHeap()
			b.StartTimer()
			edges = f()
			b.StopTimer()
			peak = max(peak, stop())
			b.StartTimer()
		}
		b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		b.ReportMetric(float64(st.Size())*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	}
	b.Run("open", func(b *testing.B) {
		measure(b, func() uint64 {
			_, meta, err := Open(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			return meta.InputEdges
		})
	})
	b.Run("share", func(b *testing.B) {
		measure(b, func() uint64 {
			_, meta, err := OpenShareWith(path, Options{Unweighted: true}, ShareOptions{In: true}, func(deg []uint64) (uint32, uint32, error) {
				c, err := balance.Chunks(deg, 2, balance.DefaultAlpha(2))
				if err != nil {
					return 0, 0, err
				}
				return c[0], c[1], nil
			})
			if err != nil {
				b.Fatal(err)
			}
			return meta.InputEdges
		})
	})
}

// BenchmarkParseBlock parses blocks of a text edge list (the first 16 MiB
// of the file BenchmarkReadText reads) on one goroutine: the parser
// alone, without reading, id mapping or building.
func BenchmarkParseBlock(b *testing.B) {
	f, err := os.Open(benchTextFile(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 16<<20)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	var blocks [][]byte
	br := &blockReader{r: bytes.NewReader(buf)}
	for {
		data, end, _ := br.next(nil)
		blocks = append(blocks, data)
		if end {
			break
		}
	}
	lines := edgeListLines(false, &Options{}, nil)
	var sc edgeScratch
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, data := range blocks {
			if _, msg := lines.parse(data, &sc, math.MaxUint64); msg != "" {
				b.Fatal(msg)
			}
		}
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
//	go test ./csr -run XXX -bench SegmentGranularity -benchtime 1x
func BenchmarkSegmentGranularity(b *testing.B) {
	g, _, err := Open("kron:20", Options{Seed: 1, Undirected: true})
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
