package fabric

// #include "dmgfab.h"
import "C"

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// qop is a queued operation, in Go memory until Flush copies it into the
// endpoint's C op table.
type qop struct {
	kind  uint8
	mn    uint32
	off   uint64 // offset in the MN's pool
	loff  uint64 // staging offset: data or result
	n     uint64
	ooff  uint64
	coff  uint64
	dst   []byte  // read destination (nil: the data lands in place)
	prev  *uint64 // atomic result
	first bool    // first piece of a split read (for counting)
	buf   uint16  // registered buffer loff is in (0: staging)
}

// regBuf is a registered buffer (AllocBuffer).
type regBuf struct {
	b  []byte
	id uint16
}

type endpoint struct {
	net   *Network
	mu    sync.Mutex // guards ep against Close from Network.Close
	ep    *C.dmg_ep
	stage []byte // the C staging buffer
	used  uint64 // staging bytes allocated to queued ops
	q     []qop
	order []int // ops grouped by MN
	tally *verbs.Tally
	batch []verbs.Counters
	dead  error // set after a failed flush left ops outstanding
	perOp bool  // post with one cgo call per operation (benchmarks)
	bufs  []regBuf
	// busy is when the running Flush, or the open, entered the provider
	// (Unix ns; 0: none runs).
	busy atomic.Int64
	// probing, while set, bounds Flush instead of Config.Timeout
	// (Network.probe).
	probing time.Duration
	// closeDead closes the endpoint even after a timed-out flush (a
	// socket provider's: no peer writes into its memory), but frees
	// none of its memory (release).
	closeDead bool
	// kept: this endpoint goes on after Network.Halt (it gives back
	// what the process holds).
	kept atomic.Bool
}

var (
	_ verbs.Endpoint        = (*endpoint)(nil)
	_ verbs.Atomics         = (*endpoint)(nil)
	_ verbs.CountersInto    = (*endpoint)(nil)
	_ verbs.PostMode        = (*endpoint)(nil)
	_ verbs.BufferAllocator = (*endpoint)(nil)
)

// AllocBuffer is verbs.BufferAllocator: C memory registered with the
// endpoint, which reads fill and writes send without a staging copy.
func (e *endpoint) AllocBuffer(n int) ([]byte, error) {
	if err := e.usable(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, errors.Errorf("verbs: a registered buffer of %d bytes; expected a positive size", n)
	}
	var p unsafe.Pointer
	var id C.int
	var errbuf [errBufLen]byte
	if ret := C.dmg_ep_buf_alloc(e.ep, C.uint64_t(n), C.uint64_t(e.net.keys.Add(1)), &p, &id,
		(*C.char)(unsafe.Pointer(&errbuf[0])), errBufLen); ret != 0 {
		return nil, errors.Errorf("verbs: registering a buffer of %d bytes: %s", n, cstr(errbuf[:]))
	}
	b := unsafe.Slice((*byte)(p), n)
	e.bufs = append(e.bufs, regBuf{b: b, id: uint16(id)})
	return b, nil
}

// FreeBuffer is verbs.BufferAllocator.
func (e *endpoint) FreeBuffer(b []byte) error {
	for i, r := range e.bufs {
		if len(b) > 0 && &r.b[0] == &b[0] {
			if e.ep != nil {
				C.dmg_ep_buf_free(e.ep, C.int(r.id))
			}
			e.bufs = append(e.bufs[:i], e.bufs[i+1:]...)
			return nil
		}
	}
	return errors.New("verbs: FreeBuffer of a buffer this endpoint did not allocate")
}

// inBuf finds the registered buffer that holds p, and p's offset in it.
func (e *endpoint) inBuf(p []byte) (uint16, uint64, bool) {
	a := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	for _, r := range e.bufs {
		base := uintptr(unsafe.Pointer(&r.b[0]))
		if a >= base && a+uintptr(len(p)) <= base+uintptr(len(r.b)) {
			return r.id, uint64(a - base), true
		}
	}
	return 0, 0, false
}

// SetPostPerOp makes Flush post each operation with its own cgo call (and
// FI_MORE as usual) instead of the whole batch in one call; for measuring
// what the one-call batch saves.
func (e *endpoint) SetPostPerOp(on bool) { e.perOp = on }

// refresh re-reads the staging buffer after C grew it.
func (e *endpoint) refresh() {
	e.stage = unsafe.Slice((*byte)(C.dmg_ep_stage(e.ep)), int(e.stageLen()))
}

func (e *endpoint) stageLen() uint64 { return uint64(C.dmg_ep_stagelen(e.ep)) }

func (e *endpoint) usable() error {
	if e.ep == nil {
		return errors.New("verbs: endpoint is closed")
	}
	if e.net.halted.Load() && !e.kept.Load() {
		return errors.New("verbs: the network is halted (the process is ending)")
	}
	return e.dead
}

