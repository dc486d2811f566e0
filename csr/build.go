package csr

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/pkg/errors"
)

// EdgeList is the builder's input: edges on dense vertex ids.
type EdgeList struct {
	// N is the number of vertices; every id in Src and Dst is < N.
	N uint32
	// Src and Dst are the endpoints of each edge (equal lengths).
	Src, Dst []uint32
	// Weights is parallel to Src, or nil.
	Weights []float64
	// IDs maps dense ids to external ids (nil = identity); copied to the
	// Graph as is.
	IDs []uint64
	// Directed is false when every edge stands for both directions.
	Directed bool
}

type dropStats struct {
	selfLoops, duplicates uint64
}

// Build makes a CSR graph from el, applying the self-loop and duplicate
// policies and Options.Undirected/Weighted/Unweighted. It uses
// Options.Workers goroutines; the result does not depend on their number.
// el's slices are not modified or retained (except IDs).
func Build(el *EdgeList, opts Options) (*Graph, error) {
	o := opts
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.EnsureDefaults()
	g, _, err := build(el, &o)
	return g, err
}

func build(el *EdgeList, o *Options) (*Graph, dropStats, error) {
	var st dropStats
	m := len(el.Src)
	if len(el.Dst) != m {
		return nil, st, errors.Errorf("csr: %d sources but %d destinations", m, len(el.Dst))
	}
	w := el.Weights
	if o.Unweighted {
		w = nil
	}
	if w != nil && len(w) != m {
		return nil, st, errors.Errorf("csr: %d edges but %d weights", m, len(w))
	}
	if el.IDs != nil && uint64(len(el.IDs)) != uint64(el.N) {
		return nil, st, errors.Errorf("csr: %d vertices but %d external ids", el.N, len(el.IDs))
	}
	n := el.N
	undirected := !el.Directed || o.Undirected
	dropLoops := o.SelfLoops == DropSelfLoops
	workers := o.Workers

	// Degrees (atomic counters; order-independent).
	deg := make([]uint64, uint64(n)+1)
	var bad atomic.Int64
	bad.Store(-1)
	var loops atomic.Uint64
	ParallelFor(workers, m, func(lo, hi int) {
		var nl uint64
		for i := lo; i < hi; i++ {
			s, d := el.Src[i], el.Dst[i]
			if s >= n || d >= n {
				bad.CompareAndSwap(-1, int64(i))
				return
			}
			if s == d {
				if dropLoops {
					nl++
					continue
				}
				atomic.AddUint64(&deg[s], 1)
				continue
			}
			atomic.AddUint64(&deg[s], 1)
			if undirected {
				atomic.AddUint64(&deg[d], 1)
			}
		}
		loops.Add(nl)
	})
	if i := bad.Load(); i >= 0 {
		return nil, st, errors.Errorf("csr: edge %d (%d→%d) names a vertex ≥ N=%d", i, el.Src[i], el.Dst[i], n)
	}
	st.selfLoops = loops.Load()

	// Offsets.
	off := prefixSums(deg[:n])
	sum := off[n]
	pos := deg[:n]
	copy(pos, off[:n])

	// Scatter (slot order is racy; the per-vertex sort below makes the
	// result deterministic because its order is total: see cmpEdge).
	dst := make([]uint32, sum)
	var ws []float64
	if w != nil {
		ws = make([]float64, sum)
	}
	ParallelFor(workers, m, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s, d := el.Src[i], el.Dst[i]
			if s == d && dropLoops {
				continue
			}
			k := atomic.AddUint64(&pos[s], 1) - 1
			dst[k] = d
			if ws != nil {
				ws[k] = w[i]
			}
			if undirected && s != d {
				k := atomic.AddUint64(&pos[d], 1) - 1
				dst[k] = s
				if ws != nil {
					ws[k] = w[i]
				}
			}
		}
	})
	pos = nil

	off, dst, ws, st.duplicates = finishRows(off, dst, ws, 0, o)
	g := &Graph{N: n, Offsets: off, Dst: dst, Weights: ws, IDs: el.IDs, Directed: !undirected}
	return g, st, nil
}

