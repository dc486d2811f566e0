package csr

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Graph500 Kronecker initiator probabilities (D = 1 - A - B - C = 0.05).
const (
	kronA = 0.57
	kronB = 0.19
	kronC = 0.19
)

// genBlock is the number of edges generated from one seed. Block b's
// generator is seeded with a hash of (Options.Seed, b) only, so any split of
// the blocks over goroutines or ranks yields the same edges.
const genBlock = 1 << 16

// maxGenEdges bounds generated edge lists (2^36 edges = 512 GiB of ids).
const maxGenEdges = 1 << 36

// IsGeneratorSpec reports whether spec names a generator rather than a file.
func IsGeneratorSpec(spec string) bool {
	return strings.HasPrefix(spec, "kron:") || strings.HasPrefix(spec, "uniform:")
}

// GenSpec is a parsed generator spec.
type GenSpec struct {
	// Kind is FormatKron or FormatUniform.
	Kind string
	// N and M are the numbers of vertices and generated edges.
	N, M uint64
	// Scale and EdgeFactor are set for Kronecker graphs (N = 2^Scale,
	// M = EdgeFactor·N).
	Scale, EdgeFactor uint64
}

// ParseGenSpec parses "kron:SCALE[:EDGEFACTOR]" (Graph500 Kronecker,
// default edge factor 16) or "uniform:N:M" (M edges with both endpoints
// uniform over N vertices).
func ParseGenSpec(spec string) (GenSpec, error) {
	parts := strings.Split(spec, ":")
	num := func(i int, what string) (uint64, error) {
		x, err := strconv.ParseUint(parts[i], 10, 64)
		if err != nil {
			return 0, fileErr(spec, "expected a non-negative integer %s, got %q", what, parts[i])
		}
		return x, nil
	}
	var gs GenSpec
	switch parts[0] {
	case "kron":
		if len(parts) < 2 || len(parts) > 3 {
			return gs, fileErr(spec, "expected kron:SCALE or kron:SCALE:EDGEFACTOR")
		}
		s, err := num(1, "scale")
		if err != nil {
			return gs, err
		}
		ef := uint64(16)
		if len(parts) == 3 {
			if ef, err = num(2, "edge factor"); err != nil {
				return gs, err
			}
		}
		if ef == 0 {
			return gs, fileErr(spec, "edge factor 0; expected at least 1 edge per vertex")
		}
		if s > 31 {
			return gs, fileErr(spec, "scale %d: at most 31 (2^32 vertices do not fit 32-bit ids)", s)
		}
		if ef > maxGenEdges>>s {
			return gs, fileErr(spec, "edge factor %d: more than 2^36 edges", ef)
		}
		gs = GenSpec{Kind: FormatKron, Scale: s, EdgeFactor: ef, N: 1 << s, M: ef << s}
	case "uniform":
		if len(parts) != 3 {
			return gs, fileErr(spec, "expected uniform:N:M")
		}
		n, err := num(1, "vertex count")
		if err != nil {
			return gs, err
		}
		m, err := num(2, "edge count")
		if err != nil {
			return gs, err
		}
		if n > MaxVertices {
			return gs, fileErr(spec, "%d vertices: more than %d; dense ids are 32-bit", n, uint64(MaxVertices))
		}
		if n == 0 && m > 0 {
			return gs, fileErr(spec, "%d edges need at least one vertex", m)
		}
		if m > maxGenEdges {
			return gs, fileErr(spec, "%d edges: more than 2^36", m)
		}
		gs = GenSpec{Kind: FormatUniform, N: n, M: m}
	default:
		return gs, fileErr(spec, "unknown generator %q (expected kron or uniform)", parts[0])
	}
	return gs, nil
}

// Generate produces the edge list of a generator spec (before building).
// Edges [lo, hi) of it can be produced alone with GenerateRange, e.g. one
// range per rank.
func Generate(spec string, opts Options) (*EdgeList, error) {
	gs, err := opts.parseGen(spec)
	if err != nil {
		return nil, err
	}
	o := opts
	o.EnsureDefaults()
	el := &EdgeList{N: uint32(gs.N), Directed: true,
		Src: make([]uint32, gs.M), Dst: make([]uint32, gs.M)}
	gs.eachBlock(o.Seed, o.Workers, 0, gs.blocks(), func(lo uint64, src, dst []uint32) {
		copy(el.Src[lo:], src)
		copy(el.Dst[lo:], dst)
	})
	return el, nil
}

