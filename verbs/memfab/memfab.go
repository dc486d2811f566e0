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

// Cluster is the shared memory of an in-process job: the MN pools, by MN id.
type Cluster struct {
	mu    sync.Mutex
	pools map[int]*pool
}

// NewCluster returns an empty cluster.
func NewCluster() *Cluster { return &Cluster{pools: map[int]*pool{}} }

type pool struct {
	words  []uint64 // backing store, 8-byte aligned
	bytes  []byte   // the same memory as bytes
	closed atomic.Bool
}

func newPool(size uint64) *pool {
	words := make([]uint64, (size+7)/8)
	p := &pool{words: words}
	if len(words) > 0 {
		p.bytes = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	}
	return p
}

func (c *Cluster) put(mn int, p *pool) {
	c.mu.Lock()
	c.pools[mn] = p
	c.mu.Unlock()
}

func (c *Cluster) get(mn int) *pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pools[mn]
}

func (c *Cluster) drop(mn int, p *pool) {
	c.mu.Lock()
	if c.pools[mn] == p {
		delete(c.pools, mn)
	}
	c.mu.Unlock()
}

// Network is one rank's in-process network.
type Network struct {
	cluster *Cluster
	world   *spmd.World
	cfg     verbs.Config
	sizes   []uint64
	own     *pool   // this MN's pool, nil on a CN
	pools   []*pool // every MN's pool, by MN id (CN only)

	mu     sync.Mutex
	eps    map[*endpoint]struct{}
	closed bool
}

var _ verbs.Network = (*Network)(nil)

// Open opens the network collectively over w (every rank calls it). On an
// MN it allocates a pool of cfg.PoolBytes (rounded up to 8).
func Open(c *Cluster, w *spmd.World, cfg verbs.Config) (*Network, error) {
	if c == nil || w == nil {
		return nil, errors.New("verbs: memfab.Open needs a cluster and a world")
	}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Network{cluster: c, world: w, cfg: cfg, eps: map[*endpoint]struct{}{}}
	var blob [8]byte
	if w.Role == spmd.MN {
		n.own = newPool(cfg.PoolBytes)
		c.put(w.Index, n.own)
		binary.LittleEndian.PutUint64(blob[:], uint64(len(n.own.bytes)))
	}
	all, err := w.Comm.AllGather(blob[:])
	if err != nil {
		return nil, errors.Wrap(err, "verbs: exchanging pool sizes")
	}
	n.sizes = make([]uint64, w.Roles.MN)
	for mn := range n.sizes {
		b := all[w.Roles.RankOf(spmd.MN, mn)]
		if len(b) != 8 {
			return nil, errors.Errorf("verbs: MN %d sent a %d-byte pool size; expected 8 bytes", mn, len(b))
		}
		n.sizes[mn] = binary.LittleEndian.Uint64(b)
	}
	if w.Role == spmd.CN {
		n.pools = make([]*pool, len(n.sizes))
		for mn := range n.pools {
			if n.pools[mn] = c.get(mn); n.pools[mn] == nil {
				return nil, errors.Errorf("verbs: MN %d (rank %d) has no pool in the cluster; expected every MN to open the same memfab.Cluster",
					mn, w.Roles.RankOf(spmd.MN, mn))
			}
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

func (n *Network) Provider() string { return "memfab" }

// GapBytes is verbs.GapCost: an in-process operation costs a few hundred
// nanoseconds of bookkeeping, about a copy of 4 KiB.
func (n *Network) GapBytes() int { return 4 << 10 }

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
	if n.own != nil {
		n.own.closed.Store(true)
		n.cluster.drop(n.world.Index, n.own)
	}
	return errors.Wrap(err, "verbs: closing the network")
}

func (n *Network) mnName(mn int) string {
	return fmt.Sprintf("MN %d (rank %d)", mn, n.world.Roles.RankOf(spmd.MN, mn))
}
