package pool

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

const (
	twoMN    = 2
	poolSize = 4 << 20
)

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%+v", err)
	}
}

func putWord(p []byte, off int, v uint64) { binary.LittleEndian.PutUint64(p[off:], v) }

func TestConnectRefusals(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(mn int, p []byte)
		change func(f *File)
		want   string
	}{
		{name: "ok"},
		{name: "wrong token", change: func(f *File) { f.Token = 99 }, want: "pool file test.pool belongs to another pool (token 0x5eed on MN 0; the file says 0x63)"},
		{name: "no magic", setup: func(mn int, p []byte) {
			if mn == 1 {
				putWord(p, HdrMagic, 0)
			}
		}, want: "pool file test.pool: MN 1 does not hold a DMG pool (stale file?)"},
		{name: "stopping", setup: func(mn int, p []byte) { putWord(p, HdrStop, 1) }, want: "the pool is stopping"},
		{name: "index", setup: func(mn int, p []byte) { putWord(p, HdrMN, uint64(1-mn)) }, want: "MN 0's header says it is MN 1"},
		{name: "count", setup: func(mn int, p []byte) { putWord(p, HdrNumMN, 3) }, want: "lists 2 MNs but MN 0's header says the pool has 3"},
		{name: "more MNs in file", change: func(f *File) { f.MNs = append(f.MNs, f.MNs[0]) }, want: "lists 3 MNs but MN 2 cannot be addressed"},
		{name: "invalid file", change: func(f *File) { f.Provider = "" }, want: "provider is empty"},
		{name: "size ×256", change: func(f *File) { f.MNs[1].Size *= 256 },
			want: fmt.Sprintf("says MN 1's pool is %d bytes but the MN registered %d", uint64(poolSize)*256, uint64(poolSize))},
		{name: "size smaller", change: func(f *File) { f.MNs[0].Size -= 4096 }, want: "but the MN registered"},
		{name: "served without a size word", setup: func(mn int, p []byte) { putWord(p, HdrSize, 0) }, want: "but the MN registered 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(twoMN, poolSize, tt.setup, func(e *env) error {
				if tt.change != nil {
					tt.change(e.file)
				}
				before := e.ep.Counters()
				c, err := e.client()
				after := e.ep.Counters()
				if after.Writes != before.Writes || after.CAS != before.CAS {
					return errors.New("Connect wrote to the pool")
				}
				if tt.want == "" {
					if err != nil {
						return err
					}
					if c.ID() == 0 || c.NumMN() != twoMN {
						return errors.Errorf("client id %#x, %d MNs", c.ID(), c.NumMN())
					}
					return nil
				}
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					return errors.Errorf("Connect error = %v; want it to contain %q", err, tt.want)
				}
				return nil
			}, nil)
			check(t, err)
		})
	}
}

func TestStopAndBeats(t *testing.T) {
	err := run(twoMN, poolSize, func(mn int, p []byte) { SetBeat(p, uint64(1000+mn)) }, func(e *env) error {
		c, err := e.client()
		if err != nil {
			return err
		}
		beats, err := c.Beats()
		if err != nil {
			return err
		}
		if fmt.Sprint(beats) != "[1000 1001]" {
			return errors.Errorf("Beats = %v", beats)
		}
		if err := c.Stop(); err != nil {
			return err
		}
		if _, err := e.client(); err == nil || !strings.Contains(err.Error(), "stopping") {
			return errors.Errorf("Connect after Stop = %v; want the pool stopping", err)
		}
		return nil
	}, func(mn int, p []byte) error {
		if !StopRequested(p) {
			return errors.Errorf("MN %d: stop not requested", mn)
		}
		return nil
	})
	check(t, err)
}

// withClient runs fn with one connected client on a fresh two-MN pool.
func withClient(t *testing.T, fn func(e *env, c *Client) error) {
	t.Helper()
	check(t, run(twoMN, poolSize, nil, func(e *env) error {
		c, err := e.client()
		if err != nil {
			return err
		}
		return fn(e, c)
	}, nil))
}

