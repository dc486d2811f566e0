package pool

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// Client does catalogue operations on a served pool over one endpoint. It
// is used by one goroutine at a time, like its endpoint.
type Client struct {
	ep    verbs.Endpoint
	at    verbs.Atomics
	file  *File
	path  string
	id    uint64
	sizes []uint64 // pool bytes by MN

	pending []Extent // handed out by Alloc/AllocAux, not yet in a slot

	now   func() time.Time                          // wall clock for stamps and ages
	sleep func(d time.Duration)                     // backoff between retries
	renew func(cause error) (verbs.Endpoint, error) // SetRenew
}

// Reader is a live run that reads a graph: its Job slot's holder.
type Reader struct {
	Job uint64        // the holder's id
	Age time.Duration // since its last heartbeat
}

// InUseError is a graph that live runs read.
type InUseError struct {
	Name string
	Runs []Reader
}

func (e *InUseError) Error() string {
	var b strings.Builder
	for i, r := range e.Runs {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(e.Runs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "job %#x (last heartbeat %.1fs ago)", r.Job, r.Age.Seconds())
	}
	return fmt.Sprintf("graph %q is read by %d run(s): %s; retry once they end", e.Name, len(e.Runs), b.String())
}

// LeaseError is a lease held by a live job.
type LeaseError struct {
	Name   string        // the slot's graph name
	Holder uint64        // the holder's id
	Age    time.Duration // since the holder's last heartbeat
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("graph %q is held by job %#x (last heartbeat %.1fs ago); wait with --wait or retry later",
		e.Name, e.Holder, e.Age.Seconds())
}

// Connect checks that the MNs ep reaches hold the pool f (read from path,
// which names it in errors) and returns a client with a random holder id.
// It reads every MN's header in one batch and writes nothing. ep must
// implement verbs.Atomics.
func Connect(ep verbs.Endpoint, f *File, path string) (*Client, error) {
	if ep == nil {
		return nil, errors.New("pool: Connect needs an endpoint")
	}
	at, ok := ep.(verbs.Atomics)
	if !ok {
		return nil, errors.Errorf("pool file %s: the endpoint (%T) has no remote atomics; the catalogue needs CAS", path, ep)
	}
	if err := f.Validate(); err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, fe.at(path)
		}
		return nil, err
	}
	n := len(f.MNs)
	hdr := make([][hdrWords][8]byte, n)
	for m := range n {
		for w := range hdrWords {
			a, err := verbs.MakeAddr(m, uint64(w*8))
			if err == nil {
				err = ep.Read(hdr[m][w][:], a)
			}
			if err != nil {
				return nil, &FileError{Path: path, Msg: fmt.Sprintf("lists %d MNs but MN %d cannot be addressed on this network: %v", n, m, err)}
			}
		}
	}
	if err := ep.Flush(); err != nil {
		who := "its MNs"
		if n == 1 {
			who = "MN 0"
		}
		return nil, errors.Wrapf(err, "pool file %s: cannot reach %s (is `dmg serve` still running? a pool file outlives its pool if the serve job was killed)", path, who)
	}
	for m := range n {
		word := func(w int) uint64 { return binary.LittleEndian.Uint64(hdr[m][w][:]) }
		switch {
		case word(HdrMagic/8) != Magic:
			return nil, &FileError{Path: path, Msg: fmt.Sprintf("MN %d does not hold a DMG pool (stale file?)", m)}
		case word(HdrToken/8) != f.Token:
			return nil, &FileError{Path: path, Predicate: true, Msg: fmt.Sprintf("belongs to another pool (token %#x on MN %d; the file says %#x)", word(HdrToken/8), m, f.Token)}
		case word(HdrMN/8) != uint64(m):
			return nil, &FileError{Path: path, Msg: fmt.Sprintf("MN %d's header says it is MN %d; the file's MNs are out of order", m, word(HdrMN/8))}
		case word(HdrNumMN/8) != uint64(n):
			return nil, &FileError{Path: path, Msg: fmt.Sprintf("lists %d MNs but MN %d's header says the pool has %d", n, m, word(HdrNumMN/8))}
		case word(HdrSize/8) != f.MNs[m].Size:
			// The file is the client's word; the header is the MN's. A
			// size above the registered one would send accesses past
			// the pool, which over shm nothing at the MN stops.
			return nil, &FileError{Path: path, Msg: fmt.Sprintf("says MN %d's pool is %d bytes but the MN registered %d (an edited or foreign file?); use the file `dmg serve` wrote", m, f.MNs[m].Size, word(HdrSize/8))}
		case word(HdrStop/8) != 0:
			return nil, errors.Errorf("pool file %s: the pool is stopping (MN %d was asked to end); serve a new pool", path, m)
		}
	}
	id, err := NewToken()
	if err != nil {
		return nil, errors.Wrap(err, "pool: choosing a holder id")
	}
	c := &Client{ep: ep, at: at, file: f, path: path, id: id, sizes: make([]uint64, n),
		now: time.Now, sleep: time.Sleep}
	for m, mn := range f.MNs {
		c.sizes[m] = mn.Size
	}
	return c, nil
}

