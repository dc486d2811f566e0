package job

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// Checkpointing is what a run on a served pool keeps of itself so that a
// later run continues it (Pool.Checkpointing).
type Checkpointing struct {
	// Off: the run keeps nothing (--no-checkpoint).
	Off bool
	// Every: a checkpoint every that many iterations; 0 chooses by the
	// traffic (rank.Cadence).
	Every int
	// Resume continues the newest unfinished run of the same graph,
	// kernel and parameters (--resume); without one the run fails.
	Resume bool
}

// poolCkpt is a run's checkpoint in a served pool, on every rank: the
// catalogue slot and region it has on rank 0's word, and the epoch its
// last checkpoint wrote. It is the engine's Checkpointer and, for a
// resumed run, its Restorer.
type poolCkpt struct {
	key    pool.CkptKey
	slot   int
	region pool.Extent
	n      uint64 // vertices
	all    bool   // every vertex is active: no frontier kept
	cur    pool.CkptHeader
	have   bool   // cur is a checkpoint (else none was written yet)
	holder uint64 // the run's holder id (rank 0)
	buf    []byte // the values' bytes, reused
}

// checkpointable says whether a kernel's run can be kept: its state
// after an iteration is its values and frontier (not a phased kernel's
// phases, nor the triangle operator's lists).
func checkpointable(alg algo.Algorithm, params algo.Params) bool {
	p := alg.New(params)
	_, phased := p.(algo.Phased)
	return !phased && !p.Spec().Triangles
}

// ckptKey is what a checkpoint computes: the graph, the kernel and a hash
// of the resolved parameters (how the source was chosen aside).
func ckptKey(graph string, spec programSpec) (pool.CkptKey, error) {
	b, err := json.Marshal(struct {
		Params    algo.Params
		SourceID  uint64
		SourceIDs []uint64
	}{spec.Params, spec.SourceID, spec.SourceIDs})
	if err != nil {
		return pool.CkptKey{}, errors.Wrap(err, "job: encoding the parameters of a checkpoint")
	}
	h := fnv.New64a()
	h.Write(b)
	return pool.CkptKey{Graph: graph, Kernel: spec.Algo, Params: h.Sum64()}, nil
}

// checkpoint sets up the run's checkpoint (rank 0 claims or resumes it
// in the catalogue; every rank learns the result) and gives the engine
// its Checkpointer and Restorer, unless the run keeps none.
func (pr *poolRun) checkpoint(w *spmd.World, ep verbs.Endpoint, cfg *Config, alg algo.Algorithm, shape *jobShape, agree func(error) error) error {
	opt := pr.p.Checkpointing
	if !checkpointable(alg, shape.Spec.Params) {
		if opt.Resume {
			return agree(&rank.ParamError{Msg: fmt.Sprintf("--resume: %s keeps no checkpoint to resume (phased kernels and the triangle operator's are not checkpointed)", alg.Name)})
		}
		return nil
	}
	if opt.Off && !opt.Resume {
		return nil
	}
	key, err := ckptKey(pr.p.Name, shape.Spec)
	if err != nil {
		return agree(err)
	}
	var pc *poolCkpt
	if w.Rank() == 0 {
		pc, err = pr.claimCkpt(ep, key, shape.Vertices, w.Roles.CN)
	}
	if err := agree(err); err != nil {
		return err
	}
	if pc, err = bcastCkpt(w, pc); err != nil {
		return agree(err)
	}
	pc.key, pc.n = key, shape.Vertices
	pc.all = alg.New(shape.Spec.Params).Spec().AllActive
	if !opt.Off {
		cfg.Engine.Checkpoint = pc
		cfg.Engine.Cadence = rank.Cadence{Every: opt.Every}
	}
	if pc.have {
		cfg.Engine.Resume = pc
	}
	return nil
}

// claimCkpt takes the run's checkpoint slot (rank 0): the newest
// unfinished one of key with --resume, else a new one; a resumed one's
// current header is read and checked.
func (pr *poolRun) claimCkpt(ep verbs.Endpoint, key pool.CkptKey, n uint64, cns int) (*poolCkpt, error) {
	c := pr.p.Client
	pc := &poolCkpt{holder: c.ID()}
	var s pool.Slot
	var err error
	if !pr.p.Checkpointing.Resume {
		pc.slot, s, err = c.NewCheckpoint(key, n, cns)
		pr.ckpt = pc.slot
		pc.region = s.Aux
		return pc, err
	}
	// A killed run's hold on the graph expires StaleAfter after its last
	// heartbeat: a resume started at once (a requeue) waits that long.
	wait := max(pr.p.Wait, pool.StaleAfter+2*pool.BeatEvery)
	var found bool
	pc.slot, s, found, err = c.ResumeCheckpoint(key, cns, wait)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &rank.ParamError{Msg: fmt.Sprintf("--resume: the pool holds no unfinished run of %s to resume (`dmg ls --pool-file PATH` lists the unfinished runs; a run that finished, or was started with --no-checkpoint, leaves none)", key)}
	}
	pr.ckpt, pc.region = pc.slot, s.Aux
	if s.Vertices != n {
		return nil, errors.Errorf("job: the checkpoint of %s in pool slot %d is for %d vertices; the graph has %d", key, pc.slot, s.Vertices, n)
	}
	hdr := make([]byte, 2*pool.CkptHeaderBytes)
	if err := readAux(ep, pc.region, 0, hdr); err != nil {
		return nil, err
	}
	pc.cur, pc.have, err = pool.CurrentCkpt(hdr[:pool.CkptHeaderBytes], hdr[pool.CkptHeaderBytes:])
	if err != nil {
		return nil, errors.WithMessagef(err, "job: the checkpoint of %s in pool slot %d", key, pc.slot)
	}
	if pc.have && (pc.cur.Vertices != n || pc.cur.Kernel != key.Kernel || pc.cur.Params != key.Params) {
		return nil, errors.Errorf("job: the checkpoint of %s in pool slot %d says it is %s over %d vertices (parameters %#x): the catalogue and the region disagree",
			key, pc.slot, pc.cur.Kernel, pc.cur.Vertices, pc.cur.Params)
	}
	return pc, nil
}

