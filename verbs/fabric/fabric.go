package fabric

// #cgo LDFLAGS: -lfabric
// #include <stdlib.h>
// #include "dmgfab.h"
import "C"

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/hugemem"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// errBufLen is the size of the buffers C writes error messages into.
const errBufLen = 512

// Network is one rank's libfabric network.
type Network struct {
	w        *spmd.World
	cfg      verbs.Config
	provider string // as opened, e.g. "tcp;ofi_rxm"
	asked    string // as asked of fi_getinfo (ProviderName)
	domain   string

	fab  *C.dmg_fab
	mn   *C.dmg_mn // MN only
	pool []byte    // MN only: the mmapped, registered pool
	prog chan struct{}

	sizes  []uint64
	remote []remotePool // by MN id
	addrs  []verbs.PoolAddr
	// attached: the MNs are a serve job's, reached through a pool file,
	// not ranks of w.
	attached bool
	names    unsafe.Pointer
	namelen  int
	virt     bool
	maxMsg   uint64

	keys   atomic.Uint64 // requested keys for staging MRs
	mu     sync.Mutex
	eps    map[*endpoint]struct{}
	closed bool
	// unwatch stops the watch for stuck provider calls (watch.go).
	unwatch chan struct{}
	// unreclaim stops an shm MN's reclaim of departed clients, which
	// closes reclaimed when it has (reclaim.go).
	unreclaim, reclaimed chan struct{}
	// probesFailed counts this CN's endpoints replaced after a failed
	// probe, and firstProbe is the first failure's error (both said in
	// a timeout's error).
	probesFailed atomic.Int64
	firstProbe   atomic.Pointer[string]
	// halted is set by Halt: no endpoint enters the provider again.
	halted atomic.Bool
	// opening: Close found an endpoint's open inside the provider for
	// good, and leaves the fabric to the process's end.
	opening bool
}

type remotePool struct {
	base uint64 // remote address of offset 0 as the provider expects it
	key  uint64
}

var _ verbs.Network = (*Network)(nil)

// refused are providers that fail or crawl for one-sided RDM traffic here.
var refused = map[string]string{
	"sockets":     "deprecated and unreliable for RMA on libfabric 1.17; use tcp",
	"net":         "experimental on libfabric 1.17; use tcp",
	"udp":         "has no RMA; use tcp",
	"udp;ofi_rxd": "very slow for RMA on libfabric 1.17; use tcp",
}

// ProviderName resolves a --fabric value to the libfabric provider string:
// "tcp" → "tcp;ofi_rxm", "verbs" → "verbs;ofi_rxm", "" → shm or tcp by
// whether all ranks share a host (sameHost).
func ProviderName(name string, sameHost bool) (string, error) {
	name = strings.TrimSpace(name)
	switch name {
	case "":
		if sameHost {
			return "shm", nil
		}
		return "tcp;ofi_rxm", nil
	case "tcp", "verbs":
		name += ";ofi_rxm"
	}
	if why, ok := refused[name]; ok {
		return "", &verbs.ProviderError{Msg: fmt.Sprintf("verbs: libfabric provider %q refused: %s", name, why)}
	}
	return name, nil
}

// Providers lists the libfabric providers that offer FI_EP_RDM with RMA and
// atomics here (rma=true), or every provider (rma=false).
func Providers(rma bool) ([]string, error) {
	buf := make([]byte, 4096)
	if ret := C.dmg_list_providers((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), cbool(rma)); ret != 0 {
		return nil, errors.Errorf("verbs: fi_getinfo failed listing providers (%d)", int(ret))
	}
	s := cstr(buf)
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ", "), nil
}

func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// agree exchanges each rank's set-up error and returns the same error on
// every rank if any rank failed, so no rank is left waiting in a
// collective for one that gave up.
func agree(comm spmd.Comm, err error, step string) error {
	_, xerr := spmd.Exchange(comm, err, nil)
	var pe *spmd.PeerError
	switch {
	case errors.As(xerr, &pe):
		return errors.Errorf("verbs: %s failed on rank %d: %s", step, pe.Rank, pe.Msg)
	case xerr != nil && xerr != err:
		return errors.Wrapf(xerr, "verbs: agreeing on %s", step)
	}
	return xerr
}