// blocks is how many blocks of edges the graph has.
func (gs GenSpec) blocks() uint64 { return (gs.M + genBlock - 1) / genBlock }

// eachBlock generates the graph's blocks [b0, b1) of edges on workers
// goroutines and calls fn with each block's first edge index and edges,
// concurrently and in any order.
func (gs GenSpec) eachBlock(seed uint64, workers int, b0, b1 uint64, fn func(lo uint64, src, dst []uint32)) {
	var next atomic.Uint64
	next.Store(b0)
	var wg sync.WaitGroup
	for range min(uint64(max(workers, 1)), max(b1-min(b0, b1), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src, dst := make([]uint32, genBlock), make([]uint32, genBlock)
			for {
				b := next.Add(1) - 1
				if b >= b1 {
					return
				}
				lo, hi := b*genBlock, min((b+1)*genBlock, gs.M)
				gs.GenerateRange(seed, lo, hi, src[:hi-lo], dst[:hi-lo])
				fn(lo, src[:hi-lo], dst[:hi-lo])
			}
		}()
	}
	wg.Wait()
}

// GenerateRange writes edges [lo, hi) of the generated graph into src and
// dst (length hi-lo). lo must be a multiple of 65536 (the block size) for
// the edges to match a full generation.
func (gs GenSpec) GenerateRange(seed, lo, hi uint64, src, dst []uint32) {
	sc := newScrambler(gs.Scale, seed)
	for b := lo / genBlock; b*genBlock < hi; b++ {
		a, e := max(b*genBlock, lo), min((b+1)*genBlock, hi)
		rng := blockRNG{s: splitmix64(seed ^ splitmix64(b^0x6b726f6e))}
		// Skip to a (only when lo is not block-aligned).
		for i := b * genBlock; i < a; i++ {
			gs.edge(&sc, &rng)
		}
		for i := a; i < e; i++ {
			s, d := gs.edge(&sc, &rng)
			src[i-lo], dst[i-lo] = s, d
		}
	}
}

type blockRNG struct {
	s uint64
	// The 16-bit pieces of the last draw that kronQuadrants has not used
	// yet (left of them), the next in the low bits.
	spare uint64
	left  uint
}

func (r *blockRNG) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// kronPairs maps 16 bits of a uniform draw to the quadrants of two
// levels of the initiator, each level's pair (i, j) as i<<1 | j, the
// first level's in bits 0 and 1 and the second's in bits 2 and 3: the
// draws below kronPairBounds[0] are (A, A), and so on through the 16
// pairs in the order of their codes, A, B, C, D being (0, 0), (0, 1),
// (1, 0), (1, 1). Each pair's probability is within 2^-16 of the
// product of its levels' (TestKronQuadrants). It is made once and only
// read.
var kronPairs = kronPairTable()

// kronPairBounds are the ends of the pairs' ranges of 16-bit draws, in
// the order of their codes: the cumulative products of the initiator's
// probabilities, rounded to 2^-16.
func kronPairBounds() [16]uint32 {
	p := [4]float64{kronA, kronB, kronC, 1 - kronA - kronB - kronC}
	var b [16]uint32
	var cum float64
	for code := range b {
		cum += p[code&3] * p[code>>2]
		b[code] = uint32(math.Round(cum * (1 << 16)))
	}
	b[15] = 1 << 16
	return b
}

func kronPairTable() *[1 << 16]uint8 {
	t := new([1 << 16]uint8)
	u := uint32(0)
	for code, end := range kronPairBounds() {
		for ; u < end; u++ {
			t[u] = uint8(code)
		}
	}
	return t
}

// edge draws one edge.
func (gs GenSpec) edge(sc *scrambler, r *blockRNG) (uint32, uint32) {
	if gs.Kind == FormatUniform {
		s, _ := bits.Mul64(r.next(), gs.N)
		d, _ := bits.Mul64(r.next(), gs.N)
		return uint32(s), uint32(d)
	}
	i, j := kronQuadrants(r, gs.Scale)
	return uint32(sc.apply(i)), uint32(sc.apply(j))
}