func nowMS() uint64 { return uint64(time.Now().UnixMilli()) }

func TestAlloc(t *testing.T) {
	const D = DataStart
	stale := func() uint64 { return nowMS() - uint64(2*StaleAfter/time.Millisecond) }
	ready := func(name string, ext ...Extent) Slot {
		return Slot{State: Ready, Name: name, Graph: -1, Ext: ext}
	}
	tests := []struct {
		name  string
		slots []Slot
		sizes []uint64
		want  []Extent
		err   string
	}{
		{name: "empty pool", sizes: []uint64{100, 5000},
			want: []Extent{{0, D, Align}, {1, D, 2 * Align}}},
		{name: "size 0", sizes: []uint64{0, Align},
			want: []Extent{{0, 0, 0}, {1, D, Align}}},
		{name: "after a graph", slots: []Slot{ready("a", Extent{0, D, 3 * Align}, Extent{1, D, Align})}, sizes: []uint64{1, 1},
			want: []Extent{{0, D + 3*Align, Align}, {1, D + Align, Align}}},
		{name: "first fit in a hole", slots: []Slot{
			ready("a", Extent{0, D, 2 * Align}),
			ready("b", Extent{0, D + 4*Align, Align}),
		}, sizes: []uint64{2 * Align, 3 * Align},
			want: []Extent{{0, D + 2*Align, 2 * Align}, {1, D, 3 * Align}}},
		{name: "hole too small", slots: []Slot{
			ready("a", Extent{0, D, 2 * Align}),
			ready("b", Extent{0, D + 4*Align, Align}),
		}, sizes: []uint64{3 * Align, 0},
			want: []Extent{{0, D + 5*Align, 3 * Align}, {1, 0, 0}}},
		{name: "aux avoided", slots: []Slot{{State: Ready, Name: "a", Aux: Extent{1, D, Align}}}, sizes: []uint64{1, 1},
			want: []Extent{{0, D, Align}, {1, D + Align, Align}}},
		{name: "unaligned neighbour", slots: []Slot{ready("a", Extent{0, D, 100})}, sizes: []uint64{1, 0},
			want: []Extent{{0, D + Align, Align}, {1, 0, 0}}},
		{name: "no room", sizes: []uint64{1, poolSize},
			err: "MN 1 has no room for 4 MiB (4194304 bytes asked; its largest free gap is 3 MiB of a 4 MiB pool); drop a graph (--drop) or serve with a larger --mn-mem"},
		{name: "no room around a graph", slots: []Slot{ready("a", Extent{0, D + Align, 2 << 20})}, sizes: []uint64{2 << 20, 0},
			err: "MN 0 has no room for 2 MiB (2097152 bytes asked; its largest free gap is 1020 KiB"},
		{name: "dead loading slot reused", slots: []Slot{{State: Loading, Name: "a", Lease: 7, Beat: stale(), Ext: []Extent{{0, D, poolSize - D}}}},
			sizes: []uint64{poolSize - D, 0}, want: []Extent{{0, D, poolSize - D}, {1, 0, 0}}},
		{name: "dead job slot reused", slots: []Slot{{State: Job, Lease: 7, Beat: stale(), Aux: Extent{0, D, Align}}},
			sizes: []uint64{1, 0}, want: []Extent{{0, D, Align}, {1, 0, 0}}},
		{name: "live loading slot kept", slots: []Slot{{State: Loading, Name: "a", Lease: 7, Beat: nowMS(), Ext: []Extent{{0, D, Align}}}},
			sizes: []uint64{1, 0}, want: []Extent{{0, D + Align, Align}, {1, 0, 0}}},
		{name: "ready slot with stale lease kept", slots: []Slot{{State: Ready, Name: "a", Lease: 7, Beat: stale(), Ext: []Extent{{0, D, Align}}}},
			sizes: []uint64{1, 0}, want: []Extent{{0, D + Align, Align}, {1, 0, 0}}},
		{name: "free slot ignored", slots: []Slot{{State: Free, Ext: []Extent{{0, D, Align}}}},
			sizes: []uint64{1, 0}, want: []Extent{{0, D, Align}, {1, 0, 0}}},
		{name: "wrong count", sizes: []uint64{1}, err: "Alloc of 1 sizes; the pool has 2 MNs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withClient(t, func(e *env, c *Client) error {
				if err := c.Lock(time.Second); err != nil {
					return err
				}
				for i, s := range tt.slots {
					if err := c.Put(i, s); err != nil {
						return err
					}
				}
				got, err := c.Alloc(tt.sizes)
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) {
						return errors.Errorf("Alloc error = %v; want %q", err, tt.err)
					}
					return c.Unlock()
				}
				if err != nil {
					return err
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					return errors.Errorf("Alloc = %v; want %v", got, tt.want)
				}
				return c.Unlock()
			})
		})
	}
}