// Open opens the network collectively over w.
func Open(w *spmd.World, cfg verbs.Config) (*Network, error) {
	if w == nil {
		return nil, errors.New("verbs: fabric.Open needs a world")
	}
	cfg.EnsureDefaults()
	// Only an MN's rank may find its pool size wrong: agree on it, so
	// that no rank leaves the collectives the others enter.
	if err := agree(w.Comm, cfg.Validate(), "checking the fabric's configuration"); err != nil {
		return nil, err
	}
	n := &Network{w: w, cfg: cfg, eps: map[*endpoint]struct{}{}}
	n.keys.Store(1)

	// Step 1: provider, identical on every rank.
	host, _ := os.Hostname()
	hosts, err := w.Comm.AllGather(append([]byte{'h'}, host...))
	if err != nil {
		return nil, errors.Wrap(err, "verbs: exchanging host names")
	}
	same := true
	for _, h := range hosts {
		same = same && bytes.Equal(h, hosts[0])
	}
	prov, err := ProviderName(cfg.Provider, same)
	if err != nil {
		return nil, err
	}

	// Step 2: fabric and domain; the MN's pool and endpoint.
	err = n.openLocal(prov)
	if err = agree(w.Comm, err, "opening libfabric provider "+prov); err != nil {
		n.release()
		return nil, err
	}

	// Step 3: exchange pool sizes, addresses, keys and endpoint names.
	var blob []byte
	if n.mn != nil {
		name := n.ownName()
		if name == "" {
			err = errors.Errorf("verbs: fi_getname on MN %d failed", w.Index)
		}
		base := uint64(0)
		if n.virt {
			base = uint64(uintptr(C.dmg_mn_pool(n.mn)))
		}
		blob = binary.LittleEndian.AppendUint64(blob, uint64(len(n.pool)))
		blob = binary.LittleEndian.AppendUint64(blob, base)
		blob = binary.LittleEndian.AppendUint64(blob, uint64(C.dmg_mn_key(n.mn)))
		blob = append(blob, name...)
	} else {
		blob = []byte{'c'}
	}
	all, cerr := w.Comm.AllGather(blob)
	if cerr != nil {
		n.release()
		return nil, errors.Wrap(cerr, "verbs: exchanging fabric addresses")
	}
	if err == nil {
		err = n.parsePeers(all)
	}
	if err = agree(w.Comm, err, "exchanging fabric addresses"); err != nil {
		n.release()
		return nil, err
	}
	n.startWatch()
	return n, nil
}

// startWatch watches a CN's endpoints for a provider call that does not
// return (Config.Stuck).
func (n *Network) startWatch() {
	if n.cfg.Stuck != nil && n.w.Role == spmd.CN {
		n.unwatch = make(chan struct{})
		go n.watch(n.unwatch)
	}
}

// Attach opens the network of a job of compute nodes alone (w has no
// MNs) onto the pools of a serve job, from the addresses it published
// (Addrs, kept in a pool file): the same provider, one record per MN.
// It is collective over w; no MN takes part.
func Attach(w *spmd.World, provider string, pools []verbs.PoolAddr, cfg verbs.Config) (*Network, error) {
	if w == nil || w.Roles.MN != 0 {
		return nil, errors.New("verbs: fabric.Attach needs a world of compute nodes alone")
	}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(pools) == 0 {
		return nil, errors.New("verbs: fabric.Attach: no memory nodes; expected at least one pool address")
	}
	n := &Network{w: w, cfg: cfg, eps: map[*endpoint]struct{}{}, attached: true}
	n.keys.Store(1)
	err := n.openLocal(provider)
	if err == nil {
		err = n.setPeers(pools)
	}
	if err = agree(w.Comm, err, "attaching to the pool with provider "+provider); err != nil {
		n.release()
		return nil, err
	}
	n.startWatch()
	return n, nil
}