// finishRows turns scattered rows into the builder's CSR: each row sorted
// by (destination, weight) (cmpEdge), duplicates dropped by the policy,
// keeping the smallest weight of each destination (the rows are
// compacted in place), and synthetic weights added when Options.Weighted
// asks for them and there are none. The rows are those of the vertices
// first, first+1, ... It returns the new arrays and the number of
// duplicates dropped.
func finishRows(off []uint64, dst []uint32, ws []float64, first uint32, o *Options) ([]uint64, []uint32, []float64, uint64) {
	n := uint32(len(off) - 1)
	workers := o.Workers
	dedup := o.Duplicates == DropDuplicates
	newDeg := make([]uint64, n)
	ranges := splitByEdges(off, workers*4)
	var dups atomic.Uint64
	runRanges(workers, ranges, func(lo, hi uint32) {
		var buf []dw
		var tmp []uint32 // sortIDs's
		var nd uint64
		for v := lo; v < hi; v++ {
			a, b := off[v], off[v+1]
			d := dst[a:b]
			if ws == nil {
				tmp = sortIDs(d, tmp)
			} else {
				buf = buf[:0]
				for i := a; i < b; i++ {
					buf = append(buf, dw{dst[i], ws[i]})
				}
				slices.SortFunc(buf, cmpEdge)
				for i := range buf {
					dst[a+uint64(i)] = buf[i].d
					ws[a+uint64(i)] = buf[i].w
				}
			}
			k := uint64(len(d))
			if dedup && k > 1 {
				j := uint64(1)
				for i := uint64(1); i < k; i++ {
					if d[i] != d[j-1] {
						d[j] = d[i]
						if ws != nil {
							ws[a+j] = ws[a+i]
						}
						j++
					}
				}
				nd += k - j
				k = j
			}
			newDeg[v] = k
		}
		dups.Add(nd)
	})
	if dropped := dups.Load(); dropped > 0 {
		// Compact in place: a row only moves towards the front.
		off2 := prefixSums(newDeg)
		for v := range n {
			a, k := off[v], newDeg[v]
			copy(dst[off2[v]:off2[v]+k], dst[a:a+k])
			if ws != nil {
				copy(ws[off2[v]:off2[v]+k], ws[a:a+k])
			}
		}
		total := off2[n]
		off, dst = off2, slices.Clip(dst[:total])
		if ws != nil {
			ws = slices.Clip(ws[:total])
		}
	}
	if ws == nil && o.Weighted {
		ws = make([]float64, len(dst))
		seed := o.Seed
		runRanges(workers, splitByEdges(off, workers*4), func(lo, hi uint32) {
			for v := lo; v < hi; v++ {
				for i := off[v]; i < off[v+1]; i++ {
					ws[i] = SyntheticWeight(seed, first+v, dst[i])
				}
			}
		})
	}
	return off, dst, ws, dups.Load()
}

type dw struct {
	d uint32
	w float64
}

// cmpEdge orders the (destination, weight) pairs of a row: by destination,
// then by weight as cmp.Compare orders it, then, for weights cmp.Compare
// calls equal that differ in their bits (−0 and +0, NaNs), by the IEEE
// 754 total order (−0 before +0). The order is total, so a sorted row and
// the weight DropDuplicates keeps (the first of its destination: the
// smallest) do not depend on the order its edges were scattered in, and
// the in-rows of a share (OpenShareWith), sorted the same way, keep for
// each edge exactly the weight its source's out-row keeps. The readers
// normalise −0 and reject NaN, so the tie-break only ever decides for
// edge lists given to Build.
func cmpEdge(x, y dw) int {
	if c := cmp.Compare(x.d, y.d); c != 0 {
		return c
	}
	if c := cmp.Compare(x.w, y.w); c != 0 {
		return c
	}
	return cmp.Compare(totalOrderKey(x.w), totalOrderKey(y.w))
}

// totalOrderKey maps x to an integer whose order is the IEEE 754 total
// order of float64s: negative values (sign bit set) have their bits
// inverted, the others their sign bit set.
func totalOrderKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// SyntheticWeight is the deterministic weight in (0, 1] the builder gives
// edge u–v when Options.Weighted asks for weights the input does not have:
// a hash of (seed, min(u,v), max(u,v)), so both directions of an edge
// weigh the same.
func SyntheticWeight(seed uint64, u, v uint32) float64 {
	if u > v {
		u, v = v, u
	}
	x := splitmix64(seed ^ splitmix64(uint64(u)<<32|uint64(v)))
	return float64(x>>11+1) * (1.0 / (1 << 53))
}

