package job

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/rank"
)

// sampleVertices is how many vertices a sampled check reads (and the
// vertex with the most out-edges), and sampleMaxIn bounds their in-edges:
// the sample is read while the CN's cache is resident, so it stays a few
// MiB.
const (
	sampleVertices = 256
	sampleMaxIn    = 1 << 18
)

// wholeGraphBytes is about what rank 0 holds to verify a result whole
// (wholeGraph and a serial verifier): the edges as read and as rows, the
// offsets, and a few words per vertex.
func wholeGraphBytes(vertices, edges uint64) uint64 { return 16*edges + 32*vertices }

// bySample says whether --verify (KeepGraph) checks a sample of the run
// rather than the whole result: when the whole graph is past rank 0's
// budget (CNMem). A kernel without a sampled check then cannot be
// verified, which is bad input before anything is loaded.
func bySample(cfg *Config, alg algo.Algorithm, out *Outcome, inLists bool) (bool, error) {
	whole := wholeGraphBytes(out.Vertices, out.Edges)
	if cfg.CNMem == 0 || whole <= cfg.CNMem {
		return false, nil
	}
	why := ""
	switch {
	case alg.Sampled == nil:
		why = alg.Name + " has no sampled check"
	case !inLists:
		why = "a sampled check reads in-lists, and this run stores none on DM (--mode dmg does)"
	default:
		return true, nil
	}
	return false, &rank.ParamError{Msg: fmt.Sprintf("--verify: checking %s whole needs about %s on rank 0, past --cn-mem %s, and %s; expected a larger --cn-mem or a smaller graph",
		cfg.Graph, humanize.IBytes(whole), humanize.IBytes(cfg.CNMem), why)}
}

// newProbe is the engine's probe for a sampled check: sampleVertices
// vertices drawn uniformly (the same every run), top and the sources.
func newProbe(alg algo.Algorithm, out *Outcome, top uint32) *rank.Probe {
	r := rand.New(rand.NewPCG(1, 2))
	vs := append([]uint32{top}, out.Params.AllSources()...)
	for range sampleVertices {
		vs = append(vs, uint32(r.Uint64N(out.Vertices)))
	}
	return &rank.Probe{At: alg.SampleAt(out.Params), Sample: &algo.Sample{Vertices: vs},
		OutIsIn: out.Symmetric, MaxIn: sampleMaxIn}
}

// sampleOf completes the probe's sample on rank 0 with the run's final
// values (gathered there) and the vertices' external ids.
func sampleOf(p *rank.Probe, out *Outcome) (*algo.Sample, error) {
	if !p.Done {
		return nil, errors.Errorf("job: the sampled check's probe before iteration %d was not taken (the run ended at %d)", p.At, len(out.Result.Iterations))
	}
	s, vals := p.Sample, out.Result.Values
	for _, v := range s.Vertices {
		s.Final = append(s.Final, vals[v])
		s.IDs = append(s.IDs, out.Graph.ExternalID(v))
	}
	if out.Algorithm.New(out.Params).Spec().Float {
		for _, x := range vals {
			s.Sum += math.Float64frombits(x)
		}
	}
	return s, nil
}
