package rank

import "github.com/dmg-hpc/dmg/algo"

// Needs is what a run of a kernel in a configuration asks of the job
// that hosts it: the one question job asks before it reads anything
// (NeedsOf).
type Needs struct {
	// Plain: the baselines' plain-CSR layout (dmstore.LayoutConfig.Naive).
	Plain bool
	// In: a directed graph's in-edges on DM, for dense iterations that
	// pull, and for the triangle operator, whose neighbourhoods are in-
	// and out-neighbours.
	In bool
	// Puller: an endpoint of its own for the RefRD puller.
	Puller bool
}

// NeedsOf answers for kernel spec s in configuration c, or refuses a
// kernel that c cannot run (a parameter error naming why). A job that
// only loads a graph asks with the zero Spec.
func NeedsOf(c Config, s algo.Spec) (Needs, error) {
	m, err := parseMode(c.Mode)
	if err != nil {
		return Needs{}, err
	}
	if err := checkKernel(m, c, s); err != nil {
		return Needs{}, err
	}
	return Needs{
		Plain:  m.plain(),
		In:     m.pulls(&c, s) || s.Triangles,
		Puller: !m.plain() && c.RefRDPuller && !c.NoCollab && !c.NoRefRD,
	}, nil
}