// ID is this client's holder id (nonzero), used for the catalogue lock and
// for leases.
func (c *Client) ID() uint64 { return c.id }

// NumMN is the number of MNs of the pool.
func (c *Client) NumMN() int { return len(c.sizes) }

// File is the pool file the client was connected with.
func (c *Client) File() *File { return c.file }

func (c *Client) flush(what string) error {
	if err := c.ep.Flush(); err != nil {
		return errors.Wrapf(err, "pool file %s: %s", c.path, what)
	}
	return nil
}

func hdrAddr(mn int, off uint64) verbs.Addr { return verbs.Addr(uint64(mn)<<verbs.OffsetBits | off) }

// Stop asks every MN's serve job to end (sets its stop word).
func (c *Client) Stop() error {
	prev := make([]uint64, len(c.sizes))
	for m := range c.sizes {
		if err := c.at.CAS64(hdrAddr(m, HdrStop), 0, 1, &prev[m]); err != nil {
			return errors.Wrapf(err, "pool: queueing the stop word of MN %d", m)
		}
	}
	return c.flush("setting the stop words")
}

// Beats returns every MN's beat word (its clock, Unix ms, rewritten every
// BeatEvery): an MN whose beat does not move is frozen.
func (c *Client) Beats() ([]uint64, error) {
	buf := make([][8]byte, len(c.sizes))
	for m := range c.sizes {
		if err := c.ep.Read(buf[m][:], hdrAddr(m, HdrBeat)); err != nil {
			return nil, errors.Wrapf(err, "pool: queueing the beat read of MN %d", m)
		}
	}
	if err := c.flush("reading the MNs' beats"); err != nil {
		return nil, err
	}
	out := make([]uint64, len(buf))
	for m := range buf {
		out[m] = binary.LittleEndian.Uint64(buf[m][:])
	}
	return out, nil
}

// readWords reads the 8-byte words at addrs in one batch.
func (c *Client) readWords(what string, addrs ...verbs.Addr) ([]uint64, error) {
	buf := make([][8]byte, len(addrs))
	for i, a := range addrs {
		if err := c.ep.Read(buf[i][:], a); err != nil {
			return nil, errors.Wrapf(err, "pool: queueing a read of %s", what)
		}
	}
	if err := c.flush("reading " + what); err != nil {
		return nil, err
	}
	out := make([]uint64, len(addrs))
	for i := range buf {
		out[i] = binary.LittleEndian.Uint64(buf[i][:])
	}
	return out, nil
}

func (c *Client) writeWord(what string, a verbs.Addr, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if err := c.ep.Write(a, b[:]); err != nil {
		return errors.Wrapf(err, "pool: queueing a write of %s", what)
	}
	return c.flush("writing " + what)
}

func (c *Client) cas(what string, a verbs.Addr, old, new uint64) (uint64, error) {
	var prev uint64
	if err := c.at.CAS64(a, old, new, &prev); err != nil {
		return 0, errors.Wrapf(err, "pool: queueing a CAS of %s", what)
	}
	if err := c.flush("CAS of " + what); err != nil {
		return 0, err
	}
	return prev, nil
}

// backoff is the next pause between retries: doubling from 1 ms to 100 ms.
func backoff(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Millisecond
	}
	return min(2*d, 100*time.Millisecond)
}

// Lock takes the catalogue lock, retrying with backoff for up to timeout.
// A lock taken more than StaleAfter ago (by the holder's clock) belongs to
// a dead job and is broken.
func (c *Client) Lock(timeout time.Duration) error {
	lock := claim{what: "the catalogue lock", whatStamp: "the catalogue lock time", holder: verbs.Addr(LockOff), stamp: verbs.Addr(LockTimeOff)}
	return c.take(lock, timeout, func(holder uint64, taken time.Duration) error {
		return errors.Errorf("pool file %s: the catalogue is locked by job %#x (taken %.1fs ago); gave up after %v (a lock older than %v is broken)",
			c.path, holder, taken.Seconds(), timeout, StaleAfter)
	})
}

