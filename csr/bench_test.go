package csr

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmg-hpc/dmg/balance"
)

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

// BenchmarkShareRowsAdd adds edges at random to rows of 4 M vertices of
// 24 edges each (384 MiB of slots), one at a time and buffered by bucket
// (scatter.go): ns per edge.
func BenchmarkShareRowsAdd(b *testing.B) {
	const n, per = 4 << 20, 24
	count := make([]uint32, n)
	for i := range count {
		count[i] = per
	}
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]uint64, n*per)
	for i := range src {
		src[i] = uint64(i / per)
	}
	r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	for _, buffered := range []bool{false, true} {
		b.Run(map[bool]string{false: "at-once", true: "buffered"}[buffered], func(b *testing.B) {
			rows := newShareRows(count, 0, n, false, nil)
			if !buffered {
				rows.buf = nil
			}
			b.ResetTimer()
			for range b.N {
				copy(rows.pos, rows.off[:n])
				for k, s := range src {
					rows.add(s, uint64(k), 0)
				}
				rows.flush()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(src)), "ns/edge")
		})
	}
}
