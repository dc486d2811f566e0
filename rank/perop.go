package rank

import "github.com/dmg-hpc/dmg/verbs"

// perOpEndpoint rings a doorbell and waits after every operation (the
// --no-doorbell ablation).
type perOpEndpoint struct {
	verbs.Endpoint
	at verbs.Atomics
}

func perOp(ep verbs.Endpoint) verbs.Endpoint {
	at, _ := ep.(verbs.Atomics)
	return &perOpEndpoint{Endpoint: ep, at: at}
}

var (
	_ verbs.Atomics      = (*perOpEndpoint)(nil)
	_ verbs.CountersInto = (*perOpEndpoint)(nil)
)

func (p *perOpEndpoint) Read(dst []byte, src verbs.Addr) error {
	if err := p.Endpoint.Read(dst, src); err != nil {
		return err
	}
	return p.Endpoint.Flush()
}

func (p *perOpEndpoint) Write(dst verbs.Addr, src []byte) error {
	if err := p.Endpoint.Write(dst, src); err != nil {
		return err
	}
	return p.Endpoint.Flush()
}

func (p *perOpEndpoint) CAS64(a verbs.Addr, old, new uint64, prev *uint64) error {
	if err := p.at.CAS64(a, old, new, prev); err != nil {
		return err
	}
	return p.Endpoint.Flush()
}

func (p *perOpEndpoint) FAA64(a verbs.Addr, delta uint64, prev *uint64) error {
	if err := p.at.FAA64(a, delta, prev); err != nil {
		return err
	}
	return p.Endpoint.Flush()
}

func (p *perOpEndpoint) CountersInto(perMN []verbs.Counters) verbs.Counters {
	return verbs.ReadCounters(p.Endpoint, perMN)
}
