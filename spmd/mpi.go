//go:build !nompi

package spmd

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int dmg_mpi_version(char *buf, int cap) {
	int len = 0;
	if (cap < MPI_MAX_LIBRARY_VERSION_STRING) return -1;
	MPI_Get_library_version(buf, &len);
	return len;
}
static int dmg_mpi_max_version(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }
*/
import "C"

import (
	"encoding/binary"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/pkg/errors"
	mpi "github.com/sbromberger/gompi"
)

// mpiRuntime is the process-level MPI runtime (gompi over Open MPI).
type mpiRuntime struct {
	mu    *sync.Mutex // serialises collectives issued by this process
	world *mpiComm
}

// mpiComm wraps a gompi communicator.
type mpiComm struct {
	mu    *sync.Mutex
	c     *mpi.Communicator
	rank  int
	size  int
	world bool
}

var (
	_ Comm    = (*mpiComm)(nil)
	_ Runtime = (*mpiRuntime)(nil)
)

// StartMPI initialises MPI with MPI_THREAD_MULTIPLE and returns the runtime.
// Call it once per process, then Finalize.
func StartMPI() (Runtime, error) {
	if mpi.IsOn() {
		return nil, errors.New("spmd: MPI is already initialised in this process")
	}
	// Open MPI busy-polls in blocking collectives by default; with more
	// ranks than cores that starves the memory nodes' fabric progress
	// threads (remote atomics fall from ~500k/s to ~300/s on shm). Yield
	// instead, unless the user chose otherwise.
	if _, set := os.LookupEnv("OMPI_MCA_mpi_yield_when_idle"); !set {
		os.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	}
	mpi.Start(true)
	mu := &sync.Mutex{}
	w := mpi.NewCommunicator(nil)
	return &mpiRuntime{mu: mu, world: &mpiComm{mu: mu, c: w, rank: w.Rank(), size: w.Size(), world: true}}, nil
}

func (r *mpiRuntime) World() Comm { return r.world }

func (r *mpiRuntime) Abort(code int) {
	// MPI_Abort asks the launcher to end every rank, and does not return
	// until it has: across a cut link the launcher may never reach this
	// rank's daemon, or the others'. This process ends itself after
	// abortGrace whatever the launcher does.
	time.AfterFunc(abortGrace, func() { os.Exit(code) })
	// MPI_Abort must not be serialised behind a collective that may never
	// complete, so it bypasses the mutex.
	r.world.c.Abort(code)
}

// abortGrace is how long MPI_Abort has to end this process.
const abortGrace = 3 * time.Second

func (r *mpiRuntime) Finalize() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	mpi.Stop()
	return nil
}

func (r *mpiRuntime) Library() string {
	n := int(C.dmg_mpi_max_version())
	buf := (*C.char)(C.malloc(C.size_t(n)))
	defer C.free(unsafe.Pointer(buf))
	l := C.dmg_mpi_version(buf, C.int(n))
	if l < 0 {
		return "MPI (version unknown)"
	}
	s := C.GoStringN(buf, l)
	s = strings.TrimRight(s, "\x00\n ")
	if i := strings.IndexByte(s, ','); i > 0 {
		s = s[:i]
	}
	return s
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

func (c *mpiComm) Barrier() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.c.Barrier()
	return nil
}

// allreduceU64 runs an element-wise sum over uint64 words. gompi must never
// see an empty slice, so callers pad to one word.
func (c *mpiComm) allreduceU64(words []uint64) ([]uint64, error) {
	if len(words) == 0 {
		words = []uint64{0}
	}
	out := make([]uint64, len(words))
	if err := c.c.AllreduceUint64s(out, words, mpi.OpSum, 0); err != nil {
		return nil, errors.Wrap(err, "spmd: allreduce")
	}
	return out, nil
}

// AllGather is built from two sum-allreduces (gompi v0.2.0 has no
// allgather and its byte broadcast is mistyped): first every rank's length,
// then every rank's blob placed in its own slot of a zeroed word array. It
// is meant for small blobs (endpoint addresses, keys).
func (c *mpiComm) AllGather(blob []byte) ([][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lens := make([]uint64, c.size)
	lens[c.rank] = uint64(len(blob))
	lens, err := c.allreduceU64(lens)
	if err != nil {
		return nil, err
	}
	offs := make([]int, c.size+1) // word offsets
	for i, l := range lens {
		offs[i+1] = offs[i] + int((l+7)/8)
	}
	words := make([]uint64, offs[c.size])
	padded := make([]byte, (len(blob)+7)/8*8)
	copy(padded, blob)
	for i := 0; i < len(padded)/8; i++ {
		words[offs[c.rank]+i] = binary.LittleEndian.Uint64(padded[8*i:])
	}
	words, err = c.allreduceU64(words)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, c.size)
	for r := range out {
		b := make([]byte, (offs[r+1]-offs[r])*8)
		for i := range offs[r+1] - offs[r] {
			binary.LittleEndian.PutUint64(b[8*i:], words[offs[r]+i])
		}
		out[r] = b[:lens[r]]
	}
	return out, nil
}

func (c *mpiComm) Bcast(root int, blob []byte) ([]byte, error) {
	if root < 0 || root >= c.size {
		return nil, errors.Errorf("spmd: bcast root %d out of range [0,%d)", root, c.size)
	}
	if c.rank != root {
		blob = nil
	}
	all, err := c.AllGather(blob)
	if err != nil {
		return nil, err
	}
	return all[root], nil
}

func mpiOp(op Op) mpi.Op {
	switch op {
	case Min:
		return mpi.OpMin
	case Max:
		return mpi.OpMax
	}
	return mpi.OpSum
}

func (c *mpiComm) AllReduceInt64(vals []int64, op Op) error {
	if len(vals) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int64, len(vals))
	if err := c.c.AllreduceInt64s(out, vals, mpiOp(op), 0); err != nil {
		return errors.Wrap(err, "spmd: allreduce")
	}
	copy(vals, out)
	return nil
}

func (c *mpiComm) AllReduceFloat64(vals []float64, op Op) error {
	if len(vals) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]float64, len(vals))
	if err := c.c.AllreduceFloat64s(out, vals, mpiOp(op), 0); err != nil {
		return errors.Wrap(err, "spmd: allreduce")
	}
	copy(vals, out)
	return nil
}

// Split is supported on the world communicator (gompi creates groups from
// world ranks only), which is all DMG needs: one communicator per role.
func (c *mpiComm) Split(color int) (Comm, error) {
	if !c.world {
		return nil, errors.New("spmd: Split is only supported on the world communicator")
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(int64(color)))
	all, err := c.AllGather(b[:])
	if err != nil {
		return nil, err
	}
	byColor := map[int64][]int{}
	for r, v := range all {
		col := int64(binary.LittleEndian.Uint64(v))
		byColor[col] = append(byColor[col], r)
	}
	colors := make([]int64, 0, len(byColor))
	for col := range byColor {
		colors = append(colors, col)
	}
	sort.Slice(colors, func(i, j int) bool { return colors[i] < colors[j] })
	var mine *mpiComm
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, col := range colors {
		ranks := byColor[col]
		sub := mpi.NewCommunicator(ranks) // collective over world
		if col == int64(color) {
			mine = &mpiComm{mu: c.mu, c: sub, rank: sort.SearchInts(ranks, c.rank), size: len(ranks)}
		}
	}
	return mine, nil
}
