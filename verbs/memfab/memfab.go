package memfab

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// Memory is where the pools of a load/store job live and how a rank gets
// at another's: Go memory shared through a Cluster (Open), or files mapped
// shared between processes (package verbs/cxl). Every method but Provider
// is called by Open or Close of one rank's Network, never concurrently.
type Memory interface {
	// Create makes MN mn's pool of size bytes (a multiple of 8) and returns
	// it with the name by which CNs attach it.
	Create(mn int, size uint64) (p *Pool, name []byte, err error)
	// Attach gives a CN MN mn's pool of size bytes, created under name.
	Attach(mn int, name []byte, size uint64) (*Pool, error)
	// Release ends this rank's use of its pools once every rank has closed:
	// a CN lets go of what it attached, an MN frees what it created.
	Release() error
	// Provider names the backend ("memfab", "cxl").
	Provider() string
	// GapBytes is verbs.GapCost for this memory.
	GapBytes() int
}

// Pool is one MN's memory as a load/store backend reaches it: 8-byte
// words for the atomics, the same memory as bytes for copies.
type Pool struct {
	words  []uint64
	bytes  []byte
	closed atomic.Bool
}

// NewPool wraps mem, which must be 8-byte aligned with a length that is a
// multiple of 8 (mapped memory is page aligned; Go's []uint64 is too).
func NewPool(mem []byte) (*Pool, error) {
	p := &Pool{bytes: mem}
	if len(mem) == 0 {
		return p, nil
	}
	if uintptr(unsafe.Pointer(&mem[0]))%8 != 0 || len(mem)%8 != 0 {
		return nil, errors.Errorf("verbs: a pool of %d bytes at %p is not 8-byte aligned; atomics need aligned words", len(mem), &mem[0])
	}
	p.words = unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), len(mem)/8)
	return p, nil
}

// Bytes is the pool's memory.
func (p *Pool) Bytes() []byte { return p.bytes }

// Retire marks the pool gone: an endpoint of this process that still
// reaches it fails instead of touching freed memory.
func (p *Pool) Retire() { p.closed.Store(true) }

// Cluster is the shared memory of an in-process job: the MN pools, by MN id.
type Cluster struct {
	mu    sync.Mutex
	pools map[int]*Pool
}

// NewCluster returns an empty cluster.
func NewCluster() *Cluster { return &Cluster{pools: map[int]*Pool{}} }

// clusterMemory is one rank's view of a Cluster as its Memory.
type clusterMemory struct {
	c   *Cluster
	mn  int
	own *Pool
}

func (m *clusterMemory) Create(mn int, size uint64) (*Pool, []byte, error) {
	// The pool is Go memory: a size the machine cannot hold would end the
	// process (the runtime's out-of-memory is fatal), not fail.
	if ram := physMem(); ram > 0 && size > ram {
		return nil, nil, &PoolError{Bad: true, Msg: fmt.Sprintf("verbs: an in-process pool of %d bytes is more than this machine's memory (%d bytes); expected a smaller --mn-mem", size, ram)}
	}
	words := make([]uint64, size/8)
	var mem []byte
	if len(words) > 0 {
		mem = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	}
	p, err := NewPool(mem)
	if err != nil {
		return nil, nil, err
	}
	m.mn, m.own = mn, p
	m.c.mu.Lock()
	m.c.pools[mn] = p
	m.c.mu.Unlock()
	return p, nil, nil
}

func (m *clusterMemory) Attach(mn int, _ []byte, _ uint64) (*Pool, error) {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	if p := m.c.pools[mn]; p != nil {
		return p, nil
	}
	return nil, errors.Errorf("verbs: MN %d has no pool in the cluster; expected every MN to open the same memfab.Cluster", mn)
}

func (m *clusterMemory) Release() error {
	if m.own == nil {
		return nil
	}
	m.own.Retire()
	m.c.mu.Lock()
	if m.c.pools[m.mn] == m.own {
		delete(m.c.pools, m.mn)
	}
	m.c.mu.Unlock()
	return nil
}

func (m *clusterMemory) Provider() string { return "memfab" }

// GapBytes: an in-process operation costs a few hundred nanoseconds of
// bookkeeping, about a copy of 4 KiB.
func (m *clusterMemory) GapBytes() int { return 4 << 10 }

// failed, as a published pool size, says the MN could not create its pool;
// a flag byte (1: the user's input) and the error's text follow.
const failed = ^uint64(0)

func failedBlob(err error) []byte {
	b := binary.LittleEndian.AppendUint64(nil, failed)
	var in interface{ BadInput() bool }
	if errors.As(err, &in) && in.BadInput() {
		return append(append(b, 1), err.Error()...)
	}
	return append(append(b, 0), err.Error()...)
}

// PoolError is a pool that could not be made or reached: an MN's failure
// to create its pool as a CN learns it, or a Memory's own (package cxl).
type PoolError struct {
	Msg string
	Bad bool // the user's input (a directory too small, a missing device)
}

func (e *PoolError) Error() string { return e.Msg }

// BadInput says whether the cause is the user's input (exit status 2).
func (e *PoolError) BadInput() bool { return e.Bad }

