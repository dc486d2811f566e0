package job

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// Pool is a served pool (`dmg serve`) that a job of compute nodes alone
// works on (Config.Pool): a load writes a graph into it under a name, a
// run computes on a graph loaded there before, without its input.
type Pool struct {
	// Net is the network onto the pool's MNs (fabric.Attach), opened and
	// closed by the caller.
	Net verbs.Network
	// Client is the catalogue's client, on world rank 0 (nil elsewhere),
	// on an endpoint of its own.
	Client *pool.Client
	// Name is the graph's name in the catalogue.
	Name string
	// Wait is how long a run waits while a writer (a drop) holds the
	// graph's lease (0: it fails at once, naming the holder). Runs do not
	// wait for each other: they read a graph together; only a run of a
	// compute-node count the pool has no cut for waits for another run's
	// cut of that count, while that run lives, rather than cut it twice.
	Wait time.Duration
	// OnSignal, if set, is given what a run holds in the pool (the
	// graph's lease, on rank 0) and how to give it back, for when the job
	// is ended by a signal: undo runs on a goroutine of its own, once.
	OnSignal func(what string, undo func() error)
	// Checkpointing is what a run keeps of itself in the pool, and
	// whether it continues an unfinished one.
	Checkpointing Checkpointing
}

// lockWait bounds how long a job waits for the catalogue's lock, which
// its holders keep for a few small one-sided operations (a dead holder's
// lock is broken after pool.StaleAfter).
const lockWait = 2 * pool.StaleAfter

// stored is what a served pool keeps of a loaded graph, in its aux
// extent: what a later job needs to compute on it without its input.
type stored struct {
	Graph   string      // the input as given to the load
	Csr     csr.Options // how it was read
	Meta    csr.Meta
	Layouts layouts
	// Vertices, Edges and MaxChunkEdges are the job shape's.
	Vertices, Edges, MaxChunkEdges uint64
	Symmetric, Directed            bool
	// Top is the vertex with the most out-edges (a source's default).
	Top uint32
	// CNs is the compute nodes of the load: its chunks.
	CNs int
	// IDs says the external ids are a table in the aux extent (else the
	// identity).
	IDs bool
}

// The aux extent of a stored graph: the descriptor's length and offset,
// the out-degrees (4 bytes per vertex), the external ids (8 bytes per
// vertex, when not the identity), then the descriptor (gob).
const auxDegrees = 64

func auxIDs(n uint64) uint64 { return alignUp(auxDegrees+4*n, 64) }