// Addrs are the MNs' pool addresses as exchanged when the network opened,
// by MN id: what a serve job publishes for Attach.
func (n *Network) Addrs() []verbs.PoolAddr { return n.addrs }

// ProviderName is the libfabric provider as asked for ("shm",
// "tcp;ofi_rxm"): what Attach opens.
func (n *Network) ProviderName() string { return n.asked }

func (n *Network) openLocal(prov string) error {
	setHugePages()
	if prov == "shm" { // a job's own or an attached job's CNs alike
		verbs.RemoveStale(verbs.ShmDir)
		if err := setShmPrefix(); err != nil {
			return err
		}
	}
	var errbuf [errBufLen]byte
	cprov := C.CString(prov)
	defer C.free(unsafe.Pointer(cprov))
	var fab *C.dmg_fab
	if ret := C.dmg_fab_open(cprov, &fab, (*C.char)(unsafe.Pointer(&errbuf[0])), errBufLen); ret != 0 {
		if ret == -C.DMG_ENODATA {
			avail, _ := Providers(true)
			any, _ := Providers(false)
			return &verbs.ProviderError{Msg: fmt.Sprintf("verbs: libfabric provider %q is not available with FI_EP_RDM, RMA and atomics; available: %s (all providers: %s)",
				prov, strings.Join(avail, ", "), strings.Join(any, ", "))}
		}
		return errors.Errorf("verbs: opening libfabric provider %q: %s", prov, cstr(errbuf[:]))
	}
	n.fab = fab
	n.asked = prov
	n.provider = C.GoString(C.dmg_fab_prov_name(fab))
	n.domain = C.GoString(C.dmg_fab_domain_name(fab))
	n.virt = C.dmg_fab_virt_addr(fab) != 0
	n.maxMsg = uint64(C.dmg_fab_max_msg(fab))
	if n.maxMsg == 0 || n.maxMsg > 1<<30 {
		n.maxMsg = 1 << 30
	}
	if n.w.Role != spmd.MN {
		return nil
	}
	size := (n.cfg.PoolBytes + 7) &^ 7
	var mn *C.dmg_mn
	if ret := C.dmg_mn_open(fab, C.uint64_t(size), C.uint64_t(0x10000+n.w.Index), &mn,
		(*C.char)(unsafe.Pointer(&errbuf[0])), errBufLen); ret != 0 {
		return errors.Errorf("verbs: MN %d registering a %d-byte pool with %s: %s", n.w.Index, size, prov, cstr(errbuf[:]))
	}
	n.mn = mn
	if size > 0 {
		n.pool = unsafe.Slice((*byte)(C.dmg_mn_pool(mn)), size)
	}
	n.prog = make(chan struct{})
	go func() {
		defer close(n.prog)
		C.dmg_mn_progress(mn)
	}()
	n.startReclaim()
	return nil
}

func (n *Network) parsePeers(all [][]byte) error {
	roles := n.w.Roles
	pools := make([]verbs.PoolAddr, roles.MN)
	for mn := range roles.MN {
		b := all[roles.RankOf(spmd.MN, mn)]
		if len(b) <= 24 {
			return errors.Errorf("verbs: MN %d sent a %d-byte address record; expected more than 24", mn, len(b))
		}
		pools[mn] = verbs.PoolAddr{Size: binary.LittleEndian.Uint64(b), Base: binary.LittleEndian.Uint64(b[8:]),
			Key: binary.LittleEndian.Uint64(b[16:]), Name: bytes.Clone(b[24:])}
	}
	return n.setPeers(pools)
}