// claim is a word that a client takes by a CAS of its id from 0, beside
// a word of when its holder last said it was alive (Unix ms, by the
// holder's clock): the catalogue lock and its time, a slot's lease and
// its beat.
type claim struct {
	what, whatStamp string // for errors
	holder, stamp   verbs.Addr
}

// take takes claim k for this client: free, already its own, or stale
// (its stamp older than StaleAfter), which is broken. A claim held by a
// live client is looked at again with backoff for up to wait, then busy
// is the error (its holder, and the age of its stamp). On success the
// stamp is now. An operation that times out (verbs.IsTimeout) is tried
// again on a new endpoint from SetRenew's function, up to takeRenewals
// times: each try reads the claim first, so a CAS that was applied but
// never answered is found to be this client's.
func (c *Client) take(k claim, wait time.Duration, busy func(holder uint64, age time.Duration) error) error {
	start := time.Now()
	var pause time.Duration
	renewals := 0
	for {
		done, again, holder, stamp, err := c.tryTake(k)
		if err != nil && renewals < takeRenewals && verbs.IsTimeout(err) && c.renew != nil {
			renewals++
			if err = c.renewEndpoint(err); err == nil {
				continue
			}
		}
		switch {
		case err != nil:
			return err
		case done:
			return nil
		case again:
			continue
		}
		if time.Since(start) >= wait {
			return busy(holder, age(c.now(), stamp))
		}
		pause = backoff(pause)
		if left := wait - time.Since(start); pause > left {
			pause = max(left, 0)
		}
		c.sleep(pause)
	}
}

// takeRenewals is how many new endpoints one take may have after
// timeouts.
const takeRenewals = 2

// tryTake is one look at claim k, and one try to take it: done once
// taken; again when another client won a race just now (look again at
// once); else its holder and stamp.
func (c *Client) tryTake(k claim) (done, again bool, holder, stamp uint64, err error) {
	w, err := c.readWords(k.what, k.holder, k.stamp)
	if err != nil {
		return false, false, 0, 0, err
	}
	holder, stamp = w[0], w[1]
	now := c.now()
	switch {
	case holder == c.id:
		return true, false, holder, stamp, c.writeWord(k.whatStamp, k.stamp, unixMS(now))
	case holder == 0:
		// The stamp first, so that nobody sees us holding the claim
		// with an earlier holder's (stale) stamp.
		if err := c.writeWord(k.whatStamp, k.stamp, unixMS(now)); err != nil {
			return false, false, holder, stamp, err
		}
		prev, err := c.cas(k.what, k.holder, 0, c.id)
		return err == nil && prev == 0, true, holder, stamp, err
	case age(now, stamp) > StaleAfter:
		// Claim the break on the stamp first: of several breakers one
		// wins, and a holder that just took the claim has already
		// rewritten it.
		prev, err := c.cas(k.whatStamp, k.stamp, stamp, unixMS(now))
		if err != nil || prev != stamp {
			return false, true, holder, stamp, err
		}
		if prev, err = c.cas(k.what, k.holder, holder, c.id); err != nil || prev != holder {
			return false, true, holder, stamp, err
		}
		return true, false, holder, stamp, c.writeWord(k.whatStamp, k.stamp, unixMS(c.now()))
	}
	return false, false, holder, stamp, nil
}

// SetRenew gives the client a way to replace an endpoint whose operation
// timed out (Lock, TakeLease): renew is told why, and returns a new endpoint on the
// same pool, which the client uses from then on (the caller closes the
// old one, and owns both).
func (c *Client) SetRenew(renew func(cause error) (verbs.Endpoint, error)) { c.renew = renew }

// renewEndpoint replaces the client's endpoint after cause, a timeout;
// an error if no new endpoint could be had.
func (c *Client) renewEndpoint(cause error) error {
	ep, err := c.renew(cause)
	if err == nil {
		at, ok := ep.(verbs.Atomics)
		if !ok {
			return errors.Errorf("%v; its new endpoint (%T) has no remote atomics", cause, ep)
		}
		c.ep, c.at = ep, at
		return nil
	}
	return errors.Wrapf(err, "%v; and a new endpoint", cause)
}

