package spmd

import (
	"github.com/pkg/errors"
)

// Op is a reduction operator for the small all-reductions of the control
// path (active-vertex counts, dangling mass, convergence checks).
type Op int

const (
	Sum Op = iota
	Min
	Max
)

func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Min:
		return "min"
	case Max:
		return "max"
	}
	return "op?"
}

// ErrAborted is returned by a collective that was interrupted because some
// rank of the job aborted it.
var ErrAborted = errors.New("spmd: job aborted by another rank")

// Comm is a communicator: a fixed, ordered group of ranks that take part in
// collectives together. Every method is collective (all ranks of the group
// call it in the same order) except Rank and Size. Implementations are safe
// for use by one goroutine per rank at a time; callers serialise collectives.
//
// Comm carries control traffic only: no graph data or vertex attribute is
// ever sent through it (DESIGN.md §2).
type Comm interface {
	// Rank is this process's index in the group, 0 ≤ Rank < Size.
	Rank() int
	// Size is the number of ranks in the group.
	Size() int
	// Barrier returns once every rank of the group has entered it.
	Barrier() error
	// AllGather contributes blob (any length, including zero) and returns
	// every rank's blob indexed by rank. The returned slices are fresh.
	AllGather(blob []byte) ([][]byte, error)
	// Bcast returns root's blob on every rank; blob is ignored elsewhere.
	Bcast(root int, blob []byte) ([]byte, error)
	// AllReduceInt64 reduces vals element-wise across the group, in place.
	// Every rank passes the same length.
	AllReduceInt64(vals []int64, op Op) error
	// AllReduceFloat64 reduces vals element-wise across the group, in place.
	AllReduceFloat64(vals []float64, op Op) error
	// Split partitions the group by color (collective); ranks keep their
	// relative order. It returns the sub-communicator holding this rank.
	Split(color int) (Comm, error)
}

// Runtime is the process-level side of a job: how it started, how it ends.
type Runtime interface {
	// World is the communicator of every rank of the job.
	World() Comm
	// Abort ends every rank of the job promptly with the given exit code.
	// It is for errors that only some ranks see; it does not return in the
	// MPI runtime, and in the in-process runtime it makes every blocked
	// collective return ErrAborted.
	Abort(code int)
	// Finalize shuts the runtime down cleanly (collective).
	Finalize() error
	// Library names the message-passing library ("Open MPI v4.1.4, ..." or
	// "in-process").
	Library() string
}