// setPeers takes every MN's pool address; a CN keeps their endpoint
// names for its endpoints.
func (n *Network) setPeers(pools []verbs.PoolAddr) error {
	n.addrs = pools
	n.sizes = make([]uint64, len(pools))
	n.remote = make([]remotePool, len(pools))
	var names []byte
	for mn, p := range pools {
		n.sizes[mn] = p.Size
		n.remote[mn] = remotePool{base: p.Base, key: p.Key}
		// An shm address is a name, its NUL included, whose length
		// varies with the MN's pid and start time (dmgfab.c's open_ep):
		// fi_av_insert reads such names one after the other. Other
		// providers' addresses have one size.
		switch {
		case strings.HasPrefix(n.provider, "shm"):
			if bytes.IndexByte(p.Name, 0) != len(p.Name)-1 {
				return errors.Errorf("verbs: MN %d's shm address is %d bytes that are not one name; expected a NUL-terminated name", mn, len(p.Name))
			}
		case mn == 0:
			n.namelen = len(p.Name)
		case len(p.Name) != n.namelen:
			return errors.Errorf("verbs: MN %d has a %d-byte fabric address but MN 0 a %d-byte one; expected one provider everywhere", mn, len(p.Name), n.namelen)
		}
		names = append(names, p.Name...)
	}
	if n.w.Role == spmd.CN {
		n.names = C.CBytes(names)
	}
	return nil
}

func (n *Network) NumMN() int { return len(n.sizes) }

func (n *Network) PoolSize(mn int) uint64 {
	if mn < 0 || mn >= len(n.sizes) {
		return 0
	}
	return n.sizes[mn]
}

func (n *Network) Check(a verbs.Addr, size int) error { return verbs.CheckRange(n.sizes, a, size) }

func (n *Network) Pool() []byte { return n.pool }

// GapBytes is verbs.GapCost. On shm an operation costs about 2–3 µs of a
// core (a system call and the provider's bookkeeping, on the CN and on the
// MN, whose progress thread does the copy) and a KiB about 0.15–0.3 µs
// when the copies compete with the engine for the cores: 16 KiB (kernels
// on kron:20 ran alike from 4 to 16 KiB, slower at 1 and 32; see
// docs/design.md); tcp adds a socket round trip per batch (64 KiB); an
// RDMA NIC (verbs, efa, cxi, ...) handles about 10 M operations/s per
// queue pair at 12.5 GB/s, which prices an operation at about 1.25 KiB
// (2 KiB here).
func (n *Network) GapBytes() int {
	switch n.transport() {
	case sharedMemory:
		return 16 << 10
	case sockets:
		return 64 << 10
	}
	return 2 << 10
}

// RoundTripBytes is verbs.RoundTripCost: over sockets 1 MiB, where a
// round trip costs tens of microseconds of CPU on both sides (kron:20
// PageRank on four emulated hosts over tcp made 41 k round trips in
// 6.5–7.1 s with tasks of a 1024-vertex loading batch, 5.3 k in 4.4–4.8 s
// with tasks of 8192; docs/results.md); 0 elsewhere, where the engine's
// default tasks of a loading batch pay (shm: no faster with 8192).
func (n *Network) RoundTripBytes() int {
	if n.transport() == sockets {
		return 1 << 20
	}
	return 0
}

// AtomicsOnTargetCPU is verbs.TargetAtomics: shm and the socket providers
// (tcp;ofi_rxm) execute a remote atomic in the target's progress thread;
// RDMA NICs (verbs, efa, cxi, ...) in their atomic units.
func (n *Network) AtomicsOnTargetCPU() bool { return n.transport() != rdmaNIC }

// transport is what carries a provider's operations, which decides what
// they cost.
type transport uint8

const (
	rdmaNIC      transport = iota // verbs, efa, cxi, ...: the NIC does the work
	sharedMemory                  // shm: system calls, the MN's progress thread
	sockets                       // tcp, sockets, udp: the peers' CPUs, a socket round trip
)

func (n *Network) transport() transport {
	switch {
	case strings.HasPrefix(n.provider, "shm"):
		return sharedMemory
	case strings.HasPrefix(n.provider, "tcp"), strings.HasPrefix(n.provider, "sockets"), strings.HasPrefix(n.provider, "udp"):
		return sockets
	}
	return rdmaNIC
}