// Unlock releases the catalogue lock. It fails if this client does not
// hold it (it was broken as stale). Extents handed out since the lock was
// taken and not written to a slot are forgotten.
func (c *Client) Unlock() error {
	c.pending = c.pending[:0]
	prev, err := c.cas("the catalogue lock", verbs.Addr(LockOff), c.id, 0)
	if err != nil {
		return err
	}
	if prev != c.id {
		return errors.Errorf("pool file %s: unlocking the catalogue: it is held by %#x, not by this job (%#x); was the lock broken as stale after %v?",
			c.path, prev, c.id, StaleAfter)
	}
	return nil
}

// Slots reads the whole catalogue in one READ; index = slot number.
func (c *Client) Slots() ([]Slot, error) {
	buf := make([]byte, CatalogueBytes)
	if err := c.ep.Read(buf, verbs.Addr(SlotsOff)); err != nil {
		return nil, errors.Wrap(err, "pool: queueing the catalogue read")
	}
	if err := c.flush("reading the catalogue"); err != nil {
		return nil, err
	}
	out := make([]Slot, MaxSlots)
	for i := range out {
		s, err := DecodeSlot(buf[i*SlotBytes:])
		if err != nil {
			return nil, errors.Wrapf(err, "pool file %s: catalogue slot %d", c.path, i)
		}
		out[i] = s
	}
	return out, nil
}

// dead says whether s holds a dead job's leftovers: Loading or Job with a
// lease whose last heartbeat is older than StaleAfter, or a Job whose
// holder gave its lease up (a run ended by a signal).
func dead(s *Slot, now time.Time) bool {
	switch s.State {
	case Job:
		return s.Lease == 0 || age(now, s.Beat) > StaleAfter
	case Loading:
		return s.Lease != 0 && age(now, s.Beat) > StaleAfter
	}
	return false
}

// Dead says whether s holds a dead job's leftovers (a Loading or Job
// slot whose lease expired, or a Job slot whose holder gave it up).
func (s *Slot) Dead(now time.Time) bool { return dead(s, now) }

// live says whether s's extents are in use.
func live(s *Slot, now time.Time) bool { return s.State != Free && !dead(s, now) }

// Find returns the live graph slot (Ready preferred, else Loading) named
// name.
func (c *Client) Find(name string) (int, Slot, bool, error) {
	slots, err := c.Slots()
	if err != nil {
		return 0, Slot{}, false, err
	}
	now := c.now()
	found := -1
	for i := range slots {
		s := &slots[i]
		if s.Name != name || (s.State != Ready && s.State != Loading) || !live(s, now) {
			continue
		}
		if s.State == Ready {
			return i, *s, true, nil
		}
		if found < 0 {
			found = i
		}
	}
	if found < 0 {
		return -1, Slot{}, false, nil
	}
	return found, slots[found], true, nil
}

// FreeSlot returns the index of a Free slot, or else of a dead one.
func (c *Client) FreeSlot() (int, error) {
	slots, err := c.Slots()
	if err != nil {
		return 0, err
	}
	now := c.now()
	deadAt := -1
	var graphs, runs, ckpts int
	for i := range slots {
		if slots[i].State == Free {
			return i, nil
		}
		if deadAt < 0 && dead(&slots[i], now) {
			deadAt = i
		}
		switch slots[i].State {
		case Job:
			runs++
		case Checkpoint:
			ckpts++
		default:
			graphs++
		}
	}
	if deadAt >= 0 {
		return deadAt, nil
	}
	return 0, errors.Errorf("pool file %s: all %d catalogue slots are in use (%d by graphs and their cuts, %d by runs, %d by runs' checkpoints); drop a graph (--drop, which drops its runs' checkpoints too) or let runs end first", c.path, MaxSlots, graphs, runs, ckpts)
}

func (c *Client) checkSlot(i int) error {
	if i < 0 || i >= MaxSlots {
		return errors.Errorf("pool: slot %d out of range; expected 0..%d", i, MaxSlots-1)
	}
	return nil
}