func TestAllocPendingAndAux(t *testing.T) {
	withClient(t, func(e *env, c *Client) error {
		const D = DataStart
		if err := c.Lock(time.Second); err != nil {
			return err
		}
		a, err := c.Alloc([]uint64{Align, 0})
		if err != nil {
			return err
		}
		b, err := c.Alloc([]uint64{Align, 0})
		if err != nil {
			return err
		}
		if a[0].Off != D || b[0].Off != D+Align {
			return errors.Errorf("two allocs before Put: %v %v; want distinct extents", a, b)
		}
		// MN 1 is empty: the largest gap is there.
		x, err := c.AllocAux(100)
		if err != nil {
			return err
		}
		if x != (Extent{1, D, Align}) {
			return errors.Errorf("AllocAux = %v; want MN 1 at DataStart", x)
		}
		y, err := c.AllocAux(100)
		if err != nil || y != (Extent{1, D + Align, Align}) {
			return errors.Errorf("second AllocAux = %v, %v; want it after the first", y, err)
		}
		// Recorded in a slot, then no longer pending: still avoided.
		if err := c.Put(0, Slot{State: Loading, Name: "g", Graph: -1, Lease: c.ID(), Beat: nowMS(), Aux: x, Ext: a}); err != nil {
			return err
		}
		if len(c.pending) != 2 {
			return errors.Errorf("pending after Put = %v; want b and y", c.pending)
		}
		d, err := c.Alloc([]uint64{Align, Align})
		if err != nil {
			return err
		}
		if d[0].Off != D+2*Align || d[1].Off != D+2*Align {
			return errors.Errorf("third alloc %v", d)
		}
		if _, err := c.AllocAux(poolSize); err == nil || !strings.Contains(err.Error(), "no MN has room for 4 MiB") {
			return errors.Errorf("AllocAux(too big) = %v", err)
		}
		if err := c.Unlock(); err != nil {
			return err
		}
		if len(c.pending) != 0 {
			return errors.Errorf("pending after Unlock = %v", c.pending)
		}
		return nil
	})
}

