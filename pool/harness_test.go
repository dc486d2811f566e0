package pool

import (
	"time"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

const testToken = 0x5eed

// env is what a test's CN sees: a network, an endpoint and the pool file.
type env struct {
	net  verbs.Network
	ep   verbs.Endpoint
	file *File
}

// connect returns a client on a new endpoint of e.net.
func (e *env) connect() (*Client, error) {
	ep, err := e.net.NewEndpoint()
	if err != nil {
		return nil, err
	}
	return Connect(ep, e.file, "test.pool")
}

// run serves a pool of numMN MNs of poolBytes each, initialised as `dmg
// serve` does and then changed by setup (run on each MN's own pool), and
// runs cn on one CN. after runs on each MN once the CN is done.
func run(numMN int, poolBytes uint64, setup func(mn int, pool []byte), cn func(e *env) error, after func(mn int, pool []byte) error) error {
	cluster := memfab.NewCluster()
	roles := spmd.Roles{CN: 1, MN: numMN}
	return spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, roles)
		if err != nil {
			return err
		}
		net, err := memfab.Open(cluster, w, verbs.Config{PoolBytes: poolBytes})
		if err != nil {
			return err
		}
		if w.Role == spmd.MN {
			p := net.Pool()
			if err := CheckPool(p); err != nil {
				return err
			}
			InitHeader(p, testToken, w.Index, numMN)
			if w.Index == 0 {
				InitCatalogue(p)
			}
			if setup != nil {
				setup(w.Index, p)
			}
			if err := w.Comm.Barrier(); err != nil {
				return err
			}
			if err := w.Comm.Barrier(); err != nil {
				return err
			}
			if after != nil {
				if err := after(w.Index, p); err != nil {
					return err
				}
			}
			return net.Close()
		}
		if err := w.Comm.Barrier(); err != nil {
			return err
		}
		f := &File{Version: FileVersion, Token: testToken, Provider: "memfab", Created: time.Now()}
		for m := range numMN {
			f.MNs = append(f.MNs, MN{Host: "localhost", Size: net.PoolSize(m), Name: []byte{byte(m + 1)}})
		}
		ep, err := net.NewEndpoint()
		if err != nil {
			return err
		}
		if err := cn(&env{net: net, ep: ep, file: f}); err != nil {
			return errors.WithStack(err)
		}
		if err := w.Comm.Barrier(); err != nil {
			return err
		}
		return net.Close()
	})
}

// client connects a client over e's endpoint.
func (e *env) client() (*Client, error) { return Connect(e.ep, e.file, "test.pool") }

func unsafeBytes(w []uint64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), len(w)*8) }
