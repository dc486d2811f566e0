//go:build !nompi

package spmd

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

static int dmg_mpi_version(char *buf, int cap) {
	int len = 0;
	if (cap < MPI_MAX_LIBRARY_VERSION_STRING) return -1;
	MPI_Get_library_version(buf, &len);
	return len;
}
static int dmg_mpi_max_version(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }

// dmg_wait completes a non-blocking collective: MPI_Test at once (Open
// MPI's progress, which yields the core when idle), for 200 µs, then
// between sleeps that grow with the wait to 100 µs, so a rank that waits
// long (a memory node through a compute nodes' iteration) costs almost
// no CPU, and a rank that arrives last waits at most about a sleep more.
static int dmg_wait(MPI_Request *r) {
	static __thread int slack_set;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int done = 0;
		int rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS || done) return rc;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long waited = (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec);
		if (waited < 200000) continue;
		if (!slack_set) { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); slack_set = 1; }
		long ns = waited / 16;
		struct timespec nap = {0, ns < 100000 ? ns : 100000};
		nanosleep(&nap, NULL);
	}
}

// dmg_allreduce is MPI_Allreduce on the world communicator, waited for
// by dmg_wait: of doubles (dbl) or int64s, summed (op 0), or their
// minimum (1) or maximum (2), as spmd.Op numbers them.
static int dmg_allreduce(const void *in, void *out, int n, int dbl, int op) {
	MPI_Op o = op == 1 ? MPI_MIN : op == 2 ? MPI_MAX : MPI_SUM;
	MPI_Request r;
	int rc = MPI_Iallreduce(in, out, n, dbl ? MPI_DOUBLE : MPI_INT64_T, o, MPI_COMM_WORLD, &r);
	return rc != MPI_SUCCESS ? rc : dmg_wait(&r);
}

// dmg_barrier is MPI_Barrier on the world communicator, waited for by
// dmg_wait.
static int dmg_barrier(void) {
	MPI_Request r;
	int rc = MPI_Ibarrier(MPI_COMM_WORLD, &r);
	return rc != MPI_SUCCESS ? rc : dmg_wait(&r);
}
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
	if c.world {
		return mpiErr(C.dmg_barrier(), "barrier")
	}
	c.c.Barrier()
	return nil
}

// The world communicator's barrier and all-reduces (the engine's phase
// boundaries, which a memory node waits in for a whole iteration) are
// non-blocking collectives completed by dmg_wait, which sleeps through a
// long wait: Open MPI's blocking ones poll and yield, and a memory node
// polling beside the compute nodes on their cores took up to a third of
// a core from them (0.2 of 0.3 s of MN CPU in a 0.5 s kron:20 WCC on one
// host, perf). Other communicators use gompi's blocking calls.

// mpiErr turns an MPI return code into an error.
func mpiErr(rc C.int, what string) error {
	if rc != C.MPI_SUCCESS {
		return errors.Errorf("spmd: %s: MPI error %d", what, int(rc))
	}
	return nil
}

// allreduceWorld all-reduces n words of in into out on the world
// communicator: doubles, or int64s.
func allreduceWorld[T float64 | int64](out, in []T, op Op) error {
	_, dbl := any(in[0]).(float64)
	return mpiErr(C.dmg_allreduce(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), C.int(len(in)), cbool(dbl), C.int(op)), "allreduce")
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
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
	return allreduce(c, vals, op, c.c.AllreduceInt64s)
}

func (c *mpiComm) AllReduceFloat64(vals []float64, op Op) error {
	return allreduce(c, vals, op, c.c.AllreduceFloat64s)
}

// allreduce reduces vals in place across c: on the world communicator by
// allreduceWorld, on others by gompi's blocking call for T.
func allreduce[T float64 | int64](c *mpiComm, vals []T, op Op, blocking func(out, in []T, op mpi.Op, root int) error) error {
	if len(vals) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]T, len(vals))
	if c.world {
		if err := allreduceWorld(out, vals, op); err != nil {
			return err
		}
	} else if err := blocking(out, vals, mpiOp(op), 0); err != nil {
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