// Provider is "fabric/" plus the libfabric provider and domain.
func (n *Network) Provider() string { return fmt.Sprintf("fabric/%s (%s)", n.provider, n.domain) }

// NewEndpoint creates an endpoint to every MN (CN only); on a network
// attached to a served pool, one that has reached every MN (probe).
func (n *Network) NewEndpoint() (verbs.Endpoint, error) { return n.newProbed() }

func (n *Network) newEndpoint() (verbs.Endpoint, error) {
	if n.w.Role != spmd.CN {
		return nil, errors.Errorf("verbs: NewEndpoint on MN %d; expected a CN (only CNs post operations)", n.w.Index)
	}
	// The endpoint is registered, busy, before the provider opens it and
	// n.mu is not held meanwhile: the watch (watch.go) takes n.mu, and an
	// open that spins (shm maps and checks every MN's region) is then
	// reported like a Flush that does.
	ep := &endpoint{net: n, tally: verbs.NewTally(len(n.sizes)), batch: make([]verbs.Counters, len(n.sizes))}
	ep.busy.Store(time.Now().UnixNano())
	n.mu.Lock()
	switch {
	case n.closed:
		n.mu.Unlock()
		return nil, errors.New("verbs: NewEndpoint on a closed network")
	case n.names == nil || len(n.sizes) == 0:
		n.mu.Unlock()
		return nil, errors.New("verbs: NewEndpoint: no MN addresses; expected at least one MN")
	}
	n.eps[ep] = struct{}{}
	n.mu.Unlock()
	var errbuf [errBufLen]byte
	var cep *C.dmg_ep
	ret := C.dmg_ep_open(n.fab, n.names, C.size_t(n.namelen), C.int(len(n.sizes)), C.uint64_t(n.keys.Add(1)),
		&cep, (*C.char)(unsafe.Pointer(&errbuf[0])), errBufLen)
	ep.busy.Store(0)
	n.mu.Lock()
	defer n.mu.Unlock()
	if ret == 0 && !n.closed {
		ep.ep = cep // under n.mu: Close and Halt read it after taking n.mu
		ep.refresh()
		return ep, nil
	}
	if n.eps != nil {
		delete(n.eps, ep)
	}
	if ret == 0 {
		C.dmg_ep_close(cep)
		return nil, errors.New("verbs: NewEndpoint on a network closed meanwhile")
	}
	return nil, errors.Errorf("verbs: creating a %s endpoint on CN %d: %s", n.provider, n.w.Index, cstr(errbuf[:]))
}

// Probing an attached job's endpoints: each new endpoint first reads a
// word of every MN's pool within probeTimeout, and is replaced, up to
// probeTries times, when it cannot. On this host's libfabric 1.17 a
// connection to a serve job's MN sometimes never completes (about one
// job in thirty over tcp;ofi_rxm, more while another job computes), and
// stalls the MN's other connections until the stuck one is closed; a job
// that gives up on it after probeTimeout, and tries a new endpoint,
// costs the others a stall shorter than their timeout.
const (
	probeTimeout = 2 * time.Second
	probeTries   = 5
)

// newProbed is newEndpoint, probed when the network is attached, else
// warmed.
func (n *Network) newProbed() (verbs.Endpoint, error) {
	if !n.attached {
		v, err := n.newEndpoint()
		if err != nil {
			return nil, err
		}
		if err := n.warm(v.(*endpoint)); err != nil {
			return nil, err
		}
		return v, nil
	}
	var last error
	for range probeTries {
		v, err := n.newEndpoint()
		if err != nil {
			return v, err
		}
		ep := v.(*endpoint)
		if last = n.probe(ep); last == nil {
			return ep, nil
		}
		n.probesFailed.Add(1)
		msg := last.Error()
		n.firstProbe.CompareAndSwap(nil, &msg)
		ep.closeDead = !strings.HasPrefix(n.provider, "shm")
		ep.Close()
	}
	return nil, errors.Wrapf(last, "verbs: no endpoint of CN %d reached every MN of the pool within %v, %d times", n.w.Index, probeTimeout, probeTries)
}

