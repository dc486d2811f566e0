package memfab

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opCAS
	opFAA
)

type op struct {
	kind     opKind
	addr     verbs.Addr
	dst      []byte // read
	src      int    // write: offset in endpoint.wbuf
	n        int    // write length
	old, arg uint64
	prev     *uint64
}

type endpoint struct {
	net    *Network
	tally  *verbs.Tally
	batch  []verbs.Counters // per MN, this batch
	ops    []op
	wbuf   []byte
	closed atomic.Bool
	fence  uint64 // Flush ends with an atomic on it: a full fence
}

var (
	_ verbs.Endpoint     = (*endpoint)(nil)
	_ verbs.Atomics      = (*endpoint)(nil)
	_ verbs.CountersInto = (*endpoint)(nil)
)

func (e *endpoint) usable() error {
	if e.closed.Load() {
		return errors.New("verbs: endpoint is closed")
	}
	return nil
}

func (e *endpoint) Read(dst []byte, src verbs.Addr) error {
	if err := e.usable(); err != nil {
		return err
	}
	if err := verbs.CheckRange(e.net.sizes, src, len(dst)); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	e.ops = append(e.ops, op{kind: opRead, addr: src, dst: dst})
	return nil
}

func (e *endpoint) Write(dst verbs.Addr, src []byte) error {
	if err := e.usable(); err != nil {
		return err
	}
	if err := verbs.CheckRange(e.net.sizes, dst, len(src)); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	e.ops = append(e.ops, op{kind: opWrite, addr: dst, src: len(e.wbuf), n: len(src)})
	e.wbuf = append(e.wbuf, src...)
	return nil
}

func (e *endpoint) CAS64(a verbs.Addr, old, new uint64, prev *uint64) error {
	if err := e.usable(); err != nil {
		return err
	}
	if err := verbs.CheckAtomic(e.net.sizes, a); err != nil {
		return err
	}
	if prev == nil {
		return errors.New("verbs: CAS64 needs a prev pointer; expected non-nil (success is *prev == old)")
	}
	e.ops = append(e.ops, op{kind: opCAS, addr: a, old: old, arg: new, prev: prev})
	return nil
}

func (e *endpoint) FAA64(a verbs.Addr, delta uint64, prev *uint64) error {
	if err := e.usable(); err != nil {
		return err
	}
	if err := verbs.CheckAtomic(e.net.sizes, a); err != nil {
		return err
	}
	e.ops = append(e.ops, op{kind: opFAA, addr: a, arg: delta, prev: prev})
	return nil
}

func (e *endpoint) Pending() int { return len(e.ops) }

func (e *endpoint) Flush() error {
	if err := e.usable(); err != nil {
		return err
	}
	defer e.reset()
	if len(e.ops) == 0 {
		return nil
	}
	clear(e.batch)
	for i := range e.ops {
		o := &e.ops[i]
		mn := o.addr.MN()
		p := e.net.pools[mn]
		if p.closed.Load() {
			return errors.Errorf("verbs: %s has closed its pool; expected it to serve until every CN closes", e.net.mnName(mn))
		}
		off := o.addr.Offset()
		b := &e.batch[mn]
		switch o.kind {
		case opRead:
			if len(o.dst) == 8 && off%8 == 0 {
				// An aligned word is read whole, as a NIC does: a counter
				// read while other CNs add to it sees a value it held.
				binary.NativeEndian.PutUint64(o.dst, atomic.LoadUint64(&p.words[off/8]))
			} else {
				copy(o.dst, p.bytes[off:])
			}
			b.Reads++
			b.BytesRead += uint64(len(o.dst))
		case opWrite:
			copy(p.bytes[off:], e.wbuf[o.src:o.src+o.n])
			b.Writes++
			b.BytesWritten += uint64(o.n)
		case opCAS:
			w := &p.words[off/8]
			for {
				cur := atomic.LoadUint64(w)
				if cur != o.old || atomic.CompareAndSwapUint64(w, cur, o.arg) {
					*o.prev = cur
					break
				}
			}
			b.CAS++
		case opFAA:
			v := atomic.AddUint64(&p.words[off/8], o.arg) - o.arg
			if o.prev != nil {
				*o.prev = v
			}
			b.FAA++
		}
	}
	// The copies above are plain stores; a sequentially consistent atomic
	// orders them before anything this rank does after Flush returns (a
	// barrier, an atomic another process observes), as an RDMA completion
	// does. In one process the Go memory model needs no more; across
	// processes sharing a mapping (package cxl) this is the guarantee.
	atomic.AddUint64(&e.fence, 1)
	e.tally.AddBatch(e.batch)
	return nil
}

func (e *endpoint) reset() {
	clear(e.ops)
	e.ops = e.ops[:0]
	e.wbuf = e.wbuf[:0]
}

func (e *endpoint) Counters() verbs.Counters       { return e.tally.Total() }
func (e *endpoint) CountersByMN() []verbs.Counters { return e.tally.ByMN() }

// CountersInto is verbs.CountersInto.
func (e *endpoint) CountersInto(perMN []verbs.Counters) verbs.Counters { return e.tally.Into(perMN) }

func (e *endpoint) Close() error {
	e.net.mu.Lock()
	delete(e.net.eps, e)
	e.net.mu.Unlock()
	e.close()
	return nil
}

func (e *endpoint) close() {
	e.closed.Store(true)
	e.reset()
}