// kronQuadrants draws the unscrambled endpoints of one Kronecker edge: at
// each of scale levels a quadrant of the initiator, whose row is a bit of
// i and whose column a bit of j. Each 16 bits of a 64-bit draw give two
// levels, a lookup in kronPairs, gathered two bits a level, j's even and
// i's odd. Which bit of i and j a level sets does not matter, as long as
// it is the same bit of both (the scrambler permutes the labels anyway):
// level l < h sets bit 2l, level h + l bit 2l + 1, h being half the
// levels rounded up, so that the even positions fold into scale bits in
// two steps (fold). Against four levels a draw compared in 16-bit lanes
// and unzipped one bit a level: 27.5 → 20.5 ns an edge at kron:26
// (BenchmarkKronEdges). The pieces a draw has left after an edge start
// the next edge's (blockRNG.spare): kron:26's 13 lookups took four draws
// an edge, the last one's three other pieces thrown away, and take 3.25
// now. A scale of a multiple of 8 levels draws the same edges either way.
func kronQuadrants(r *blockRNG, scale uint64) (i, j uint64) {
	t := kronPairs
	need := uint(scale+1) / 2 // lookups
	got := min(r.left, need)  // the last draw's pieces first
	c := pairsOf(t, r.spare, got)
	r.spare >>= 16 * got
	r.left -= got
	for ; need-got >= 4; got += 4 {
		x := r.next()
		c |= (uint64(t[uint16(x)]) | uint64(t[uint16(x>>16)])<<4 | uint64(t[uint16(x>>32)])<<8 | uint64(t[x>>48])<<12) << (4 * got)
	}
	if k := need - got; k > 0 {
		x := r.next()
		c |= pairsOf(t, x, k) << (4 * got)
		r.spare, r.left = x>>(16*k), 4-k
	}
	h := (scale + 1) / 2
	return fold(c>>1, scale, h), fold(c, scale, h)
}

// pairsOf is the pairs of quadrants (kronPairs, t) of the first n of
// the 16-bit pieces of x, from its low bits, four bits a pair.
func pairsOf(t *[1 << 16]uint8, x uint64, n uint) uint64 {
	var c uint64
	for k := range n {
		c |= uint64(t[uint16(x>>(16*k))]) << (4 * k)
	}
	return c
}

// fold gathers the even bits 0, 2, ... 2(scale−1) of x into scale bits:
// those of the first h levels stay where they are, the others go right
// by 2h − 1, into the odd positions.
func fold(x, scale, h uint64) uint64 {
	x &= 0x5555_5555_5555_5555 & (1<<(2*scale) - 1)
	return x&(1<<(2*h)-1) | x>>(2*h-1)
}

// scrambler is a seeded bijection on [0, 2^scale): Graph500 permutes
// vertex labels so that vertex ids carry no degree information. Each step
// is invertible on scale bits: a multiplication by an odd number carries
// the low bits up, a right xorshift by half the width brings the high ones
// down, an addition rotates the whole range.
type scrambler struct {
	mask, half, k0, k1, k2 uint64
}

func newScrambler(scale, seed uint64) scrambler {
	return scrambler{mask: uint64(1)<<scale - 1, half: (scale + 1) / 2,
		k0: splitmix64(seed^0x5eed0) | 1, k1: splitmix64(seed^0x5eed1) | 1, k2: splitmix64(seed ^ 0x5eed2)}
}

func (s *scrambler) apply(v uint64) uint64 {
	v = v * s.k0 & s.mask
	v ^= v >> s.half
	v = (v + s.k2) * s.k1 & s.mask
	v ^= v >> s.half
	v = v * s.k0 & s.mask
	v ^= v >> s.half
	return v
}

func scramble(v, scale, seed uint64) uint64 {
	sc := newScrambler(scale, seed)
	return sc.apply(v)
}

func generate(spec string, o *Options) (*Graph, *Meta, error) {
	gs, err := o.parseGen(spec)
	if err != nil {
		return nil, nil, err
	}
	el, err := Generate(spec, *o)
	if err != nil {
		return nil, nil, err
	}
	meta := &Meta{Name: spec, Path: spec, Format: gs.Kind, DeclaredVertices: gs.N, InputEdges: gs.M}
	return finish(el, meta, o)
}

// parseGen is ParseGenSpec with the generated graph's vertices checked
// against this machine's memory (vertexProblem), for the readers o says.
func (o *Options) parseGen(spec string) (GenSpec, error) {
	gs, err := ParseGenSpec(spec)
	if err != nil {
		return gs, err
	}
	if p := vertexProblem(gs.N, MaxVertices, o.HostReaders); p != "" {
		return gs, fileErr(spec, "%s", p)
	}
	return gs, nil
}
