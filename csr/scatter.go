package csr

import "math/bits"

// A pass hands a share's rows their edges in the order its input has
// them: at random over the rows. Added one by one, every edge misses the
// cache twice (its row's fill position, then its slot), and at a window of
// hundreds of MB of rows that cost 90 ns an edge, a third of a kron:24
// load. So rows of more than scatterMin entries take their edges in a
// buffer, and add each buffer's a bucket of rows at a time (a counting
// sort by bucket): a bucket's fill positions and slots span 1/256 of the
// rows. BenchmarkShareRowsAdd (384 MiB of slots): 54–61 ns an edge one
// at a time, 31–34 buffered (27–38 with 1024 or 4096 buckets and larger
// buffers, within this machine's noise; huge pages did not help).

const (
	// scatterBuckets is how many buckets the rows are cut into.
	scatterBuckets = 256
	// scatterEdges is how many edges a buffer holds (1 MiB of ids; twice,
	// and twice more with weights).
	scatterEdges = 1 << 17
	// scatterMin is the fewest entries of rows that buffer their edges:
	// smaller rows fit the cache whole.
	scatterMin = 1 << 20
)

// scatter is the buffer of rows that buffer their edges.
type scatter struct {
	shift    uint     // the bucket of row i is i >> shift
	row, dst []uint32 // row: the edge's row, from lo; n of them held
	ws       []float64
	n        int
	// The buffer sorted by bucket, and the buckets' counts.
	srow, sdst []uint32
	sws        []float64
	count      [scatterBuckets + 1]int
}

// newScatter is the buffer of rows of n vertices (nil: they add their
// edges at once).
func newScatter(n, entries uint64, weighted bool) *scatter {
	if entries < scatterMin || n <= scatterBuckets {
		return nil
	}
	x := &scatter{
		shift: uint(max(bits.Len64(n-1)-bits.Len(scatterBuckets-1), 0)),
		row:   make([]uint32, scatterEdges), dst: make([]uint32, scatterEdges),
		srow: make([]uint32, scatterEdges), sdst: make([]uint32, scatterEdges),
	}
	if weighted {
		x.ws, x.sws = make([]float64, scatterEdges), make([]float64, scatterEdges)
	}
	return x
}

// put buffers edge s→d (weight w) of row s, and says whether the buffer
// is full.
func (x *scatter) put(i uint64, d uint64, w float64) bool {
	x.row[x.n], x.dst[x.n] = uint32(i), uint32(d)
	if x.ws != nil {
		x.ws[x.n] = w
	}
	x.n++
	return x.n == len(x.row)
}

// putIf buffers the unweighted edge lo+i→d if ok, without a branch on ok
// (the slot is written either way, and kept only if ok), and says
// whether the buffer is full.
func (x *scatter) putIf(ok bool, i, d uint32) bool {
	x.row[x.n], x.dst[x.n] = i, d
	step := 0
	if ok {
		step = 1
	}
	x.n += step
	return x.n == len(x.row)
}

// sorted sorts the buffer by bucket into srow, sdst and sws, empties it,
// and returns how many edges it held.
func (x *scatter) sorted() int {
	n := x.n
	clear(x.count[:])
	for _, i := range x.row[:n] {
		x.count[i>>x.shift+1]++
	}
	for b := 1; b <= scatterBuckets; b++ {
		x.count[b] += x.count[b-1]
	}
	for k, i := range x.row[:n] {
		b := i >> x.shift
		j := x.count[b]
		x.count[b] = j + 1
		x.srow[j], x.sdst[j] = i, x.dst[k]
		if x.ws != nil {
			x.sws[j] = x.ws[k]
		}
	}
	x.n = 0
	return n
}