// warm makes ep's first atomic to every MN over sockets (tcp;ofi_rxm),
// before the engine's: adds 0 to every MN's first word. A process's first
// atomic to an MN there takes 0.2–0.5 s, its next endpoints' first ones
// a few ms, and later ones tens of µs (measured on four emulated hosts
// and on one host over tcp; over shm 0.2–7 ms). Made by the engine's
// first mailbox reservation, it stalled one CN for that long inside an
// iteration while every other rank waited (BFS on kron:20: 0.1–0.44 s of
// a 0.6–1.2 s run, in its first iteration of one vertex); now it is part
// of opening the fabric. Over sockets the MN's progress thread applies
// WRITEs and atomics one at a time, so the add cannot undo a WRITE that
// races with it.
func (n *Network) warm(ep *endpoint) error {
	if n.transport() != sockets {
		return nil
	}
	err := n.touchMNs(ep, false)
	if err == nil {
		err = ep.Flush()
	}
	if err != nil {
		ep.Close()
		return errors.Wrapf(err, "verbs: the first atomics of a new endpoint of CN %d", n.w.Index)
	}
	ep.tally = verbs.NewTally(len(n.sizes)) // the fabric's, not the caller's: a new endpoint has counted nothing
	return nil
}

// probe reads a word of every MN's pool through ep, and adds 0 to it
// atomically, within probeTimeout: the two paths an endpoint's operations
// take. Over shm a READ is the CN's own copy, and completes whether or
// not the MN answers this endpoint; an atomic is the MN's, answered
// through the MN's slot for the endpoint. The word is the pool's first,
// which nothing writes after the MN set it up.
func (n *Network) probe(ep *endpoint) error {
	if err := n.touchMNs(ep, true); err != nil {
		return err
	}
	ep.probing = probeTimeout
	defer func() { ep.probing = 0 }()
	return ep.Flush()
}