// Network is one rank's load/store network.
type Network struct {
	mem   Memory
	world *spmd.World
	cfg   verbs.Config
	sizes []uint64
	own   *Pool   // this MN's pool, nil on a CN
	pools []*Pool // every MN's pool, by MN id (CN only)

	mu     sync.Mutex
	eps    map[*endpoint]struct{}
	closed bool
}

var _ verbs.Network = (*Network)(nil)

// Open opens the in-process network collectively over w (every rank calls
// it). On an MN it allocates a pool of cfg.PoolBytes (rounded up to 8).
func Open(c *Cluster, w *spmd.World, cfg verbs.Config) (*Network, error) {
	if c == nil {
		return nil, errors.New("verbs: memfab.Open needs a cluster")
	}
	return OpenMemory(&clusterMemory{c: c}, w, cfg)
}

// OpenMemory opens a load/store network over mem collectively over w: each
// MN creates its pool of cfg.PoolBytes (rounded up to 8), the MNs publish
// their sizes and names, and every CN attaches every MN's pool.
func OpenMemory(mem Memory, w *spmd.World, cfg verbs.Config) (*Network, error) {
	if mem == nil || w == nil {
		return nil, errors.New("verbs: memfab.OpenMemory needs a memory and a world")
	}
	cfg.EnsureDefaults()
	n := &Network{mem: mem, world: w, cfg: cfg, eps: map[*endpoint]struct{}{}}
	var blob []byte
	// A configuration only an MN's rank finds wrong (its pool size) is
	// published in the all-gather as a failed pool, never returned before
	// it: the ranks must not part ways in their collectives.
	cerr := cfg.Validate()
	if cerr != nil && w.Role == spmd.MN {
		blob = failedBlob(cerr)
	}
	if cerr == nil && w.Role == spmd.MN {
		size := (cfg.PoolBytes + 7) &^ 7
		var name []byte
		if n.own, name, cerr = mem.Create(w.Index, size); cerr == nil {
			blob = binary.LittleEndian.AppendUint64(nil, uint64(len(n.own.bytes)))
			blob = append(blob, name...)
		} else {
			blob = failedBlob(cerr)
		}
	}
	all, err := w.Comm.AllGather(blob)
	if err != nil {
		return nil, errors.Wrap(err, "verbs: exchanging pool sizes")
	}
	if cerr != nil {
		return nil, cerr
	}
	n.sizes = make([]uint64, w.Roles.MN)
	names := make([][]byte, w.Roles.MN)
	for mn := range n.sizes {
		b := all[w.Roles.RankOf(spmd.MN, mn)]
		if len(b) < 8 {
			return nil, errors.Errorf("verbs: %s sent %d bytes for its pool; expected a size of 8 bytes and a name (did it fail to create its pool?)", n.mnName(mn), len(b))
		}
		n.sizes[mn], names[mn] = binary.LittleEndian.Uint64(b), b[8:]
		if n.sizes[mn] == failed && w.Role == spmd.CN {
			pe := &PoolError{Msg: fmt.Sprintf("verbs: %s could not create its pool", n.mnName(mn))}
			if len(b) > 8 {
				pe.Msg, pe.Bad = pe.Msg+": "+string(b[9:]), b[8] == 1
			}
			return nil, pe
		}
	}
	if w.Role == spmd.CN {
		n.pools = make([]*Pool, len(n.sizes))
		for mn := range n.pools {
			p, err := mem.Attach(mn, names[mn], n.sizes[mn])
			if err != nil {
				_ = mem.Release()
				return nil, errors.Wrapf(err, "verbs: attaching the pool of %s", n.mnName(mn))
			}
			n.pools[mn] = p
		}
	}
	return n, nil
}

func (n *Network) NumMN() int { return len(n.sizes) }

func (n *Network) PoolSize(mn int) uint64 {
	if mn < 0 || mn >= len(n.sizes) {
		return 0
	}
	return n.sizes[mn]
}

func (n *Network) Check(a verbs.Addr, size int) error { return verbs.CheckRange(n.sizes, a, size) }

func (n *Network) Pool() []byte {
	if n.own == nil {
		return nil
	}
	return n.own.bytes
}

func (n *Network) Provider() string { return n.mem.Provider() }

// GapBytes is verbs.GapCost.
func (n *Network) GapBytes() int { return n.mem.GapBytes() }

// NewEndpoint creates an endpoint to every MN (CN only).
func (n *Network) NewEndpoint() (verbs.Endpoint, error) {
	if n.world.Role != spmd.CN {
		return nil, errors.Errorf("verbs: NewEndpoint on MN %d; expected a CN (only CNs post operations)", n.world.Index)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("verbs: NewEndpoint on a closed network")
	}
	ep := &endpoint{net: n, tally: verbs.NewTally(len(n.sizes)), batch: make([]verbs.Counters, len(n.sizes)), ops: make([]op, 0, 256)}
	n.eps[ep] = struct{}{}
	return ep, nil
}

// Close closes every endpoint and, after every rank has arrived
// (collective), releases this MN's pool.
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
	for ep := range eps {
		ep.close()
	}
	err := n.world.Comm.Barrier()
	if rerr := n.mem.Release(); err == nil {
		err = rerr
	}
	return errors.Wrap(err, "verbs: closing the network")
}

func (n *Network) mnName(mn int) string {
	return fmt.Sprintf("MN %d (rank %d)", mn, n.world.Roles.RankOf(spmd.MN, mn))
}