// Put writes slot i whole (every word, the lease and beat included). The
// caller holds the catalogue lock. Extents of s stop being pending.
func (c *Client) Put(i int, s Slot) error {
	if err := c.checkSlot(i); err != nil {
		return err
	}
	buf := make([]byte, SlotBytes)
	if err := s.Encode(buf); err != nil {
		return errors.Wrapf(err, "pool: slot %d", i)
	}
	if err := c.ep.Write(SlotAddr(i), buf); err != nil {
		return errors.Wrapf(err, "pool: queueing the write of slot %d", i)
	}
	if err := c.flush(fmt.Sprintf("writing slot %d", i)); err != nil {
		return err
	}
	keep := c.pending[:0]
	for _, p := range c.pending {
		if !holds(&s, p) {
			keep = append(keep, p)
		}
	}
	c.pending = keep
	return nil
}

func holds(s *Slot, e Extent) bool {
	if s.Aux.MN == e.MN && s.Aux.Off == e.Off && s.Aux.Len != 0 {
		return true
	}
	for _, x := range s.Ext {
		if x.MN == e.MN && x.Off == e.Off && x.Len != 0 {
			return true
		}
	}
	return false
}

// Drop marks slot i Free (the caller holds the catalogue lock); its
// extents become free.
func (c *Client) Drop(i int) error {
	if err := c.checkSlot(i); err != nil {
		return err
	}
	return c.Put(i, Slot{State: Free, Graph: -1})
}