// touchMNs queues on ep, for every MN, an add of 0 to its pool's first
// word, after a READ of that word when read is set (probe, warm).
func (n *Network) touchMNs(ep *endpoint, read bool) error {
	b := make([]byte, 8*len(n.sizes))
	prev := make([]uint64, len(n.sizes))
	for mn := range n.sizes {
		a, err := verbs.MakeAddr(mn, 0)
		if err == nil && read {
			err = ep.Read(b[8*mn:8*mn+8], a)
		}
		if err == nil {
			err = ep.FAA64(a, 0, &prev[mn])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Close closes every endpoint, waits for every rank (collective) and then
// stops the MN's progress and releases the pool.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return errors.New("verbs: network closed twice")
	}
	n.closed = true
	eps := n.eps
	n.eps = nil
	n.mu.Unlock()
	var opens []*endpoint // registered by NewEndpoint, not yet opened
	for ep := range eps {
		if ep.ep == nil {
			opens = append(opens, ep)
		} else {
			ep.release()
		}
	}
	// An open still inside the provider (NewEndpoint on another
	// goroutine, which closes its endpoint itself once it sees the
	// network closed) uses the fabric: it is then left for the process's
	// end.
	n.opening = inside(opens, progStopWait)
	err := n.w.Comm.Barrier()
	n.release()
	return errors.Wrap(err, "verbs: closing the network")
}

// inside waits, d at most, until none of eps is inside the provider (a
// Flush, or an open), and tells whether one still is.
func inside(eps []*endpoint, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(time.Millisecond) {
		busy := slices.ContainsFunc(eps, func(e *endpoint) bool { return e.busy.Load() != 0 })
		if !busy || time.Now().After(deadline) {
			return busy
		}
	}
}

// Halt is verbs.Halter: it stops this process's operations for good,
// but keep's, and returns once no other endpoint is inside the provider
// (haltWait at most). A process that ends then holds none of the
// provider's locks: over shm an operation takes a spin lock in the MN's
// shared memory, and a process killed while holding it (Open MPI's
// SIGKILL a second after its SIGTERM) leaves a served pool unable to
// answer anyone. Later Flushes fail; operations in flight are left to
// the peer.
func (n *Network) Halt(keep ...verbs.Endpoint) {
	n.mu.Lock()
	var stopped []*endpoint
	for ep := range n.eps {
		kept := slices.Contains(keep, verbs.Endpoint(ep))
		ep.kept.Store(kept)
		if ep.ep != nil {
			C.dmg_ep_keep(ep.ep, cbool(kept))
		}
		if !kept {
			stopped = append(stopped, ep)
		}
	}
	n.halted.Store(true)
	if n.fab != nil {
		C.dmg_fab_halt(n.fab)
	}
	n.mu.Unlock()
	inside(stopped, haltWait)
}

// cbool is b as a C int flag.
func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// haltWait bounds Halt's wait for the endpoints inside the provider: a
// provider call returns within microseconds, a flush at its next loop.
const haltWait = 100 * time.Millisecond

// progStopWait bounds how long closing an MN waits for its progress
// thread. A thread that does not come back is inside a provider call that
// never returns (spinning on an shm lock a stopped client holds): the MN
// and its fabric are then left open, for the process's end, rather than
// closed under it or waited for without end (dmg stop's signal to a
// wedged serve job).
const progStopWait = 2 * time.Second

func (n *Network) release() {
	if n.unwatch != nil {
		close(n.unwatch)
		n.unwatch = nil
	}
	open := false // an MN left open, its progress inside the provider
	if n.mn != nil {
		n.stopReclaim()
		C.dmg_mn_stop(n.mn)
		select {
		case <-n.prog:
			n.pool = nil
			C.dmg_mn_close(n.mn)
		case <-time.After(progStopWait):
			open = true
		}
		n.mn = nil
	}
	if n.opening {
		return // an endpoint's open still uses names and the fabric
	}
	if n.names != nil {
		C.free(n.names)
		n.names = nil
	}
	if n.fab != nil && !open {
		C.dmg_fab_close(n.fab)
		n.fab = nil
	}
}

// pauseProgress stops (or resumes) the MN's progress thread, to simulate a
// stuck peer in tests. A pause returns once the thread has seen it: the
// provider call it may be in (fi_cq_sread waits up to 2 ms, and serves
// what arrives meanwhile) has ended.
func (n *Network) pauseProgress(paused bool) {
	if n.mn != nil {
		C.dmg_mn_pause(n.mn, cbool(paused))
		if paused {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// ownName is this MN's own endpoint name ("" if the provider gives none).
func (n *Network) ownName() string {
	name := make([]byte, 1024)
	nl := C.size_t(len(name))
	if C.dmg_mn_name(n.mn, unsafe.Pointer(&name[0]), &nl) != 0 || int(nl) > len(name) {
		return ""
	}
	return string(name[:nl])
}

func (n *Network) mnName(mn int) string {
	if n.attached {
		return fmt.Sprintf("MN %d of the pool", mn)
	}
	return fmt.Sprintf("MN %d (rank %d)", mn, n.w.Roles.RankOf(spmd.MN, mn))
}

// setShmPrefix names this process's shm endpoint regions after it
// (verbs.RuntimeName), so that RemoveStale can tell them, once their
// process is dead, from anything else in /dev/shm.
func setShmPrefix() error {
	name, err := verbs.RuntimeName("x")
	if err != nil {
		return err
	}
	prefix := strings.TrimSuffix(name, "x")
	if len(prefix) >= 96 {
		return errors.Errorf("verbs: shm region prefix %q is too long", prefix)
	}
	cs := C.CString(prefix)
	defer C.free(unsafe.Pointer(cs))
	C.dmg_set_shm_prefix(cs)
	return nil
}

// setHugePages tells the C side whether large registered memory is advised
// for huge pages (hugemem.Advised).
func setHugePages() {
	on := C.int(0)
	if hugemem.Advised() {
		on = 1
	}
	C.dmg_set_huge(on)
}