func TestFindFreeSlotDropReclaim(t *testing.T) {
	withClient(t, func(e *env, c *Client) error {
		if err := c.Lock(time.Second); err != nil {
			return err
		}
		stale := nowMS() - uint64(2*StaleAfter/time.Millisecond)
		slots := map[int]Slot{
			0: {State: Job, Name: "g", Graph: 2, Lease: 5, Beat: nowMS()},
			1: {State: Loading, Name: "g", Graph: -1, Lease: 5, Beat: nowMS()},
			2: {State: Ready, Name: "g", Graph: -1, Ext: []Extent{{0, DataStart, Align}}},
			3: {State: Loading, Name: "dead", Graph: -1, Lease: 6, Beat: stale, Ext: []Extent{{0, DataStart + Align, Align}}},
			4: {State: Loading, Name: "h", Graph: -1, Lease: 5, Beat: nowMS()},
		}
		for i, s := range slots {
			if err := c.Put(i, s); err != nil {
				return err
			}
		}
		type find struct {
			name  string
			i     int
			found bool
		}
		for _, f := range []find{{"g", 2, true}, {"h", 4, true}, {"dead", -1, false}, {"none", -1, false}} {
			i, s, ok, err := c.Find(f.name)
			if err != nil {
				return err
			}
			if i != f.i || ok != f.found || (ok && s.Name != f.name) {
				return errors.Errorf("Find(%q) = %d, %v; want %d, %v", f.name, i, ok, f.i, f.found)
			}
		}
		if i, err := c.FreeSlot(); err != nil || i != 5 {
			return errors.Errorf("FreeSlot = %d, %v; want 5", i, err)
		}
		// Drop the Ready graph, then its region is allocated again.
		if err := c.Drop(2); err != nil {
			return err
		}
		if _, _, ok, _ := c.Find("g"); !ok {
			return errors.New("Find(g) after Drop: the Loading slot 1 should remain")
		}
		ext, err := c.Alloc([]uint64{Align, 0})
		if err != nil {
			return err
		}
		if ext[0].Off != DataStart {
			return errors.Errorf("Alloc after Drop = %v; want the dropped region at DataStart", ext)
		}
		n, err := c.Reclaim()
		if err != nil || n != 1 {
			return errors.Errorf("Reclaim = %d, %v; want 1", n, err)
		}
		all, err := c.Slots()
		if err != nil {
			return err
		}
		if all[3].State != Free || all[2].State != Free || all[1].State != Loading {
			return errors.Errorf("states after Drop and Reclaim: %v %v %v", all[1].State, all[2].State, all[3].State)
		}
		// Every slot in use: no free slot.
		for i := range MaxSlots {
			s := Slot{State: Ready, Name: fmt.Sprint(i), Graph: -1}
			switch {
			case i >= 60: // 4 live runs
				s = Slot{State: Job, Lease: c.ID(), Beat: nowMS(), Name: "0", Graph: 0}
			case i >= 58: // 2 unfinished runs' checkpoints, never dead
				s = Slot{State: Checkpoint, Lease: 0xdead, Beat: 1, Name: "0", Kernel: "pr", Graph: -1}
			}
			if err := c.Put(i, s); err != nil {
				return err
			}
		}
		if _, err := c.FreeSlot(); err == nil || !strings.Contains(err.Error(), "all 64 catalogue slots are in use (58 by graphs and their cuts, 4 by runs, 2 by runs' checkpoints)") {
			return errors.Errorf("FreeSlot on a full catalogue = %v", err)
		}
		if err := c.Put(MaxSlots, Slot{}); err == nil {
			return errors.New("Put(64) succeeded")
		}
		return c.Unlock()
	})
}

func TestLock(t *testing.T) {
	withClient(t, func(e *env, a *Client) error {
		b, err := e.connect()
		if err != nil {
			return err
		}
		b.sleep = func(time.Duration) {}
		if err := a.Lock(0); err != nil {
			return err
		}
		if err := a.Lock(0); err != nil {
			return errors.Wrap(err, "relocking by the holder")
		}
		start := time.Now()
		err = b.Lock(20 * time.Millisecond)
		want := fmt.Sprintf("locked by job %#x (taken 0.0s ago)", a.ID())
		if err == nil || !strings.Contains(err.Error(), want) {
			return errors.Errorf("contended Lock = %v; want %q", err, want)
		}
		if time.Since(start) < 20*time.Millisecond {
			return errors.New("contended Lock gave up before its timeout")
		}
		// b's clock moves past StaleAfter: a's lock is stale and broken.
		b.now = func() time.Time { return time.Now().Add(StaleAfter + time.Second) }
		if err := b.Lock(0); err != nil {
			return errors.Wrap(err, "breaking a stale lock")
		}
		if err := a.Unlock(); err == nil || !strings.Contains(err.Error(), "was the lock broken as stale") {
			return errors.Errorf("Unlock of a broken lock = %v", err)
		}
		// From a's clock, b's lock is 11 s in the future: fresh.
		if err := a.Lock(0); err == nil {
			return errors.New("a took b's fresh lock")
		}
		if err := b.Unlock(); err != nil {
			return err
		}
		if err := a.Lock(0); err != nil {
			return errors.Wrap(err, "lock after unlock")
		}
		return a.Unlock()
	})
}

