package verbstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// PoolBytes is the pool size the suite asks every MN for.
const PoolBytes = 64 << 10

// Opener opens a backend's network on one rank (collectively).
type Opener func(w *spmd.World, cfg verbs.Config) (verbs.Network, error)

// Env is what a check sees on one rank.
type Env struct {
	W   *spmd.World
	Net verbs.Network
}

// Check is one conformance check. Fn runs on every rank of the job and is
// collective: every rank calls the same barriers.
type Check struct {
	Name string
	Fn   func(e *Env) error
}

// Checks returns the suite.
func Checks() []Check {
	return []Check{
		{"PoolEdges", checkPoolEdges},
		{"OutOfRange", checkOutOfRange},
		{"ZeroLength", checkZeroLength},
		{"ConcurrentFAA", checkFAA},
		{"ConcurrentCAS", checkCAS},
		{"MixedBatch", checkMixed},
		{"Large", checkLarge},
		{"Counters", checkCounters},
		{"Merger", checkMerger},
		{"Buffers", checkBuffers},
		{"ParallelEndpoints", checkParallel},
	}
}

// Run runs every check as a subtest of t, each as a fresh in-process job
// (spmd.RunLocal) per role layout.
func Run(t *testing.T, open Opener, layouts ...spmd.Roles) {
	t.Helper()
	for _, roles := range layouts {
		for _, c := range Checks() {
			t.Run(fmt.Sprintf("%s/%s", roles, c.Name), func(t *testing.T) {
				err := spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
					w, err := spmd.NewWorld(rt, roles)
					if err != nil {
						return err
					}
					net, err := open(w, verbs.Config{PoolBytes: PoolBytes})
					if err != nil {
						return err
					}
					if err := c.Fn(&Env{W: w, Net: net}); err != nil {
						return err
					}
					return net.Close()
				})
				if err != nil {
					t.Fatalf("%+v", err)
				}
			})
		}
	}
}

// RunRank runs the whole suite on this rank of a multi-process job: it opens
// the network once with cfg (PoolBytes is set by the suite), runs every
// check, and closes. Every rank must call it.
func RunRank(w *spmd.World, open Opener, cfg verbs.Config) error {
	cfg.PoolBytes = PoolBytes
	net, err := open(w, cfg)
	if err != nil {
		return err
	}
	e := &Env{W: w, Net: net}
	for _, c := range Checks() {
		if err := e.reset(); err != nil {
			return errors.Wrapf(err, "verbstest: before %s", c.Name)
		}
		if err := c.Fn(e); err != nil {
			return errors.Wrapf(err, "verbstest: %s on rank %d", c.Name, w.Rank())
		}
	}
	return net.Close()
}

// reset zeroes every MN's pool between checks, between two barriers.
func (e *Env) reset() error {
	if err := e.W.Comm.Barrier(); err != nil {
		return err
	}
	clear(e.Net.Pool())
	return e.W.Comm.Barrier()
}

func (e *Env) isCN() bool { return e.W.Role == spmd.CN }

func (e *Env) barrier() error { return e.W.Comm.Barrier() }

func (e *Env) addr(mn int, off uint64) verbs.Addr {
	a, err := verbs.MakeAddr(mn, off)
	if err != nil {
		panic(err) // suite bug, not a backend failure
	}
	return a
}

func (e *Env) endpoint() (verbs.Endpoint, verbs.Atomics, error) {
	ep, err := e.Net.NewEndpoint()
	if err != nil {
		return nil, nil, err
	}
	at, ok := ep.(verbs.Atomics)
	if !ok {
		ep.Close()
		return nil, nil, errors.Errorf("verbstest: %s endpoint does not implement verbs.Atomics", e.Net.Provider())
	}
	return ep, at, nil
}

