package job

import (
	"fmt"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// stage is csr.Stage over the job: its steps are all-gathers over the
// world (MPI: a few bytes per CN, never edges), each of its staging
// memories (one, and a second when the vertices outnumber what the
// first was sized for) a network of its own, opened for the read and
// closed once the shares are loaded, whose pools the MNs hold besides the
// store's.
type stage struct {
	w    *spmd.World
	open func(verbs.Config) (verbs.Network, error)
	mems []*stageMem
	most uint64 // the most bytes open at once
}

// stageMem is one staging memory: a network whose pools stripe its
// bytes over the MNs.
type stageMem struct {
	w     *spmd.World
	net   verbs.Network
	eps   chan verbs.Endpoint
	all   []verbs.Endpoint
	bytes uint64 // its size (Open)
}

// bytes is the size of the staging memories open.
func (s *stage) bytes() uint64 {
	var n uint64
	for _, m := range s.mems {
		n += m.bytes
	}
	return n
}

// stageUnit is the striping of the staging memory: its bytes go to the
// MNs in turn, stageUnit at a time, so every CN's region spreads over
// every MN.
const stageUnit = 1 << 20

// stageEndpoints is how many endpoints a CN stages through: one, as
// csr's staged read writes and reads from one goroutine at a time (and
// an endpoint costs 40-80 ms to open on shm here).
const stageEndpoints = 1

func (s *stage) Step(err error, payload []byte) ([][]byte, error) {
	all, err := exchange(s.w.Comm, err, payload, "a step", func(r int) string {
		role, i := s.w.Roles.Of(r)
		return fmt.Sprintf("rank %d (%s %d)", r, role, i)
	})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, s.w.Roles.CN)
	for c := range out {
		out[c] = all[s.w.Roles.RankOf(spmd.CN, c)]
	}
	return out, nil
}

// Round is a Step of the CNs only (their role's communicator).
func (s *stage) Round(err error, payload []byte) ([][]byte, error) {
	return exchange(s.w.Group, err, payload, "a round", func(r int) string { return fmt.Sprintf("CN %d", r) })
}

// exchange is spmd.Exchange over c for the staged read's step what: a
// peer's error names the peer (who names rank r of c), an error of the
// exchange itself says what failed, and this rank's own err comes back
// as it is.
func exchange(c spmd.Comm, err error, payload []byte, what string, who func(r int) string) ([][]byte, error) {
	all, xerr := spmd.Exchange(c, err, payload)
	var pe *spmd.PeerError
	switch {
	case errors.As(xerr, &pe):
		return nil, errors.Errorf("job: %s failed: %s", who(pe.Rank), pe.Msg)
	case xerr != nil && xerr != err:
		return nil, errors.Wrapf(xerr, "job: %s of the staged read", what)
	case xerr != nil:
		return nil, xerr
	}
	return all, nil
}

func (s *stage) Open(bytes uint64) (csr.Staging, error) {
	m := uint64(s.w.Roles.MN)
	units := (bytes + stageUnit - 1) / stageUnit
	pool := uint64(0)
	if s.w.Role == spmd.MN {
		pool = (units + m - 1) / m * stageUnit
	}
	net, err := s.open(verbs.Config{PoolBytes: pool})
	if err != nil {
		return nil, err
	}
	mem := &stageMem{w: s.w, net: net, bytes: bytes}
	s.mems = append(s.mems, mem)
	s.most = max(s.most, s.bytes())
	if s.w.Role != spmd.CN {
		return mem, nil
	}
	mem.eps = make(chan verbs.Endpoint, stageEndpoints)
	for range stageEndpoints {
		ep, err := net.NewEndpoint()
		if err != nil {
			return nil, err
		}
		mem.all = append(mem.all, ep)
		mem.eps <- ep
	}
	return mem, nil
}

// each calls f for the pieces of [off, off+n) on the MNs, in order: at
// is where a piece is, [a, b) which bytes of the n.
func (s *stageMem) each(off uint64, n int, f func(at verbs.Addr, a, b int) error) error {
	m := uint64(s.w.Roles.MN)
	for done := 0; done < n; {
		u, in := off/stageUnit, off%stageUnit
		k := min(n-done, int(stageUnit-in))
		at, err := verbs.MakeAddr(int(u%m), u/m*stageUnit+in)
		if err == nil {
			err = f(at, done, done+k)
		}
		if err != nil {
			return err
		}
		off, done = off+uint64(k), done+k
	}
	return nil
}

func (s *stageMem) Write(off uint64, b []byte) error {
	ep := <-s.eps
	defer func() { s.eps <- ep }()
	if err := s.each(off, len(b), func(at verbs.Addr, x, y int) error { return ep.Write(at, b[x:y]) }); err != nil {
		return err
	}
	return ep.Flush()
}

func (s *stageMem) Read(b []byte, off uint64) error {
	ep := <-s.eps
	defer func() { s.eps <- ep }()
	if err := s.each(off, len(b), func(at verbs.Addr, x, y int) error { return ep.Read(b[x:y], at) }); err != nil {
		return err
	}
	return ep.Flush()
}

// Close closes one staging memory, collectively, before the others.
func (s *stage) Close(mem csr.Staging) error {
	for i, m := range s.mems {
		if csr.Staging(m) == mem {
			s.mems = append(s.mems[:i], s.mems[i+1:]...)
			return m.close()
		}
	}
	return errors.New("job: closing a staging memory not open")
}

// close closes the staging memories (collectively, those opened), the
// last opened first.
func (s *stage) close() error {
	if s == nil {
		return nil
	}
	var first error
	for i := len(s.mems) - 1; i >= 0; i-- {
		if err := s.mems[i].close(); err != nil && first == nil {
			first = err
		}
	}
	s.mems = nil
	return first
}

// close closes the memory's endpoints and its network.
func (m *stageMem) close() error {
	for _, ep := range m.all {
		ep.Close()
	}
	return m.net.Close()
}