// timingOut is an endpoint whose flushes that hold a CAS time out while
// casFails lasts, as a lost or unanswered operation does: applied says
// whether the batch reaches the pool first (an answer lost) or not (a
// command lost). Once timed out, it is unusable.
type timingOut struct {
	verbs.Endpoint
	at       verbs.Atomics
	casFails *int
	applied  bool
	cas      bool
	dead     bool
}

func (e *timingOut) CAS64(a verbs.Addr, old, new uint64, prev *uint64) error {
	e.cas = true
	return e.at.CAS64(a, old, new, prev)
}

func (e *timingOut) FAA64(a verbs.Addr, d uint64, prev *uint64) error { return e.at.FAA64(a, d, prev) }

func (e *timingOut) Flush() error {
	if e.dead {
		return errors.New("endpoint unusable after a timeout")
	}
	if !e.cas || *e.casFails == 0 {
		e.cas = false
		return e.Endpoint.Flush()
	}
	*e.casFails--
	e.dead = true
	if e.applied {
		if err := e.Endpoint.Flush(); err != nil {
			return err
		}
	}
	return errors.WithStack(&verbs.TimeoutError{Msg: "verbs: no completion from MN 0 within 10s"})
}

func TestTakeRenews(t *testing.T) {
	for _, c := range []struct {
		name     string
		casFails int  // CAS flushes that time out, on any endpoint
		applied  bool // the timed-out CAS reached the pool
		renew    bool // the client can renew its endpoint
		renewals int  // new endpoints Lock takes
		want     string
	}{
		{"a CAS lost, renewed", 1, false, true, 1, ""},
		{"a CAS applied, its answer lost: the lock is found ours", 1, true, true, 1, ""},
		{"two lost, two renewals", 2, false, true, 2, ""},
		{"three lost: the third timeout is the error", 3, false, true, 2, "no completion from MN 0"},
		{"no renewal without SetRenew", 1, false, false, 0, "no completion from MN 0"},
		{"lease: a CAS lost, renewed", 1, false, true, 1, ""},
		{"lease: a CAS applied, its answer lost", 1, true, true, 1, ""},
	} {
		lease := strings.HasPrefix(c.name, "lease:")
		t.Run(c.name, func(t *testing.T) {
			withClient(t, func(e *env, _ *Client) error {
				fails := c.casFails
				wrap := func(ep verbs.Endpoint) *timingOut {
					return &timingOut{Endpoint: ep, at: ep.(verbs.Atomics), casFails: &fails, applied: c.applied}
				}
				ep, err := e.net.NewEndpoint()
				if err != nil {
					return err
				}
				a, err := Connect(wrap(ep), e.file, "test.pool")
				if err != nil {
					return err
				}
				renewals := 0
				if c.renew {
					a.SetRenew(func(cause error) (verbs.Endpoint, error) {
						if !verbs.IsTimeout(cause) {
							return nil, errors.Errorf("renewed for %v; want a timeout", cause)
						}
						renewals++
						ep, err := e.net.NewEndpoint()
						if err != nil {
							return nil, err
						}
						return wrap(ep), nil
					})
				}
				b, err := e.connect()
				if err != nil {
					return err
				}
				take := func(cl *Client) error { return cl.Lock(time.Second) }
				if lease {
					if err := b.Put(3, Slot{State: Ready, Name: "g", Graph: -1}); err != nil {
						return err
					}
					take = func(cl *Client) error { return cl.TakeLease(3, time.Second) }
				}
				err = take(a)
				switch {
				case renewals != c.renewals:
					return errors.Errorf("%d renewals; want %d (Lock: %v)", renewals, c.renewals, err)
				case c.want == "" && err != nil:
					return errors.Wrap(err, "Lock")
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					return errors.Errorf("Lock = %v; want an error saying %q", err, c.want)
				case c.want != "":
					return nil
				}
				// The claim is the client's: a second client finds it so.
				b.sleep = func(time.Duration) {}
				if lease {
					var le *LeaseError
					if err := b.TakeLease(3, 0); !errors.As(err, &le) || le.Holder != a.ID() {
						return errors.Errorf("a second client's TakeLease = %v; want the lease held by %#x", err, a.ID())
					}
					return nil
				}
				if err := b.Lock(0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("locked by job %#x", a.ID())) {
					return errors.Errorf("a second client's Lock = %v; want the lock held by %#x", err, a.ID())
				}
				return a.Unlock()
			})
		})
	}
}