// alloc reserves n bytes of staging (8-byte aligned) and returns the offset.
func (e *endpoint) alloc(n uint64) (uint64, error) {
	off := (e.used + 7) &^ 7
	if need := off + n; need > uint64(len(e.stage)) {
		var errbuf [errBufLen]byte
		if ret := C.dmg_ep_reserve(e.ep, C.uint64_t(need), 0, C.uint64_t(e.net.keys.Add(1)),
			(*C.char)(unsafe.Pointer(&errbuf[0])), errBufLen); ret != 0 {
			return 0, errors.Errorf("verbs: growing the staging buffer to %d bytes: %s", need, cstr(errbuf[:]))
		}
		e.refresh()
	}
	e.used = off + n
	return off, nil
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
	if id, off, ok := e.inBuf(dst); ok {
		e.split(C.DMG_READ, src, id, off, uint64(len(dst)), nil)
		return nil
	}
	loff, err := e.alloc(uint64(len(dst)))
	if err != nil {
		return err
	}
	e.split(C.DMG_READ, src, 0, loff, uint64(len(dst)), dst)
	return nil
}

// split queues a read or write as pieces of at most maxMsg bytes.
func (e *endpoint) split(kind uint8, a verbs.Addr, buf uint16, loff, n uint64, dst []byte) {
	first := true
	for done := uint64(0); done < n; {
		piece := min(n-done, e.net.maxMsg)
		o := qop{kind: kind, mn: uint32(a.MN()), off: a.Offset() + done, loff: loff + done, n: piece, first: first, buf: buf}
		if first {
			o.dst = dst
		}
		e.q = append(e.q, o)
		done += piece
		first = false
	}
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
	if id, off, ok := e.inBuf(src); ok {
		e.split(C.DMG_WRITE, dst, id, off, uint64(len(src)), nil)
		return nil
	}
	loff, err := e.alloc(uint64(len(src)))
	if err != nil {
		return err
	}
	copy(e.stage[loff:], src)
	e.split(C.DMG_WRITE, dst, 0, loff, uint64(len(src)), nil)
	return nil
}

func (e *endpoint) atomic(kind uint8, a verbs.Addr, operand, compare uint64, prev *uint64) error {
	if err := e.usable(); err != nil {
		return err
	}
	if err := verbs.CheckAtomic(e.net.sizes, a); err != nil {
		return err
	}
	off, err := e.alloc(24)
	if err != nil {
		return err
	}
	binary.NativeEndian.PutUint64(e.stage[off+8:], operand)
	binary.NativeEndian.PutUint64(e.stage[off+16:], compare)
	e.q = append(e.q, qop{kind: kind, mn: uint32(a.MN()), off: a.Offset(), loff: off, n: 8,
		ooff: off + 8, coff: off + 16, prev: prev, first: true})
	return nil
}

func (e *endpoint) CAS64(a verbs.Addr, old, new uint64, prev *uint64) error {
	if prev == nil {
		return errors.New("verbs: CAS64 needs a prev pointer; expected non-nil (success is *prev == old)")
	}
	return e.atomic(C.DMG_CAS, a, new, old, prev)
}

func (e *endpoint) FAA64(a verbs.Addr, delta uint64, prev *uint64) error {
	return e.atomic(C.DMG_FAA, a, delta, 0, prev)
}

func (e *endpoint) Pending() int {
	n := 0
	for i := range e.q {
		if e.q[i].first {
			n++
		}
	}
	return n
}