// bcastCkpt sends rank 0's checkpoint slot, region and current header to
// every rank.
func bcastCkpt(w *spmd.World, pc *poolCkpt) (*poolCkpt, error) {
	var blob []byte
	if w.Rank() == 0 {
		var h []byte
		if pc.have {
			var err error
			if h, err = pc.cur.Encode(); err != nil {
				return nil, err
			}
		}
		for _, v := range []uint64{uint64(pc.slot), uint64(pc.region.MN), pc.region.Off, pc.region.Len} {
			blob = binary.LittleEndian.AppendUint64(blob, v)
		}
		blob = append(blob, h...)
	}
	blob, err := w.Comm.Bcast(0, blob)
	if err != nil {
		return nil, err
	}
	if len(blob) < 32 {
		return nil, errors.Errorf("job: a checkpoint's description of %d bytes", len(blob))
	}
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(blob[8*i:]) }
	out := &poolCkpt{slot: int(word(0)), region: pool.Extent{MN: int(word(1)), Off: word(2), Len: word(3)}}
	if pc != nil {
		out.holder = pc.holder
	}
	if len(blob) > 32 {
		if out.cur, out.have, err = pool.DecodeCkptHeader(blob[32:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addr is the address of byte off of the region.
func (pc *poolCkpt) addr(off uint64) (verbs.Addr, error) {
	return verbs.MakeAddr(pc.region.MN, pc.region.Off+off)
}

// Begin checks, on rank 0, that the run still holds its checkpoint: a
// run taken for dead, whose checkpoint another resumed, must not write
// into it.
func (pc *poolCkpt) Begin(ep verbs.Endpoint) error {
	return pool.CheckCkptLease(ep, pc.slot, pc.holder)
}

// Write writes this CN's chunk of the state into the buffers of the
// next epoch, which the current checkpoint does not use.
func (pc *poolCkpt) Write(ep verbs.Endpoint, s rank.State) (uint64, error) {
	_, epoch := pool.NextCkpt(pc.cur, pc.have)
	b := int(epoch % 2)
	a, err := pc.addr(pool.CkptValuesOff(pc.n, b) + 8*uint64(s.Lo))
	if err == nil {
		err = verbs.WriteBulk(ep, a, update.WordBytes(s.Values, &pc.buf))
	}
	if err == nil && !pc.all {
		if a, err = pc.addr(pool.CkptFrontOff(pc.n, b) + uint64(s.Lo)); err == nil {
			err = verbs.WriteBulk(ep, a, s.Active)
		}
	}
	if err != nil {
		return 0, errors.WithMessagef(err, "job: writing the checkpoint of %s", pc.key)
	}
	pc.cur.Epoch, pc.have = epoch, true
	return pool.ValuesSum(uint64(s.Lo), s.Values, s.Active), nil
}

// Commit writes the header of the epoch every CN has written (rank 0).
func (pc *poolCkpt) Commit(ep verbs.Endpoint, done int, sum uint64) error {
	pc.cur = pool.CkptHeader{Epoch: pc.cur.Epoch, Iteration: uint64(done), Vertices: pc.n, Params: pc.key.Params, Values: sum, Kernel: pc.key.Kernel}
	return pool.CommitCkpt(ep, pc.slot, pc.region, pc.cur, time.Now())
}

// Done is the iterations the resumed checkpoint completed.
func (pc *poolCkpt) Done() int { return int(pc.cur.Iteration) }

// Read reads the chunk [lo, hi) of the current checkpoint.
func (pc *poolCkpt) Read(ep verbs.Endpoint, lo, hi uint32) (rank.State, uint64, error) {
	s := rank.State{Done: pc.Done(), Lo: lo, Values: make([]uint64, hi-lo)}
	b := pc.cur.Buffer()
	// The values land in s.Values itself where DM's byte order is the
	// host's (update.WordsView), else in raw, decoded below.
	raw := update.WordsView(s.Values)
	decode := raw == nil && len(s.Values) > 0
	if decode {
		raw = make([]byte, 8*len(s.Values))
	}
	a, err := pc.addr(pool.CkptValuesOff(pc.n, b) + 8*uint64(lo))
	if err == nil {
		err = verbs.ReadBulk(ep, raw, a)
	}
	if err == nil && !pc.all {
		s.Active = make([]byte, hi-lo)
		if a, err = pc.addr(pool.CkptFrontOff(pc.n, b) + uint64(lo)); err == nil {
			err = verbs.ReadBulk(ep, s.Active, a)
		}
	}
	if err != nil {
		return s, 0, errors.WithMessagef(err, "job: reading the checkpoint of %s", pc.key)
	}
	if decode {
		for i := range s.Values {
			s.Values[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
	}
	return s, pool.ValuesSum(uint64(lo), s.Values, s.Active), nil
}

// Check compares the chunks' summed checksum with the header's.
func (pc *poolCkpt) Check(sum uint64) error {
	if sum != pc.cur.Values {
		return errors.Errorf("job: the checkpoint of %s in pool slot %d (iteration %d) is damaged: its values' checksum is %#x, its header says %#x",
			pc.key, pc.slot, pc.cur.Iteration, sum, pc.cur.Values)
	}
	return nil
}