// withGraph runs fn with two clients of a fresh pool whose slot 3 is a
// Ready graph "g"; b does not sleep between retries.
func withGraph(t *testing.T, fn func(a, b *Client) error) {
	t.Helper()
	withClient(t, func(e *env, a *Client) error {
		b, err := e.connect()
		if err != nil {
			return err
		}
		b.sleep = func(time.Duration) {}
		if err := a.Put(3, Slot{State: Ready, Name: "g", Graph: -1}); err != nil {
			return err
		}
		return fn(a, b)
	})
}

func TestLease(t *testing.T) {
	withGraph(t, func(a, b *Client) error {
		if err := a.TakeLease(3, 0); err != nil {
			return err
		}
		if err := a.TakeLease(3, 0); err != nil {
			return errors.Wrap(err, "retaking our own lease")
		}
		if err := a.HeartBeat(3); err != nil {
			return err
		}

		// Held: refused at once, and after waiting.
		for _, wait := range []time.Duration{0, 20 * time.Millisecond} {
			err := b.TakeLease(3, wait)
			var le *LeaseError
			if !errors.As(err, &le) || le.Holder != a.ID() || le.Name != "g" || le.Age > time.Second {
				return errors.Errorf("TakeLease(wait %v) of a held lease = %v; want a *LeaseError naming %#x", wait, err, a.ID())
			}
			want := fmt.Sprintf(`graph "g" is held by job %#x (last heartbeat 0.`, a.ID())
			if !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "; wait with --wait or retry later") {
				return errors.Errorf("LeaseError message %q", err)
			}
		}
		if err := b.ReleaseLease(3); err == nil {
			return errors.New("b released a's lease")
		}

		// Released: b takes it.
		if err := a.ReleaseLease(3); err != nil {
			return err
		}
		if err := b.TakeLease(3, 0); err != nil {
			return errors.Wrap(err, "taking a released lease")
		}
		if err := a.HeartBeat(3); err == nil || !strings.Contains(err.Error(), "not by this job") {
			return errors.Errorf("HeartBeat of a lease not held = %v", err)
		}

		// Expired: b's heartbeat is older than StaleAfter by a's clock.
		a.now = func() time.Time { return time.Now().Add(StaleAfter + time.Second) }
		if err := a.TakeLease(3, 0); err != nil {
			return errors.Wrap(err, "taking an expired lease")
		}
		s, err := a.Slots()
		if err != nil {
			return err
		}
		if s[3].Lease != a.ID() || s[3].Beat < nowMS()+uint64(StaleAfter/time.Millisecond) {
			return errors.Errorf("slot after taking an expired lease: lease %#x beat %d", s[3].Lease, s[3].Beat)
		}
		if err := b.ReleaseLease(3); err == nil {
			return errors.New("b released a lease it lost")
		}
		if err := a.ReleaseLease(3); err != nil {
			return err
		}
		if err := a.TakeLease(MaxSlots, 0); err == nil {
			return errors.New("TakeLease(64) succeeded")
		}
		return nil
	})
}

// TestLeaseWait: a lease released while another job waits for it.
func TestLeaseWait(t *testing.T) {
	withClient(t, func(e *env, a *Client) error {
		b, err := e.connect()
		if err != nil {
			return err
		}
		if err := a.TakeLease(0, 0); err != nil {
			return err
		}
		released := make(chan error, 1)
		go func() {
			time.Sleep(30 * time.Millisecond)
			released <- a.ReleaseLease(0)
		}()
		start := time.Now()
		err = b.TakeLease(0, 5*time.Second)
		if rerr := <-released; rerr != nil {
			return rerr
		}
		if err != nil {
			return errors.Wrap(err, "waiting for a lease")
		}
		if d := time.Since(start); d < 20*time.Millisecond || d > 4*time.Second {
			return errors.Errorf("waited %v for a lease released after 30ms", d)
		}
		return nil
	})
}

