package spmd

import (
	"github.com/pkg/errors"
)

// World is one rank's view of a started job: the world communicator, its
// role, and the communicator of the ranks sharing that role.
type World struct {
	Runtime
	Comm  Comm  // every rank
	Roles Roles // the layout
	Role  Role  // this rank's role
	Index int   // index within the role: CN i or MN i
	Group Comm  // the ranks of this rank's role, in world order
}

// NewWorld checks roles against the runtime's world size and builds the
// role communicators. It is collective over the world. A layout mismatch is
// detected identically on every rank, so every rank returns the same error
// and the caller may print it on rank 0 only.
func NewWorld(rt Runtime, roles Roles) (*World, error) {
	comm := rt.World()
	if err := roles.Check(comm.Size()); err != nil {
		return nil, err
	}
	role, idx := roles.Of(comm.Rank())
	group, err := comm.Split(int(role))
	if err != nil {
		return nil, errors.Wrap(err, "spmd: splitting role communicators")
	}
	return &World{Runtime: rt, Comm: comm, Roles: roles, Role: role, Index: idx, Group: group}, nil
}

// Rank is this process's world rank.
func (w *World) Rank() int { return w.Comm.Rank() }