func (e *endpoint) Flush() error {
	if err := e.usable(); err != nil {
		return err
	}
	defer e.reset()
	nq := len(e.q)
	if nq == 0 {
		return nil
	}
	var errbuf [errBufLen]byte
	if nq > int(C.dmg_ep_nops(e.ep)) {
		if ret := C.dmg_ep_reserve(e.ep, 0, C.int(nq), 0, (*C.char)(unsafe.Pointer(&errbuf[0])), errBufLen); ret != 0 {
			return errors.Errorf("verbs: growing the operation table to %d: %s", nq, cstr(errbuf[:]))
		}
	}
	// Group by MN (counting sort), count the batch.
	clear(e.batch)
	nmn := len(e.net.sizes)
	start := make([]int, nmn+1)
	for i := range e.q {
		start[e.q[i].mn+1]++
	}
	for mn := range nmn {
		start[mn+1] += start[mn]
	}
	if cap(e.order) < nq {
		e.order = make([]int, nq)
	}
	e.order = e.order[:nq]
	pos := append([]int(nil), start[:nmn]...)
	for i := range e.q {
		mn := e.q[i].mn
		e.order[pos[mn]] = i
		pos[mn]++
	}
	ops := unsafe.Slice(C.dmg_ep_ops(e.ep), nq)
	for k, i := range e.order {
		o := &e.q[i]
		r := e.net.remote[o.mn]
		c := &ops[k]
		c.kind = C.uint8_t(o.kind)
		c.buf = C.uint16_t(o.buf)
		c.more = 1
		if k+1 == nq || e.q[e.order[k+1]].mn != o.mn {
			c.more = 0 // last of this MN's doorbell
		}
		c.peer = C.uint32_t(o.mn)
		c.raddr = C.uint64_t(r.base + o.off)
		c.key = C.uint64_t(r.key)
		c.loff = C.uint64_t(o.loff)
		c.len = C.uint64_t(o.n)
		c.ooff = C.uint64_t(o.ooff)
		c.coff = C.uint64_t(o.coff)
		b := &e.batch[o.mn]
		switch o.kind {
		case C.DMG_READ:
			if o.first {
				b.Reads++
			}
			b.BytesRead += o.n
		case C.DMG_WRITE:
			if o.first {
				b.Writes++
			}
			b.BytesWritten += o.n
		case C.DMG_CAS:
			b.CAS++
		case C.DMG_FAA:
			b.FAA++
		}
	}
	var bad C.int
	limit := e.net.cfg.Timeout
	if e.probing > 0 {
		limit = e.probing
	}
	timeout := C.int64_t(limit / time.Nanosecond)
	cerr := (*C.char)(unsafe.Pointer(&errbuf[0]))
	var ret C.int
	e.busy.Store(time.Now().UnixNano()) // the network's watch (watch.go)
	if !e.perOp {
		ret = C.dmg_ep_run(e.ep, C.int(nq), timeout, &bad, cerr, errBufLen)
	} else {
		for i := 0; i < nq && ret == 0; i++ {
			ret = C.dmg_ep_post(e.ep, C.int(i), C.int(i+1), timeout, &bad, cerr, errBufLen)
		}
		if ret == 0 {
			ret = C.dmg_ep_wait(e.ep, C.int(nq), timeout, &bad, cerr, errBufLen)
		}
	}
	e.busy.Store(0)
	if ret != 0 {
		who, what := "an MN", ""
		if b := int(bad); b >= 0 && b < nq {
			who = e.net.mnName(int(ops[b].peer))
			what = fmt.Sprintf("; the first missing: a %d-byte %s at offset %d", uint64(ops[b].len), opKind(uint8(ops[b].kind)), uint64(ops[b].raddr)-e.net.remote[ops[b].peer].base)
			what += e.net.shmStateText(int(ops[b].peer), e)
		}
		if f := e.net.probesFailed.Load(); f > 0 {
			what += fmt.Sprintf("; %d new endpoints of this CN had failed their probe", f)
			if first := e.net.firstProbe.Load(); first != nil {
				what += " (the first: " + *first + ")"
			}
		}
		err := errors.Errorf("verbs: %s batch of %d operations to %s failed: %s", e.net.provider, nq, who, cstr(errbuf[:]))
		if ret == -C.DMG_ETIMEDOUT {
			err = errors.WithStack(&verbs.TimeoutError{Msg: fmt.Sprintf("verbs: no completion from %s within %v (%s%s); expected the peer to be alive and progressing",
				who, limit, cstr(errbuf[:]), what)})
		}
		// Operations may still be in flight and reference the staging
		// buffer: this endpoint cannot be used again.
		e.dead = errors.Wrap(err, "verbs: endpoint unusable after a failed flush")
		return err
	}
	for i := range e.q {
		o := &e.q[i]
		switch {
		case o.kind == C.DMG_READ && o.first && o.dst != nil:
			copy(o.dst, e.stage[o.loff:])
		case o.kind == C.DMG_CAS || o.kind == C.DMG_FAA:
			if o.prev != nil {
				*o.prev = binary.NativeEndian.Uint64(e.stage[o.loff:])
			}
		}
	}
	e.tally.AddBatch(e.batch)
	return nil
}

func (e *endpoint) reset() {
	clear(e.q)
	e.q = e.q[:0]
	e.used = 0
}

func (e *endpoint) Counters() verbs.Counters       { return e.tally.Total() }
func (e *endpoint) CountersByMN() []verbs.Counters { return e.tally.ByMN() }

// CountersInto is verbs.CountersInto.
func (e *endpoint) CountersInto(perMN []verbs.Counters) verbs.Counters { return e.tally.Into(perMN) }

func (e *endpoint) Close() error {
	e.net.mu.Lock()
	if e.net.eps != nil {
		delete(e.net.eps, e)
	}
	e.net.mu.Unlock()
	e.release()
	return nil
}

func (e *endpoint) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ep != nil {
		// After a timed-out flush, operations may still be in flight and
		// be completed into this endpoint's memory: by the peer over shm
		// (it writes its replies into our region), by the provider's own
		// progress thread over tcp;ofi_rxm. Leak that memory rather than
		// free it; closeDead still closes the endpoint, whose stuck
		// connection stalls the MN's others.
		switch {
		case e.dead == nil:
			C.dmg_ep_close(e.ep)
		case e.closeDead:
			C.dmg_ep_abandon(e.ep)
		}
		e.ep = nil
		e.stage = nil
		e.bufs = nil
		e.reset()
	}
}

// opKind names an operation's kind in errors.
func opKind(k uint8) string {
	switch k {
	case C.DMG_READ:
		return "READ"
	case C.DMG_WRITE:
		return "WRITE"
	case C.DMG_CAS:
		return "CAS"
	case C.DMG_FAA:
		return "fetch-add"
	}
	return fmt.Sprintf("operation of kind %d", k)
}
