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

type blockRNG struct{ s uint64 }

func (r *blockRNG) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

var (
	// thresholds as 32-bit fixed point, as in Graph500's
	// kronecker_generator.m: i-bit set with probability C+D, then j-bit with
	// probability B/(A+B) or D/(C+D).
	kronAB    = uint32(math.Round((kronA + kronB) * (1 << 32)))
	kronANorm = uint32(math.Round(kronA / (kronA + kronB) * (1 << 32)))
	kronCNorm = uint32(math.Round(kronC / (1 - (kronA + kronB)) * (1 << 32)))
)

// edge draws one edge.
func (gs GenSpec) edge(sc *scrambler, r *blockRNG) (uint32, uint32) {
	if gs.Kind == FormatUniform {
		s, _ := bits.Mul64(r.next(), gs.N)
		d, _ := bits.Mul64(r.next(), gs.N)
		return uint32(s), uint32(d)
	}
	// Branch-free: each bit is a coin flip the CPU cannot predict.
	var i, j uint64
	for l := uint64(0); l < gs.Scale; l++ {
		x := r.next()
		ib := b2u(uint32(x) > kronAB)
		t := kronANorm + uint32(ib)*(kronCNorm-kronANorm)
		i |= ib << l
		j |= b2u(uint32(x>>32) > t) << l
	}
	return uint32(sc.apply(i)), uint32(sc.apply(j))
}

// b2u is 1 for true, 0 for false (a SETcc, not a branch).
func b2u(b bool) uint64 {
	var u uint64
	if b {
		u = 1
	}
	return u
}

// scrambler is a seeded bijection on [0, 2^scale): Graph500 permutes
// vertex labels so that vertex ids carry no degree information.
type scrambler struct {
	scale, mask, k0, k1, k2 uint64
}

func newScrambler(scale, seed uint64) scrambler {
	return scrambler{scale: scale, mask: uint64(1)<<scale - 1,
		k0: splitmix64(seed^0x5eed0) | 1, k1: splitmix64(seed^0x5eed1) | 1, k2: splitmix64(seed ^ 0x5eed2)}
}

func (s *scrambler) apply(v uint64) uint64 {
	if s.scale == 0 {
		return 0
	}
	sh := 64 - s.scale
	v = (v * s.k0) & s.mask
	v = bits.Reverse64(v) >> sh
	v = (v + s.k2) & s.mask
	v ^= v >> (s.scale/2 + 1)
	v = (v * s.k1) & s.mask
	v = bits.Reverse64(v) >> sh
	v = (v * s.k0) & s.mask
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