func auxDesc(n uint64, ids bool) uint64 {
	if !ids {
		return auxIDs(n)
	}
	return auxIDs(n) + 8*n
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// poolLoad is a load's side of the catalogue, on rank 0: the graph's slot,
// claimed before the read and made ready after the load, and its lease.
type poolLoad struct {
	p     *Pool
	slot  int
	s     pool.Slot
	alive func() error
	done  bool
	// view: the slot is another cut of a graph the pool holds (its name
	// is taken), for a job of another compute-node count; the run that
	// cut it reads it once it is ready (poolRun.swap).
	view bool
}

// claim reserves the graph's name in the catalogue (rank 0): a slot in
// state Loading, held by this job's lease.
func (pl *poolLoad) claim(w *spmd.World) error {
	c := pl.p.Client
	if c == nil {
		return nil
	}
	err := pl.update(func(c *pool.Client) error {
		if _, s, ok, err := c.Find(pl.p.Name); err != nil {
			return err
		} else if ok && !pl.view {
			return &rank.ParamError{Msg: fmt.Sprintf("graph %q is already in the pool (%s, %s edges); drop it first with `dmg ls --pool-file PATH --drop %s`",
				pl.p.Name, s.State, humanize.Comma(int64(s.Edges)), pl.p.Name)}
		}
		return pl.take(c, w.Roles.CN)
	})
	if err != nil {
		return err
	}
	return pl.keep()
}

// take chooses the slot and what it will record, Loading under this
// client's lease, for a graph cut for cns CNs (under the catalogue's
// lock; the caller writes it).
func (pl *poolLoad) take(c *pool.Client, cns int) error {
	i, err := c.FreeSlot()
	if err != nil {
		return err
	}
	now := uint64(time.Now().UnixMilli())
	pl.slot = i
	pl.s = pool.Slot{State: pool.Loading, Lease: c.ID(), Beat: now, Created: now, Name: pl.p.Name, Graph: -1, CNs: cns}
	return nil
}

// keep renews the claimed slot's lease until the load is ready.
func (pl *poolLoad) keep() error {
	ep, err := pl.p.Net.NewEndpoint()
	if err != nil {
		return err
	}
	pl.alive = pool.KeepAlive(ep, pl.slot, pl.p.Client.ID(), pool.BeatEvery)
	return nil
}

// place allocates the graph's extents (sizes per MN) and records them in
// its slot; every CN learns the bases.
func (pl *poolLoad) place(w *spmd.World, needed []uint64) ([]uint64, error) {
	base := make([]uint64, len(needed))
	err := pl.update(func(c *pool.Client) error {
		ext, err := c.Alloc(needed)
		for m, e := range ext {
			base[m] = e.Off
		}
		pl.s.Ext = ext
		return err
	})
	return base, bcastWords(w, base, err)
}

// update changes the graph's slot under the catalogue's lock (rank 0;
// nothing elsewhere): f allocates or sets what pl.s records, which is
// then written whole.
func (pl *poolLoad) update(f func(c *pool.Client) error) error {
	c := pl.p.Client
	if c == nil {
		return nil
	}
	if err := c.Lock(lockWait); err != nil {
		return err
	}
	defer c.Unlock()
	if err := f(c); err != nil {
		return err
	}
	return c.Put(pl.slot, pl.s)
}

// placeAux allocates the aux extent of n bytes; every CN learns it.
func (pl *poolLoad) placeAux(w *spmd.World, n uint64) (pool.Extent, error) {
	v := []uint64{0, 0}
	err := pl.update(func(c *pool.Client) error {
		e, err := c.AllocAux(n)
		pl.s.Aux = e
		v[0], v[1] = uint64(e.MN), e.Off
		return err
	})
	err = bcastWords(w, v, err)
	return pool.Extent{MN: int(v[0]), Off: v[1], Len: n}, err
}

// ready marks the graph complete and gives up the lease (rank 0).
func (pl *poolLoad) ready(vertices, edges uint64) error {
	c := pl.p.Client
	if c == nil {
		return nil
	}
	if err := pl.alive(); err != nil {
		return err
	}
	pl.alive = nil
	pl.s.Lease = 0
	err := pl.update(func(*pool.Client) error {
		pl.s.State, pl.s.Vertices, pl.s.Edges = pool.Ready, vertices, edges
		return nil
	})
	pl.done = err == nil
	return err
}

// abandon frees the slot of a load that failed (rank 0, best effort: a
// slot left behind is freed once its lease is stale).
func (pl *poolLoad) abandon() {
	c := pl.p.Client
	if c == nil || pl.done || pl.alive == nil && pl.s.State == pool.Free {
		return
	}
	pl.done = true // once: the slot may be another's after the drop
	if pl.alive != nil {
		pl.alive()
	}
	if c.Lock(lockWait) == nil {
		c.Drop(pl.slot)
		c.Unlock()
	}
}

// writeAux writes this CN's degrees into the aux extent and, on rank 0,
// the ids and the descriptor.
func writeAux(w *spmd.World, ep verbs.Endpoint, aux pool.Extent, lo uint32, degrees []uint32, ids []uint64, desc []byte, descAt uint64) error {
	at := func(off uint64) verbs.Addr { a, _ := verbs.MakeAddr(aux.MN, aux.Off+off); return a }
	buf := make([]byte, 4*len(degrees))
	for i, d := range degrees {
		binary.LittleEndian.PutUint32(buf[4*i:], d)
	}
	if err := verbs.WriteBulk(ep, at(auxDegrees+4*uint64(lo)), buf); err != nil {
		return err
	}
	if w.Rank() != 0 {
		return nil
	}
	n := uint64(0)
	if ids != nil {
		n = uint64(len(ids))
		b := make([]byte, 8*len(ids))
		for i, x := range ids {
			binary.LittleEndian.PutUint64(b[8*i:], x)
		}
		if err := verbs.WriteBulk(ep, at(auxIDs(n)), b); err != nil {
			return err
		}
	}
	if err := verbs.WriteBulk(ep, at(descAt), desc); err != nil {
		return err
	}
	head := binary.LittleEndian.AppendUint64(nil, uint64(len(desc)))
	head = binary.LittleEndian.AppendUint64(head, descAt)
	return verbs.WriteBulk(ep, at(0), head)
}

// encodeStored is the descriptor's bytes.
func encodeStored(s *stored) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return nil, errors.Wrap(err, "job: encoding the stored graph's descriptor")
	}
	return buf.Bytes(), nil
}

// bcastWords sends rank 0's words to every rank, with rank 0's error:
// every rank returns it.
func bcastWords(w *spmd.World, v []uint64, err error) error {
	blob := []byte{1}
	if w.Rank() == 0 {
		if err != nil {
			blob = append([]byte{0}, err.Error()...)
		} else {
			blob = []byte{1}
			for _, x := range v {
				blob = binary.LittleEndian.AppendUint64(blob, x)
			}
		}
	}
	got, berr := w.Comm.Bcast(0, blob)
	if berr != nil {
		return berr
	}
	if w.Rank() == 0 {
		return err
	}
	if len(got) == 0 || got[0] == 0 {
		return errors.Errorf("job: rank 0: %s", got[min(1, len(got)):])
	}
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(got[1+8*i:])
	}
	return nil
}

// store writes what later jobs need besides the layouts' data: every
// CN's out-degrees and, from rank 0, the external ids and the descriptor,
// into an aux extent it allocates.
func (pl *poolLoad) store(w *spmd.World, ep verbs.Endpoint, st *stored, out *Outcome, degrees []uint32) (pool.Extent, error) {
	var desc []byte
	var ids []uint64
	var err error
	size := uint64(0)
	if w.Rank() == 0 {
		st.Meta, st.Directed = *out.Meta, out.Graph.Directed
		ids = out.Graph.IDs
		st.IDs = ids != nil
		if desc, err = encodeStored(st); err == nil {
			size = auxDesc(st.Vertices, st.IDs) + uint64(len(desc))
		}
	}
	if err := bcastWords(w, []uint64{0}, err); err != nil {
		return pool.Extent{}, err
	}
	aux, err := pl.placeAux(w, size)
	if err != nil {
		return aux, err
	}
	lo := st.Layouts.Out.Config.Bounds[w.Index]
	return aux, writeAux(w, ep, aux, lo, degrees, ids, desc, auxDesc(st.Vertices, st.IDs))
}