func TestKeepAlive(t *testing.T) {
	withClient(t, func(e *env, c *Client) error {
		if err := c.TakeLease(1, 0); err != nil {
			return err
		}
		s, err := c.Slots()
		if err != nil {
			return err
		}
		first := s[1].Beat
		ep, err := e.net.NewEndpoint()
		if err != nil {
			return err
		}
		stop := KeepAlive(ep, 1, c.ID(), 5*time.Millisecond)
		time.Sleep(40 * time.Millisecond)
		if err := stop(); err != nil {
			return err
		}
		if err := stop(); err != nil {
			return errors.Wrap(err, "second stop")
		}
		if s, err = c.Slots(); err != nil {
			return err
		}
		if s[1].Beat <= first {
			return errors.Errorf("beat %d did not move from %d", s[1].Beat, first)
		}
		// Not our lease: the keep-alive ends with an error.
		stop = KeepAlive(ep, 1, c.ID()+1, time.Millisecond)
		time.Sleep(20 * time.Millisecond)
		if err := stop(); err == nil || !strings.Contains(err.Error(), "not by this job") {
			return errors.Errorf("KeepAlive of another's lease: %v", err)
		}
		if err := KeepAlive(ep, -1, 1, 0)(); err == nil {
			return errors.New("KeepAlive(-1) succeeded")
		}
		// Release gives the lease back on the keeper's endpoint, once.
		k := Keep(ep, 1, c.ID(), time.Millisecond)
		time.Sleep(5 * time.Millisecond)
		if err := k.Release(); err != nil {
			return errors.Wrap(err, "Release")
		}
		if s, err = c.Slots(); err != nil {
			return err
		}
		if s[1].Lease != 0 {
			return errors.Errorf("lease %#x after Release; want 0", s[1].Lease)
		}
		if err := k.Release(); err == nil {
			return errors.New("a second Release succeeded")
		}
		if err := k.Stop(); err != nil {
			return errors.Wrap(err, "Stop after Release")
		}
		return nil
	})
}