// Reclaim frees every dead slot (the caller holds the catalogue lock) and
// returns how many it freed.
func (c *Client) Reclaim() (int, error) {
	slots, err := c.Slots()
	if err != nil {
		return 0, err
	}
	now := c.now()
	n := 0
	for i := range slots {
		if dead(&slots[i], now) {
			if err := c.Drop(i); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// span is a used range [lo, hi) of one MN.
type span struct{ lo, hi uint64 }

// used returns, per MN, the sorted ranges that live slots and pending
// extents occupy.
func (c *Client) used() ([][]span, error) {
	slots, err := c.Slots()
	if err != nil {
		return nil, err
	}
	now := c.now()
	out := make([][]span, len(c.sizes))
	add := func(e Extent) {
		if e.Len == 0 || e.MN < 0 || e.MN >= len(out) {
			return
		}
		hi := e.Off + e.Len
		if hi < e.Off {
			hi = ^uint64(0)
		}
		out[e.MN] = append(out[e.MN], span{e.Off, hi})
	}
	for i := range slots {
		s := &slots[i]
		if !live(s, now) {
			continue
		}
		add(s.Aux)
		for _, e := range s.Ext {
			add(e)
		}
	}
	for _, e := range c.pending {
		add(e)
	}
	for m := range out {
		sort.Slice(out[m], func(a, b int) bool { return out[m][a].lo < out[m][b].lo })
	}
	return out, nil
}

func alignUp(v uint64) uint64 {
	if v > ^uint64(0)-(Align-1) {
		return ^uint64(0) &^ (Align - 1)
	}
	return (v + Align - 1) &^ (Align - 1)
}

// fit finds the first Align-aligned offset in [DataStart, size) where need
// bytes fit between the used spans; ok is false if none, and largest is
// the largest free gap (from an aligned start).
func fit(used []span, size, need uint64) (off uint64, ok bool, largest uint64) {
	cur := uint64(DataStart)
	gap := func(end uint64) bool {
		start := alignUp(cur)
		if end > size {
			end = size
		}
		if end <= start {
			return false
		}
		g := end - start
		largest = max(largest, g)
		if need > 0 && g >= need && !ok {
			off, ok = start, true
		}
		return ok
	}
	for _, u := range used {
		if gap(u.lo) {
			return off, ok, largest
		}
		cur = max(cur, u.hi)
	}
	gap(size)
	return off, ok, largest
}

// Alloc reserves sizes[m] bytes on each MN m (len(sizes) = NumMN), first
// fit in [DataStart, pool size) around every live slot's extents and this
// client's pending ones. Extents are Align-aligned and their lengths
// rounded up to Align; a size of 0 gives Len 0. The caller holds the
// catalogue lock and records the extents in a slot (Put) before Unlock.
func (c *Client) Alloc(sizes []uint64) ([]Extent, error) {
	if len(sizes) != len(c.sizes) {
		return nil, errors.Errorf("pool: Alloc of %d sizes; the pool has %d MNs", len(sizes), len(c.sizes))
	}
	used, err := c.used()
	if err != nil {
		return nil, err
	}
	out := make([]Extent, len(sizes))
	for m, want := range sizes {
		out[m].MN = m
		if want == 0 {
			continue
		}
		need := alignUp(want)
		off, ok, largest := fit(used[m], c.sizes[m], need)
		if want > c.sizes[m] || !ok {
			return nil, errors.Errorf("pool: MN %d has no room for %s (%d bytes asked; its largest free gap is %s of a %s pool); drop a graph (--drop) or serve with a larger --mn-mem",
				m, fmtBytes(want), want, fmtBytes(largest), fmtBytes(c.sizes[m]))
		}
		out[m].Off, out[m].Len = off, need
	}
	for _, e := range out {
		if e.Len > 0 {
			c.pending = append(c.pending, e)
		}
	}
	return out, nil
}

// AllocAux reserves size bytes on the MN with the largest free gap (first
// fit there), as Alloc does.
func (c *Client) AllocAux(size uint64) (Extent, error) {
	used, err := c.used()
	if err != nil {
		return Extent{}, err
	}
	best, bestGap := -1, uint64(0)
	for m := range c.sizes {
		if _, _, g := fit(used[m], c.sizes[m], 0); best < 0 || g > bestGap {
			best, bestGap = m, g
		}
	}
	e := Extent{MN: best}
	if size == 0 {
		return e, nil
	}
	need := alignUp(size)
	off, ok, _ := fit(used[best], c.sizes[best], need)
	if size > c.sizes[best] || !ok {
		return Extent{}, errors.Errorf("pool: no MN has room for %s (%d bytes asked for a graph's descriptors; the largest free gap is %s, on MN %d); drop a graph (--drop) or serve with a larger --mn-mem",
			fmtBytes(size), size, fmtBytes(bestGap), best)
	}
	e.Off, e.Len = off, need
	c.pending = append(c.pending, e)
	return e, nil
}

// TakeLease takes the lease of slot i for this client: free, already ours,
// or expired (the holder's last heartbeat older than StaleAfter). A lease
// held by a live job is waited for, up to wait, then reported as a
// *LeaseError. On success the slot's beat is now.
func (c *Client) TakeLease(i int, wait time.Duration) error {
	if err := c.checkSlot(i); err != nil {
		return err
	}
	what := fmt.Sprintf("the lease of slot %d", i)
	lease := claim{what: what, whatStamp: what, holder: SlotAddr(i) + OffLease, stamp: SlotAddr(i) + OffBeat}
	return c.take(lease, wait, func(holder uint64, beat time.Duration) error {
		name, err := c.slotName(i)
		if err != nil {
			return err
		}
		return &LeaseError{Name: name, Holder: holder, Age: beat}
	})
}

func (c *Client) slotName(i int) (string, error) {
	buf := make([]byte, SlotBytes)
	if err := c.ep.Read(buf, SlotAddr(i)); err != nil {
		return "", errors.Wrapf(err, "pool: queueing a read of slot %d", i)
	}
	if err := c.flush(fmt.Sprintf("reading slot %d", i)); err != nil {
		return "", err
	}
	s, err := DecodeSlot(buf)
	if err != nil {
		return "", errors.Wrapf(err, "pool file %s: catalogue slot %d", c.path, i)
	}
	return s.Name, nil
}

// HeartBeat renews this client's lease of slot i (beat = now). It fails if
// the lease is not held by this client.
func (c *Client) HeartBeat(i int) error {
	if err := c.checkSlot(i); err != nil {
		return err
	}
	return heartBeat(c.ep, i, c.id, c.now())
}

func heartBeat(ep verbs.Endpoint, i int, id uint64, now time.Time) error {
	var lease, beat [8]byte
	binary.LittleEndian.PutUint64(beat[:], unixMS(now))
	if err := ep.Read(lease[:], SlotAddr(i)+OffLease); err != nil {
		return errors.Wrapf(err, "pool: queueing a read of the lease of slot %d", i)
	}
	if err := ep.Write(SlotAddr(i)+OffBeat, beat[:]); err != nil {
		return errors.Wrapf(err, "pool: queueing the heartbeat of slot %d", i)
	}
	if err := ep.Flush(); err != nil {
		return errors.Wrapf(err, "pool: heartbeat of slot %d", i)
	}
	if h := binary.LittleEndian.Uint64(lease[:]); h != id {
		return errors.Errorf("pool: the lease of slot %d is held by %#x, not by this job (%#x); it expired after %v without a heartbeat", i, h, id, StaleAfter)
	}
	return nil
}

// ReleaseLease gives up this client's lease of slot i.
func (c *Client) ReleaseLease(i int) error {
	if err := c.checkSlot(i); err != nil {
		return err
	}
	prev, err := c.cas(fmt.Sprintf("the lease of slot %d", i), SlotAddr(i)+OffLease, c.id, 0)
	if err != nil {
		return err
	}
	if prev != c.id {
		return errors.Errorf("pool: releasing the lease of slot %d: it is held by %#x, not by this job (%#x)", i, prev, c.id)
	}
	return nil
}

// KeepAlive renews holder id's lease of slot i every `every` (BeatEvery if
// not positive) from a goroutine of its own, on ep, which the caller must
// not use until stop returns (an endpoint is single-goroutine: give
// KeepAlive its own). stop ends the renewals and returns the first error
// (a failed flush, a lease found held by another), which also ended them.
func KeepAlive(ep verbs.Endpoint, i int, id uint64, every time.Duration) (stop func() error) {
	return Keep(ep, i, id, every).Stop
}

// Keeper renews a lease from a goroutine of its own (Keep).
type Keeper struct {
	ep       verbs.Endpoint
	i        int
	id       uint64
	done     chan struct{}
	rel      chan chan error
	finished chan struct{}
	once     sync.Once
	err      error
}

// Keep is KeepAlive, returning the keeper: its Stop is KeepAlive's stop,
// and its Release gives the lease back on the keeper's own endpoint (a
// signal's handler, while the job's endpoints may be mid-flush; no new
// connection to make).
func Keep(ep verbs.Endpoint, i int, id uint64, every time.Duration) *Keeper {
	k := &Keeper{ep: ep, i: i, id: id, done: make(chan struct{}), rel: make(chan chan error), finished: make(chan struct{})}
	switch {
	case i < 0 || i >= MaxSlots:
		k.err = errors.Errorf("pool: KeepAlive of slot %d out of range; expected 0..%d", i, MaxSlots-1)
	case ep == nil:
		k.err = errors.New("pool: KeepAlive needs an endpoint")
	}
	if k.err != nil {
		close(k.finished)
		return k
	}
	if every <= 0 {
		every = BeatEvery
	}
	go k.run(every)
	return k
}

func (k *Keeper) run(every time.Duration) {
	defer close(k.finished)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.done:
			return
		case reply := <-k.rel:
			reply <- k.release()
			return
		case <-t.C:
			if k.err = heartBeat(k.ep, k.i, k.id, time.Now()); k.err != nil {
				return
			}
		}
	}
}

// Endpoint is the endpoint the keeper renews and releases the lease on.
func (k *Keeper) Endpoint() verbs.Endpoint { return k.ep }

// Stop ends the renewals and returns the first error, which also ended
// them.
func (k *Keeper) Stop() error {
	k.once.Do(func() { close(k.done) })
	<-k.finished
	return k.err
}

// Release ends the renewals and gives the lease back; after Stop (or a
// failed renewal) it gives nothing back and says why.
func (k *Keeper) Release() error {
	reply := make(chan error, 1)
	select {
	case k.rel <- reply:
		return <-reply
	case <-k.finished:
		if k.err != nil {
			return k.err
		}
		return errors.New("pool: the lease's keeper had stopped")
	}
}

func (k *Keeper) release() error {
	at, ok := k.ep.(verbs.Atomics)
	if !ok {
		return errors.Errorf("pool: releasing the lease of slot %d: the endpoint (%T) has no remote atomics", k.i, k.ep)
	}
	var prev uint64
	if err := at.CAS64(SlotAddr(k.i)+OffLease, k.id, 0, &prev); err != nil {
		return errors.Wrapf(err, "pool: queueing the release of slot %d's lease", k.i)
	}
	if err := k.ep.Flush(); err != nil {
		return errors.Wrapf(err, "pool: releasing the lease of slot %d", k.i)
	}
	if prev != k.id {
		return errors.Errorf("pool: releasing the lease of slot %d: it is held by %#x, not by this job (%#x)", k.i, prev, k.id)
	}
	return nil
}

// FindView returns the Ready slot of the graph name for a job of cns
// compute nodes: a slot cut for that many (exact), else the graph's first
// Ready slot (a view cut for another count, to re-cut from).
func (c *Client) FindView(name string, cns int) (i int, s Slot, exact, ok bool, err error) {
	slots, err := c.Slots()
	if err != nil {
		return 0, Slot{}, false, false, err
	}
	any := -1
	for i := range slots {
		s := &slots[i]
		if s.Name != name || s.State != Ready {
			continue
		}
		if s.CNs == cns {
			return i, *s, true, true, nil
		}
		if any < 0 {
			any = i
		}
	}
	if any < 0 {
		return -1, Slot{}, false, false, nil
	}
	return any, slots[any], false, true, nil
}

// FindCut looks, for a run that would cut graph name anew for cns
// compute nodes, for a slot of that name and count: ready (its index and
// slot; -1 if none), or being cut by a live load (cutting). Call it under
// the catalogue's lock, so that what it finds stays so until the caller
// acts on it.
func (c *Client) FindCut(name string, cns int) (ready int, rs Slot, cutting bool, err error) {
	ready = -1
	err = c.each(func(i int, s *Slot, now time.Time) {
		switch {
		case s.Name != name || s.CNs != cns:
		case s.State == Ready && ready < 0:
			ready, rs = i, *s
		case s.State == Loading && !dead(s, now):
			cutting = true
		}
	})
	return ready, rs, cutting, err
}

// Readers returns the live runs that read any of the graph slots graphs.
func (c *Client) Readers(graphs []int) ([]Reader, error) {
	var out []Reader
	err := c.each(func(_ int, s *Slot, now time.Time) {
		if s.State == Job && !dead(s, now) && slices.Contains(graphs, s.Graph) {
			out = append(out, Reader{Job: s.Lease, Age: age(now, s.Beat)})
		}
	})
	return out, err
}

// each calls f with every slot of the catalogue, read in one READ, and
// the time it was read.
func (c *Client) each(f func(i int, s *Slot, now time.Time)) error {
	slots, err := c.Slots()
	if err != nil {
		return err
	}
	now := c.now()
	for i := range slots {
		f(i, &slots[i], now)
	}
	return nil
}

// Hold registers this client as a reader of graph slot g, a Ready graph:
// a Job slot of its own, leased to it, that names g (and holds the run's
// regions once Alloc has placed them). Any number of runs hold a graph at
// once; a writer (a drop) takes the graph's lease and finds them. A graph
// whose lease a live writer holds is waited for, up to wait, then
// reported as a *LeaseError. Hold takes the catalogue lock (lockWait at
// most each time) and returns the Job slot's index and the graph's slot
// as it read it under the lock; the caller keeps the Job slot's lease
// alive (KeepAlive) and drops it when done.
func (c *Client) Hold(g int, lockWait, wait time.Duration) (int, Slot, error) {
	if err := c.checkSlot(g); err != nil {
		return -1, Slot{}, err
	}
	start := time.Now()
	var pause time.Duration
	for {
		i, s, busy, err := c.hold(g, lockWait)
		if err != nil || busy == nil {
			return i, s, err
		}
		if wait <= 0 || time.Since(start) >= wait {
			return -1, Slot{}, busy
		}
		pause = backoff(pause)
		if left := wait - time.Since(start); pause > left {
			pause = max(left, 0)
		}
		c.sleep(pause)
	}
}

// hold is one try of Hold under the catalogue lock: the Job slot and
// the graph's slot, or the writer that holds g.
func (c *Client) hold(g int, lockWait time.Duration) (int, Slot, *LeaseError, error) {
	if err := c.Lock(lockWait); err != nil {
		return -1, Slot{}, nil, err
	}
	defer c.Unlock()
	slots, err := c.Slots()
	if err != nil {
		return -1, Slot{}, nil, err
	}
	s, now := &slots[g], c.now()
	if s.State != Ready {
		return -1, Slot{}, nil, errors.Errorf("pool: graph %q (slot %d) is no longer ready to read (%s)", s.Name, g, s.State)
	}
	if s.Lease != 0 && s.Lease != c.id && age(now, s.Beat) <= StaleAfter {
		return -1, Slot{}, &LeaseError{Name: s.Name, Holder: s.Lease, Age: age(now, s.Beat)}, nil
	}
	i, err := c.FreeSlot()
	if err != nil {
		return -1, Slot{}, nil, err
	}
	ms := unixMS(now)
	return i, *s, nil, c.Put(i, Slot{State: Job, Lease: c.id, Beat: ms, Created: ms, Name: s.Name, Graph: g})
}

// Named returns every graph slot (Loading or Ready, live) named name: a
// graph and the views of it cut for other compute-node counts.
func (c *Client) Named(name string) ([]int, error) {
	var out []int
	err := c.each(func(i int, s *Slot, now time.Time) {
		if s.Name == name && (s.State == Ready || s.State == Loading) && live(s, now) {
			out = append(out, i)
		}
	})
	return out, err
}