func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + 1)
	}
	return b
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// checkPoolEdges: CN 0 writes the first and last bytes of every pool; the MN
// sees them in Pool, and every CN reads them back.
func checkPoolEdges(e *Env) error {
	nmn := e.Net.NumMN()
	for mn := range nmn {
		if got := e.Net.PoolSize(mn); got != PoolBytes {
			return errors.Errorf("PoolSize(%d) = %d, want %d", mn, got, PoolBytes)
		}
	}
	if e.Net.PoolSize(nmn) != 0 || e.Net.PoolSize(-1) != 0 {
		return errors.New("PoolSize of an unknown MN is not 0")
	}
	head, tail := pattern(1, 16), pattern(2, 16)
	if e.isCN() && e.W.Index == 0 {
		ep, _, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		for mn := range nmn {
			if err := ep.Write(e.addr(mn, 0), head); err != nil {
				return err
			}
			if err := ep.Write(e.addr(mn, PoolBytes-16), tail); err != nil {
				return err
			}
		}
		if err := ep.Flush(); err != nil {
			return err
		}
	}
	if err := e.barrier(); err != nil {
		return err
	}
	if !e.isCN() {
		p := e.Net.Pool()
		if len(p) != PoolBytes {
			return errors.Errorf("MN %d: len(Pool()) = %d, want %d", e.W.Index, len(p), PoolBytes)
		}
		if !bytes.Equal(p[:16], head) || !bytes.Equal(p[PoolBytes-16:], tail) {
			return errors.Errorf("MN %d: pool edges %x..%x, want %x..%x", e.W.Index, p[:16], p[PoolBytes-16:], head, tail)
		}
	} else {
		if e.Net.Pool() != nil {
			return errors.New("Pool() on a CN is not nil")
		}
		ep, _, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		type rd struct {
			buf  []byte
			want []byte
		}
		var rds []rd
		for mn := range nmn {
			// Edge reads of several lengths, including the very last byte.
			for _, c := range []struct {
				off  uint64
				want []byte
			}{{0, head}, {0, head[:1]}, {PoolBytes - 16, tail}, {PoolBytes - 1, tail[15:]}, {PoolBytes - 9, tail[7:]}} {
				r := rd{buf: make([]byte, len(c.want)), want: c.want}
				if err := ep.Read(r.buf, e.addr(mn, c.off)); err != nil {
					return err
				}
				rds = append(rds, r)
			}
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		for i, r := range rds {
			if !bytes.Equal(r.buf, r.want) {
				return errors.Errorf("edge read %d: got %x, want %x", i, r.buf, r.want)
			}
		}
	}
	// The MNs cannot post.
	if !e.isCN() {
		if _, err := e.Net.NewEndpoint(); err == nil {
			return errors.New("NewEndpoint on an MN succeeded; expected an error")
		}
	}
	return e.barrier()
}

// checkOutOfRange: every bad address is rejected when queued and queues
// nothing; the endpoint stays usable.
func checkOutOfRange(e *Env) error {
	if !e.isCN() {
		return e.barrier()
	}
	ep, at, err := e.endpoint()
	if err != nil {
		return err
	}
	defer ep.Close()
	nmn := e.Net.NumMN()
	buf := make([]byte, 16)
	var prev uint64
	bad := []struct {
		name string
		fn   func() error
	}{
		{"read past end", func() error { return ep.Read(buf[:8], e.addr(0, PoolBytes-7)) }},
		{"write past end", func() error { return ep.Write(e.addr(nmn-1, PoolBytes-4), buf[:8]) }},
		{"read at end+1 zero-length", func() error { return ep.Read(nil, e.addr(0, PoolBytes+1)) }},
		{"read unknown MN", func() error { return ep.Read(buf[:8], e.addr(nmn, 0)) }},
		{"write unknown MN", func() error { return ep.Write(e.addr(verbs.MaxMN, 0), buf[:1]) }},
		{"read far offset", func() error { return ep.Read(buf[:1], e.addr(0, verbs.MaxOffset)) }},
		{"read wrapping offset", func() error { return ep.Read(buf[:16], e.addr(0, verbs.MaxOffset-7)) }},
		{"faa past end", func() error { return at.FAA64(e.addr(0, PoolBytes), 1, &prev) }},
		{"faa misaligned", func() error { return at.FAA64(e.addr(0, 4), 1, &prev) }},
		{"cas misaligned", func() error { return at.CAS64(e.addr(nmn-1, 9), 0, 1, &prev) }},
		{"cas unknown MN", func() error { return at.CAS64(e.addr(nmn, 0), 0, 1, &prev) }},
		{"cas nil prev", func() error { return at.CAS64(e.addr(0, 0), 0, 1, nil) }},
	}
	for _, c := range bad {
		err := c.fn()
		if err == nil {
			return errors.Errorf("%s: accepted; expected an error", c.name)
		}
		if c.name != "cas nil prev" {
			var re *verbs.RangeError
			if !errors.As(err, &re) {
				return errors.Errorf("%s: error %v is not a *verbs.RangeError", c.name, err)
			}
		}
		if n := ep.Pending(); n != 0 {
			return errors.Errorf("%s: rejected but %d operations pending; expected 0", c.name, n)
		}
		if err := e.Net.Check(e.addr(nmn, 0), 1); err == nil {
			return errors.New("Network.Check accepted an unknown MN")
		}
	}
	// Good operations exactly at the edges are accepted, and the endpoint
	// still works after the rejections.
	if err := ep.Read(buf[:8], e.addr(nmn-1, PoolBytes-8)); err != nil {
		return errors.Wrap(err, "read of the last 8 bytes")
	}
	if err := at.FAA64(e.addr(0, PoolBytes-8), 0, &prev); err != nil {
		return errors.Wrap(err, "FAA on the last word")
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	return e.barrier()
}

// checkZeroLength: zero-length operations are accepted (at any offset up to
// the pool size), queue nothing and count nothing; an empty Flush is free.
func checkZeroLength(e *Env) error {
	if !e.isCN() {
		return e.barrier()
	}
	ep, _, err := e.endpoint()
	if err != nil {
		return err
	}
	defer ep.Close()
	before := ep.Counters()
	for _, off := range []uint64{0, 100, PoolBytes} {
		if err := ep.Read(nil, e.addr(0, off)); err != nil {
			return errors.Wrapf(err, "zero-length read at %d", off)
		}
		if err := ep.Write(e.addr(0, off), []byte{}); err != nil {
			return errors.Wrapf(err, "zero-length write at %d", off)
		}
	}
	if n := ep.Pending(); n != 0 {
		return errors.Errorf("zero-length operations left %d pending; expected 0", n)
	}
	for range 3 {
		if err := ep.Flush(); err != nil {
			return err
		}
	}
	if c := ep.Counters(); c != before {
		return errors.Errorf("zero-length operations and empty flushes counted %+v; expected no change from %+v", c, before)
	}
	return e.barrier()
}

const faaRounds = 20

// checkFAA: every CN adds to one word on every MN, in batches; the sums are
// exact and the previous values are a permutation of 0..total-1.
func checkFAA(e *Env) error {
	ncn, nmn := e.W.Roles.CN, e.Net.NumMN()
	const batch = 4
	var prevs []uint64
	if e.isCN() {
		ep, at, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		prevs = make([]uint64, faaRounds*batch*nmn)
		k := 0
		for range faaRounds {
			for range batch {
				for mn := range nmn {
					if err := at.FAA64(e.addr(mn, 8), 1, &prevs[k]); err != nil {
						return err
					}
					// A second word gets a larger delta and no prev.
					if err := at.FAA64(e.addr(mn, 16), 1<<40, nil); err != nil {
						return err
					}
					k++
				}
			}
			if err := ep.Flush(); err != nil {
				return err
			}
		}
	}
	blob := make([]byte, 8*len(prevs))
	for i, p := range prevs {
		binary.LittleEndian.PutUint64(blob[8*i:], p)
	}
	all, err := e.W.Comm.AllGather(blob)
	if err != nil {
		return err
	}
	total := uint64(ncn * faaRounds * batch)
	if !e.isCN() {
		p := e.Net.Pool()
		if got := le64(p[8:]); got != total {
			return errors.Errorf("MN %d: FAA sum %d, want %d", e.W.Index, got, total)
		}
		if got := le64(p[16:]); got != total<<40 {
			return errors.Errorf("MN %d: FAA sum of 2^40 deltas %#x, want %#x", e.W.Index, got, total<<40)
		}
		// Each MN checks the previous values returned for its word.
		var seen []uint64
		for r := range ncn {
			b := all[e.W.Roles.RankOf(spmd.CN, r)]
			for i := 0; i+8 <= len(b); i += 8 {
				if (i/8)%nmn == e.W.Index {
					seen = append(seen, le64(b[i:]))
				}
			}
		}
		slices.Sort(seen)
		if uint64(len(seen)) != total {
			return errors.Errorf("MN %d: %d FAA results, want %d", e.W.Index, len(seen), total)
		}
		for i, v := range seen {
			if v != uint64(i) {
				return errors.Errorf("MN %d: FAA previous values are not 0..%d (sorted[%d] = %d)", e.W.Index, total-1, i, v)
			}
		}
	}
	return e.barrier()
}

const casIncrements = 25

// checkCAS: every CN increments one word per MN with a CAS loop; no
// increment is lost.
func checkCAS(e *Env) error {
	nmn := e.Net.NumMN()
	succ := 0
	if e.isCN() {
		ep, at, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		guess := make([]uint64, nmn)
		prev := make([]uint64, nmn)
		done := make([]int, nmn)
		for {
			pending := false
			for mn := range nmn {
				if done[mn] == casIncrements {
					continue
				}
				pending = true
				if err := at.CAS64(e.addr(mn, 24), guess[mn], guess[mn]+1, &prev[mn]); err != nil {
					return err
				}
			}
			if !pending {
				break
			}
			if err := ep.Flush(); err != nil {
				return err
			}
			for mn := range nmn {
				if done[mn] == casIncrements {
					continue
				}
				if prev[mn] == guess[mn] {
					done[mn]++
					succ++
					guess[mn]++
				} else {
					guess[mn] = prev[mn]
				}
			}
		}
	}
	n := []int64{int64(succ)}
	if err := e.W.Comm.AllReduceInt64(n, spmd.Sum); err != nil {
		return err
	}
	want := uint64(e.W.Roles.CN * casIncrements)
	if uint64(n[0]) != want*uint64(nmn) {
		return errors.Errorf("CAS successes %d, want %d", n[0], want*uint64(nmn))
	}
	if !e.isCN() {
		if got := le64(e.Net.Pool()[24:]); got != want {
			return errors.Errorf("MN %d: CAS counter %d, want %d", e.W.Index, got, want)
		}
	}
	return e.barrier()
}

// cnBase is the start of CN i's private region in every pool.
func cnBase(i int) uint64 { return 4096 + uint64(i)*4096 }

// checkMixed: one batch of reads, writes, CAS and FAA to every MN, then a
// batch that reads everything back.
func checkMixed(e *Env) error {
	if !e.isCN() {
		if err := e.barrier(); err != nil {
			return err
		}
		return e.barrier()
	}
	ep, at, err := e.endpoint()
	if err != nil {
		return err
	}
	defer ep.Close()
	nmn, me := e.Net.NumMN(), e.W.Index
	base := cnBase(me)
	// Setup: initial words for the atomics, written and flushed.
	for mn := range nmn {
		init := make([]byte, 16)
		binary.LittleEndian.PutUint64(init, 100)
		binary.LittleEndian.PutUint64(init[8:], 7)
		if err := ep.Write(e.addr(mn, base), init); err != nil {
			return err
		}
		if err := ep.Write(e.addr(mn, base+64), pattern(me+mn, 40)); err != nil {
			return err
		}
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	if err := e.barrier(); err != nil {
		return err
	}
	type res struct {
		rd                  []byte
		faa, casOK, casFail uint64
	}
	rs := make([]res, nmn)
	for mn := range nmn {
		r := &rs[mn]
		r.rd = make([]byte, 40)
		if err := ep.Read(r.rd, e.addr(mn, base+64)); err != nil {
			return err
		}
		if err := ep.Write(e.addr(mn, base+128), pattern(mn, 33)); err != nil {
			return err
		}
		if err := at.FAA64(e.addr(mn, base), 5, &r.faa); err != nil {
			return err
		}
		if err := at.CAS64(e.addr(mn, base+8), 7, 8, &r.casOK); err != nil {
			return err
		}
		if err := at.CAS64(e.addr(mn, base+16), 99, 1, &r.casFail); err != nil {
			return err
		}
	}
	if got := ep.Pending(); got != 5*nmn {
		return errors.Errorf("Pending = %d, want %d", got, 5*nmn)
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	for mn, r := range rs {
		if !bytes.Equal(r.rd, pattern(me+mn, 40)) {
			return errors.Errorf("MN %d: mixed-batch read %x, want %x", mn, r.rd, pattern(me+mn, 40))
		}
		if r.faa != 100 || r.casOK != 7 || r.casFail != 0 {
			return errors.Errorf("MN %d: FAA prev %d CAS prevs %d,%d; want 100, 7, 0", mn, r.faa, r.casOK, r.casFail)
		}
	}
	// Read back the effects.
	back := make([][]byte, nmn)
	for mn := range nmn {
		back[mn] = make([]byte, 128+33)
		if err := ep.Read(back[mn], e.addr(mn, base)); err != nil {
			return err
		}
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	for mn, b := range back {
		if le64(b) != 105 || le64(b[8:]) != 8 || le64(b[16:]) != 0 {
			return errors.Errorf("MN %d: words %d,%d,%d after the batch; want 105, 8, 0", mn, le64(b), le64(b[8:]), le64(b[16:]))
		}
		if !bytes.Equal(b[128:], pattern(mn, 33)) {
			return errors.Errorf("MN %d: mixed-batch write not visible", mn)
		}
	}
	return e.barrier()
}

// checkLarge: one CN writes and reads a whole pool in one operation and a
// few odd-sized pieces.
func checkLarge(e *Env) error {
	if e.isCN() && e.W.Index == 0 {
		ep, _, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		nmn := e.Net.NumMN()
		for mn := range nmn {
			if err := ep.Write(e.addr(mn, 0), pattern(mn+5, PoolBytes)); err != nil {
				return err
			}
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		for mn := range nmn {
			got := make([]byte, PoolBytes)
			odd := make([]byte, 12345)
			if err := ep.Read(got, e.addr(mn, 0)); err != nil {
				return err
			}
			if err := ep.Read(odd, e.addr(mn, 777)); err != nil {
				return err
			}
			if err := ep.Flush(); err != nil {
				return err
			}
			want := pattern(mn+5, PoolBytes)
			if !bytes.Equal(got, want) || !bytes.Equal(odd, want[777:777+12345]) {
				return errors.Errorf("MN %d: large read differs from what was written", mn)
			}
		}
	}
	if err := e.barrier(); err != nil {
		return err
	}
	if !e.isCN() && !bytes.Equal(e.Net.Pool(), pattern(e.W.Index+5, PoolBytes)) {
		return errors.Errorf("MN %d: pool differs from the large write", e.W.Index)
	}
	return e.barrier()
}

// checkCounters: known operations produce known counts, in total and by MN.
func checkCounters(e *Env) error {
	if !e.isCN() {
		return e.barrier()
	}
	ep, at, err := e.endpoint()
	if err != nil {
		return err
	}
	defer ep.Close()
	nmn, base := e.Net.NumMN(), cnBase(e.W.Index)
	if c := ep.Counters(); c != (verbs.Counters{}) {
		return errors.Errorf("fresh endpoint counts %+v; expected zero", c)
	}
	buf := make([]byte, 100)
	var prev uint64
	// Flush 1: 3 reads of 10 B and 1 write of 20 B to MN 0.
	for i := range 3 {
		if err := ep.Read(buf[10*i:10*i+10], e.addr(0, base+uint64(10*i))); err != nil {
			return err
		}
	}
	if err := ep.Write(e.addr(0, base+200), buf[:20]); err != nil {
		return err
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	// Flush 2: a read of 7 B, a FAA and a CAS on every MN.
	for mn := range nmn {
		if err := ep.Read(buf[:7], e.addr(mn, base+40)); err != nil {
			return err
		}
		if err := at.FAA64(e.addr(mn, base+8), 1, nil); err != nil {
			return err
		}
		if err := at.CAS64(e.addr(mn, base+16), 0, 1, &prev); err != nil {
			return err
		}
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	n := uint64(nmn)
	want := verbs.Counters{Reads: 3 + n, Writes: 1, CAS: n, FAA: n, BytesRead: 30 + 7*n, BytesWritten: 20,
		Doorbells: 1 + n, RoundTrips: 2}
	if got := ep.Counters(); got != want {
		return errors.Errorf("counters %+v, want %+v", got, want)
	}
	by := ep.CountersByMN()
	if len(by) != nmn {
		return errors.Errorf("CountersByMN has %d entries, want %d", len(by), nmn)
	}
	var sum verbs.Counters
	for mn, c := range by {
		w := verbs.Counters{Reads: 1, CAS: 1, FAA: 1, BytesRead: 7, Doorbells: 1, RoundTrips: 1}
		if mn == 0 {
			w = verbs.Counters{Reads: 4, Writes: 1, CAS: 1, FAA: 1, BytesRead: 37, BytesWritten: 20, Doorbells: 2, RoundTrips: 2}
		}
		if c != w {
			return errors.Errorf("MN %d counters %+v, want %+v", mn, c, w)
		}
		sum.Add(c)
	}
	sum.RoundTrips = want.RoundTrips
	if sum != want {
		return errors.Errorf("per-MN counters add up to %+v, want %+v", sum, want)
	}
	// A rejected operation counts nothing.
	_ = ep.Read(buf[:9], e.addr(0, PoolBytes-8))
	if err := ep.Flush(); err != nil {
		return err
	}
	if got := ep.Counters(); got != want {
		return errors.Errorf("a rejected read changed the counters to %+v", got)
	}
	return e.barrier()
}

// checkMerger: adjacent and overlapping reads merge into fewer READs and the
// data lands where each caller asked.
func checkMerger(e *Env) error {
	if e.isCN() && e.W.Index == 0 {
		ep, _, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		data := pattern(9, 1024)
		if err := ep.Write(e.addr(0, 0), data); err != nil {
			return err
		}
		if err := ep.Flush(); err != nil {
			return err
		}
		m, err := verbs.NewReadMerger(ep, e.Net, 8, 0)
		if err != nil {
			return err
		}
		type q struct{ off, n int }
		// Queued out of order: [0,32) [32,64) [60,100) [104,120) gap 4 → one
		// read; [500,510) alone; [900,1024) alone.
		qs := []q{{60, 40}, {0, 32}, {500, 10}, {32, 32}, {900, 124}, {104, 16}}
		bufs := make([][]byte, len(qs))
		for i, r := range qs {
			bufs[i] = make([]byte, r.n)
			if err := m.Read(bufs[i], e.addr(0, uint64(r.off))); err != nil {
				return err
			}
		}
		if err := m.Read(make([]byte, 2), e.addr(0, PoolBytes-1)); err == nil {
			return errors.New("merger accepted a read past the pool")
		}
		before := ep.Counters()
		if err := m.Flush(); err != nil {
			return err
		}
		for i, r := range qs {
			if !bytes.Equal(bufs[i], data[r.off:r.off+r.n]) {
				return errors.Errorf("merged read %d (%+v) got wrong data", i, r)
			}
		}
		d := ep.Counters().Sub(before)
		if d.Reads != 3 || m.Saved() != 3 || d.RoundTrips != 1 {
			return errors.Errorf("merger posted %d reads (saved %d) in %d round trips; want 3, 3, 1", d.Reads, m.Saved(), d.RoundTrips)
		}
		// The same reads as views: every one is in the merger's buffer,
		// with the same READs.
		hs := make([]int, len(qs))
		for i, r := range qs {
			if hs[i], err = m.ReadView(e.addr(0, uint64(r.off)), r.n); err != nil {
				return err
			}
		}
		before = ep.Counters()
		if err := m.Flush(); err != nil {
			return err
		}
		for i, r := range qs {
			if !bytes.Equal(m.View(hs[i]), data[r.off:r.off+r.n]) {
				return errors.Errorf("view %d (%+v) got wrong data", i, r)
			}
		}
		if d := ep.Counters().Sub(before); d.Reads != 3 || d.RoundTrips != 1 {
			return errors.Errorf("views posted %d reads in %d round trips; want 3, 1", d.Reads, d.RoundTrips)
		}
	}
	return e.barrier()
}

// checkBuffers: on an endpoint with registered buffers
// (verbs.BufferAllocator), a WRITE from one and a READ into one, at
// unaligned offsets, move the bytes without the staging path; FreeBuffer
// refuses a buffer it already freed.
func checkBuffers(e *Env) error {
	if e.isCN() && e.W.Index == 0 {
		ep, _, err := e.endpoint()
		if err != nil {
			return err
		}
		defer ep.Close()
		if ba, ok := ep.(verbs.BufferAllocator); ok {
			if err := roundTripBuffer(e, ep, ba); err != nil {
				return err
			}
		}
	}
	return e.barrier()
}

func roundTripBuffer(e *Env, ep verbs.Endpoint, ba verbs.BufferAllocator) error {
	b, err := ba.AllocBuffer(8192)
	if err != nil {
		return err
	}
	data := pattern(11, 3000)
	copy(b[5:], data)
	if err := ep.Write(e.addr(0, 64), b[5:3005]); err != nil {
		return err
	}
	if err := ep.Flush(); err != nil {
		return err
	}
	plain := make([]byte, len(data))
	if err := verbs.ReadBulk(ep, plain, e.addr(0, 64)); err != nil {
		return err
	}
	if !bytes.Equal(plain, data) {
		return errors.New("a WRITE from a registered buffer did not write its bytes")
	}
	clear(b)
	if err := verbs.ReadBulk(ep, b[101:3101], e.addr(0, 64)); err != nil {
		return err
	}
	if !bytes.Equal(b[101:3101], data) || b[100] != 0 || b[3101] != 0 {
		return errors.New("a READ into a registered buffer got other bytes, or wrote outside its range")
	}
	if err := ba.FreeBuffer(b); err != nil {
		return err
	}
	if err := ba.FreeBuffer(b); err == nil {
		return errors.New("FreeBuffer freed a buffer twice")
	}
	return nil
}

// checkParallel: several endpoints per CN used from parallel goroutines.
func checkParallel(e *Env) error {
	const workers, rounds = 3, 10
	nmn := e.Net.NumMN()
	if e.isCN() {
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = func() error {
					ep, at, err := e.endpoint()
					if err != nil {
						return err
					}
					defer ep.Close()
					off := cnBase(e.W.Index) + uint64(w)*256
					for i := range rounds {
						for mn := range nmn {
							if err := at.FAA64(e.addr(mn, 32), 1, nil); err != nil {
								return err
							}
							if err := ep.Write(e.addr(mn, off), pattern(i+w, 64)); err != nil {
								return err
							}
						}
						if err := ep.Flush(); err != nil {
							return err
						}
						got := make([]byte, 64)
						if err := ep.Read(got, e.addr(i%nmn, off)); err != nil {
							return err
						}
						if err := ep.Flush(); err != nil {
							return err
						}
						if !bytes.Equal(got, pattern(i+w, 64)) {
							return errors.Errorf("worker %d round %d: read back wrong data", w, i)
						}
					}
					return nil
				}()
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	if err := e.barrier(); err != nil {
		return err
	}
	if !e.isCN() {
		want := uint64(e.W.Roles.CN * workers * rounds)
		if got := le64(e.Net.Pool()[32:]); got != want {
			return errors.Errorf("MN %d: parallel FAA sum %d, want %d", e.W.Index, got, want)
		}
	}
	return e.barrier()
}