// TestHold: runs hold a Ready graph together, each in a Job slot of its
// own; a writer's live lease keeps new readers out (waited for, then a
// *LeaseError); Readers names the live runs, not a run that gave its
// lease up or whose heartbeat stopped.
func TestHold(t *testing.T) {
	withGraph(t, func(a, b *Client) error {
		if err := a.Put(4, Slot{State: Loading, Lease: a.ID(), Beat: nowMS(), Name: "h", Graph: -1}); err != nil {
			return err
		}
		ja, held, err := a.Hold(3, time.Second, 0)
		if err != nil {
			return errors.Wrap(err, "a's hold")
		}
		if held.Name != "g" || held.State != Ready {
			return errors.Errorf("Hold returned the graph's slot %+v; want g, ready", held)
		}
		jb, _, err := b.Hold(3, time.Second, 0)
		if err != nil {
			return errors.Wrap(err, "b's hold of a graph a reads")
		}
		s, err := a.Slots()
		if err != nil {
			return err
		}
		for _, c := range []struct {
			j  int
			id uint64
		}{{ja, a.ID()}, {jb, b.ID()}} {
			if got := s[c.j]; got.State != Job || got.Lease != c.id || got.Graph != 3 || got.Name != "g" {
				return errors.Errorf("Job slot %d: %+v; want a Job slot of %#x naming graph 3", c.j, got, c.id)
			}
		}
		if ja == jb {
			return errors.Errorf("two runs share Job slot %d", ja)
		}
		r, err := a.Readers([]int{3})
		if err != nil {
			return err
		}
		if len(r) != 2 {
			return errors.Errorf("Readers(3) = %+v; want the two runs", r)
		}
		if _, _, err := a.Hold(4, time.Second, 0); err == nil {
			return errors.New("a held a graph still loading")
		}

		// A writer's lease keeps new readers out, not the ones in.
		if err := a.TakeLease(3, 0); err != nil {
			return err
		}
		for _, wait := range []time.Duration{0, 20 * time.Millisecond} {
			_, _, err := b.Hold(3, time.Second, wait)
			var le *LeaseError
			if !errors.As(err, &le) || le.Holder != a.ID() {
				return errors.Errorf("Hold(wait %v) of a graph a writer holds = %v; want a *LeaseError naming %#x", wait, err, a.ID())
			}
		}
		if err := a.ReleaseLease(3); err != nil {
			return err
		}

		// Gone: b gives its lease up (a signal), a's heartbeat stops.
		if prev, err := b.cas("test", SlotAddr(jb)+OffLease, b.ID(), 0); err != nil || prev != b.ID() {
			return errors.Errorf("giving b's lease up: %#x, %v", prev, err)
		}
		if r, err = a.Readers([]int{3}); err != nil || len(r) != 1 || r[0].Job != a.ID() {
			return errors.Errorf("Readers after b gave its lease up = %+v, %v; want a alone", r, err)
		}
		msg := (&InUseError{Name: "g", Runs: r}).Error()
		if want := fmt.Sprintf(`graph "g" is read by 1 run(s): job %#x (last heartbeat 0.`, a.ID()); !strings.HasPrefix(msg, want) {
			return errors.Errorf("InUseError %q; want it to start %q", msg, want)
		}
		a.now = func() time.Time { return time.Now().Add(StaleAfter + time.Second) }
		if r, err = a.Readers([]int{3}); err != nil || len(r) != 0 {
			return errors.Errorf("Readers once a's heartbeat is stale = %+v, %v; want none", r, err)
		}
		if err := a.Lock(time.Second); err != nil {
			return err
		}
		n, err := a.Reclaim()
		if err != nil || n != 3 { // both Job slots and h's expired load
			return errors.Errorf("Reclaim = %d, %v; want the two Job slots and h's load", n, err)
		}
		return a.Unlock()
	})
}

// FindCut tells a run that would cut a graph for a count whether a view
// of that count is ready (which), being cut by a live load, or neither.
func TestFindCut(t *testing.T) {
	withGraph(t, func(a, b *Client) error {
		stale := uint64(time.Now().Add(-2 * StaleAfter).UnixMilli())
		for _, c := range []struct {
			name    string
			slots   map[int]Slot
			cns     int
			ready   int
			cutting bool
		}{
			{"none", nil, 2, -1, false},
			{"another count", map[int]Slot{5: {State: Ready, Name: "g", Graph: -1, CNs: 4}}, 2, -1, false},
			{"another graph", map[int]Slot{5: {State: Ready, Name: "h", Graph: -1, CNs: 2}}, 2, -1, false},
			{"ready", map[int]Slot{5: {State: Ready, Name: "g", Graph: -1, CNs: 2}}, 2, 5, false},
			{"being cut", map[int]Slot{6: {State: Loading, Lease: b.ID(), Beat: nowMS(), Name: "g", Graph: -1, CNs: 2}}, 2, -1, true},
			{"its cutter dead", map[int]Slot{6: {State: Loading, Lease: b.ID(), Beat: stale, Name: "g", Graph: -1, CNs: 2}}, 2, -1, false},
			{"a run's slot", map[int]Slot{7: {State: Job, Lease: b.ID(), Beat: nowMS(), Name: "g", Graph: 3, CNs: 2}}, 2, -1, false},
		} {
			for i, s := range c.slots {
				if err := a.Put(i, s); err != nil {
					return err
				}
			}
			ready, rs, cutting, err := a.FindCut("g", c.cns)
			if err != nil {
				return err
			}
			if ready != c.ready || cutting != c.cutting || (ready >= 0 && rs.CNs != c.cns) {
				return errors.Errorf("%s: FindCut = %d (%+v), cutting %v; want %d, cutting %v", c.name, ready, rs, cutting, c.ready, c.cutting)
			}
			for i := range c.slots {
				if err := a.Drop(i); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
