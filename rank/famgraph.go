package rank

import (
	"encoding/binary"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/verbs"
)

// The FAM-Graph baseline (DESIGN.md §8): every CN holds the whole index
// and every vertex's value and accumulator locally (O(|V|) per CN); edges
// are fetched from DM one list per READ. Updates are all local; after the
// push, each CN writes its partial accumulators of every other chunk to
// that chunk's slot region on DM (large WRITEs), the owner folds them in,
// and every CN re-reads all values.

// famRegions are the partial-accumulator slots: for chunk k, one slot of
// |V_k| words per sending CN, on the MN that holds chunk k.
type famRegions struct {
	base   []verbs.Addr
	bounds []uint32
}

// famReserve is the space the slots need on each MN.
func famReserve(bounds []uint32, numMN int) uint64 {
	c := len(bounds) - 1
	per := make([]uint64, numMN)
	for k := 0; k < c; k++ {
		per[k*numMN/c] += uint64(c) * 8 * uint64(bounds[k+1]-bounds[k])
	}
	var mx uint64
	for _, b := range per {
		mx = max(mx, b)
	}
	return mx
}

func planFAM(l *csr.Layout) *famRegions {
	b := l.Config.Bounds
	c := len(b) - 1
	f := &famRegions{base: make([]verbs.Addr, c), bounds: b}
	used := make([]uint64, len(l.MN))
	for k := 0; k < c; k++ {
		m := l.ChunkMN[k]
		f.base[k] = addr(m, l.MN[m].End+used[m])
		used[m] += uint64(c) * 8 * uint64(b[k+1]-b[k])
	}
	return f
}

func addr(m int, off uint64) verbs.Addr {
	a, _ := verbs.MakeAddr(m, off) // bounded by the pools sized from the layout
	return a
}

func (f *famRegions) slot(k, sender int) verbs.Addr {
	return f.base[k].Add(uint64(sender) * 8 * uint64(f.bounds[k+1]-f.bounds[k]))
}

// famInit reads the whole plain-CSR index (every chunk's offset words and
// its end word) and sets up the full value and accumulator arrays.
func (e *engine) famInit() error {
	st, ep := e.st, e.eps[0]
	b := st.Config.Bounds
	n := st.N()
	e.famIdx = make([]uint64, 0, int(n)+len(b)-1)
	for k := 0; k+1 < len(b); k++ {
		words := make([]byte, 8*(b[k+1]-b[k]+1))
		if err := verbs.ReadBulk(ep, words, st.EntryAddr(b[k])); err != nil {
			return err
		}
		for i := 0; i < len(words); i += 8 {
			e.famIdx = append(e.famIdx, binary.LittleEndian.Uint64(words[i:]))
		}
	}
	e.allVal, e.allAcc = make([]uint64, n), make([]uint64, n)
	for v := range n {
		e.allVal[v], _ = e.p.Init(v, n)
		e.allAcc[v] = e.p.Identity
	}
	return nil
}

// famExchange writes this CN's partial accumulators of every other chunk
// to its slot there and resets them.
func (e *engine) famExchange() error {
	if !e.isCN() {
		return nil
	}
	b := e.st.Config.Bounds
	for k := 0; k+1 < len(b); k++ {
		if k == e.w.Index {
			continue
		}
		part := e.allAcc[b[k]:b[k+1]]
		if err := verbs.WriteBulk(e.eps[0], e.fam.slot(k, e.w.Index), wordsToBytes(part)); err != nil {
			return err
		}
		for i := range part {
			part[i] = e.p.Identity
		}
	}
	return nil
}

// famGather folds the other CNs' partial accumulators of the own chunk
// into in (which it first sets to the identity).
func (e *engine) famGather(in []uint64) error {
	for i := range in {
		in[i] = e.p.Identity
	}
	buf := make([]byte, 8*len(in))
	for s := 0; s < e.w.Roles.CN; s++ {
		if s == e.w.Index {
			continue
		}
		if err := verbs.ReadBulk(e.eps[0], buf, e.fam.slot(e.w.Index, s)); err != nil {
			return err
		}
		for i := range in {
			in[i] = e.p.Combine(in[i], binary.LittleEndian.Uint64(buf[8*i:]))
		}
	}
	return nil
}

// famRefresh re-reads every vertex's value after the owners wrote theirs.
func (e *engine) famRefresh() error {
	if !e.isCN() {
		return nil
	}
	return e.st.readWords(e.eps[0], attrValue, 0, e.allVal)
}

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