// splitmix64 is the SplitMix64 finaliser (a bijective 64-bit mixer).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ParallelFor splits [0, n) into one contiguous range per worker and runs
// f on each, on goroutines of its own (a small n runs at once).
func ParallelFor(workers, n int, f func(lo, hi int)) {
	if workers <= 1 || n < 4096 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		lo, hi := n*k/workers, n*(k+1)/workers
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// splitByEdges cuts the vertices into at most parts ranges of about equal
// edge (+vertex) count; the result holds range starts plus N at the end.
func splitByEdges(off []uint64, parts int) []uint32 {
	n := uint32(len(off) - 1)
	if parts < 1 {
		parts = 1
	}
	total := off[n] + uint64(n)
	cuts := []uint32{0}
	v := uint32(0)
	for p := 1; p < parts; p++ {
		target := total * uint64(p) / uint64(parts)
		// first v with off[v]+v >= target
		lo, hi := v, n
		for lo < hi {
			mid := lo + (hi-lo)/2
			if off[mid]+uint64(mid) < target {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo > cuts[len(cuts)-1] && lo < n {
			cuts = append(cuts, lo)
			v = lo
		}
	}
	return append(cuts, n)
}

// runRanges runs f over consecutive ranges of cuts on a pool of workers.
func runRanges(workers int, cuts []uint32, f func(lo, hi uint32)) {
	if workers <= 1 || len(cuts) <= 2 {
		for i := 0; i+1 < len(cuts); i++ {
			f(cuts[i], cuts[i+1])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i+1 >= len(cuts) {
					return
				}
				f(cuts[i], cuts[i+1])
			}
		}()
	}
	wg.Wait()
}

// densify maps external ids to dense ids in ascending external order.
// The vertex set is the set of ids that occur in src or dst.
func densify(file string, src64, dst64 []uint64, workers int) (ids []uint64, src, dst []uint32, err error) {
	all := make([]uint64, 0, len(src64)+len(dst64))
	all = append(all, src64...)
	all = append(all, dst64...)
	parallelSort(all, workers)
	all = slices.Compact(all)
	if uint64(len(all)) > MaxVertices {
		return nil, nil, nil, fileErr(file, "more than %d vertices (%d distinct ids); dense ids are 32-bit", uint64(MaxVertices), len(all))
	}
	ids = slices.Clip(all)
	src = make([]uint32, len(src64))
	dst = make([]uint32, len(dst64))
	identity := len(ids) == 0 || ids[len(ids)-1] == uint64(len(ids)-1)
	ParallelFor(workers, len(src64), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if identity {
				src[i], dst[i] = uint32(src64[i]), uint32(dst64[i])
			} else {
				s, _ := slices.BinarySearch(ids, src64[i])
				d, _ := slices.BinarySearch(ids, dst64[i])
				src[i], dst[i] = uint32(s), uint32(d)
			}
		}
	})
	if identity {
		ids = nil
	}
	return ids, src, dst, nil
}

// parallelSort sorts a in place using up to workers goroutines.
func parallelSort(a []uint64, workers int) {
	if workers <= 1 || len(a) < 1<<16 {
		slices.Sort(a)
		return
	}
	parts := 1
	for parts < workers {
		parts *= 2
	}
	bounds := make([]int, parts+1)
	for i := range bounds {
		bounds[i] = len(a) * i / parts
	}
	var wg sync.WaitGroup
	for i := 0; i < parts; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.Sort(a[bounds[i]:bounds[i+1]])
		}()
	}
	wg.Wait()
	tmp := make([]uint64, len(a))
	src, dstb := a, tmp
	for width := 1; width < parts; width *= 2 {
		for i := 0; i < parts; i += 2 * width {
			lo, mid, hi := bounds[i], bounds[min(i+width, parts)], bounds[min(i+2*width, parts)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				merge(dstb[lo:hi], src[lo:mid], src[mid:hi])
			}()
		}
		wg.Wait()
		src, dstb = dstb, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

func merge(out, x, y []uint64) {
	i, j, k := 0, 0, 0
	for i < len(x) && j < len(y) {
		if y[j] < x[i] {
			out[k] = y[j]
			j++
		} else {
			out[k] = x[i]
			i++
		}
		k++
	}
	k += copy(out[k:], x[i:])
	copy(out[k:], y[j:])
}

// prefixSums returns the CSR offsets of a degree array: len(deg)+1 entries,
// the last the total.
func prefixSums(deg []uint64) []uint64 {
	off := make([]uint64, len(deg)+1)
	for v, d := range deg {
		off[v+1] = off[v] + d
	}
	return off
}
