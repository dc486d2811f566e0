package job

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// poolRun is a run's side of the catalogue, on rank 0: the job's own
// slot, which names the graph it reads (its hold on the graph: any number
// of runs read a graph at once, and a drop waits for them) and, once
// placed, holds its regions.
type poolRun struct {
	p     *Pool
	graph int // the graph's slot
	job   int // the job's slot (-1: none yet)
	alive []func() error
	// gone is set by whichever gives the lease back first: release, or
	// abandon on a signal.
	gone   atomic.Bool
	keeper atomic.Pointer[pool.Keeper] // renews the job slot's lease (read by abandon)
	aux    pool.Extent
	// recut: the graph is cut for another compute-node count; the job
	// holds it while it cuts it for its own (recut), in the view slot cut
	// claims.
	recut bool
	cut   *poolLoad
	ckpt  int // the run's checkpoint slot (-1: none)
}

// runOnPool runs cfg's algorithm on the graph a served pool holds under
// cfg.Pool.Name: it takes the graph's lease, reads its descriptor, places
// the engine's regions in extents of its own and computes, reading
// nothing but the pool.
func runOnPool(w *spmd.World, cfg Config) (*Outcome, error) {
	sync := cfg.Engine.Sync
	agree := func(err error) error { return sync(err, nil) }
	t0 := time.Now()
	out := &Outcome{}
	phase := func(i int) {
		if cfg.Phase != nil {
			cfg.Phase(phaseNames[i])
		}
	}
	phase(phaseParams)
	err := cfg.Engine.Validate()
	var alg algo.Algorithm
	if err == nil {
		if alg, err = lookup(&cfg, cfg.Algo); err == nil {
			cfg.needs, err = rank.NeedsOf(cfg.Engine, alg.New(algo.Params{}).Spec())
		}
	}
	if err == nil && cfg.PreCheck != nil && w.Rank() == 0 {
		err = cfg.PreCheck()
	}
	net := cfg.Pool.Net
	var ep verbs.Endpoint
	if err == nil {
		if ep, err = net.NewEndpoint(); err == nil {
			defer ep.Close()
		}
	}
	pr := &poolRun{p: cfg.Pool, job: -1, ckpt: -1}
	defer pr.release()
	var blob []byte
	if err == nil && w.Rank() == 0 {
		blob, err = pr.take(ep, w.Roles.CN, cfg.Engine.Logf)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	phase(phaseRead)
	// The descriptor, after the aux extent's MN, offset and length.
	blob, err = w.Comm.Bcast(0, blob)
	var st stored
	if err == nil && len(blob) < 25 {
		err = errors.Errorf("job: graph %q's descriptor is %d bytes", cfg.Pool.Name, len(blob))
	}
	if err == nil {
		pr.recut = blob[0] == 1
		blob = blob[1:]
		pr.aux = pool.Extent{MN: int(binary.LittleEndian.Uint64(blob)), Off: binary.LittleEndian.Uint64(blob[8:]), Len: binary.LittleEndian.Uint64(blob[16:])}
		if err = gob.NewDecoder(bytes.NewReader(blob[24:])).Decode(&st); err != nil {
			err = errors.Wrapf(err, "job: decoding graph %q's descriptor", cfg.Pool.Name)
		}
	}
	if err == nil {
		err = fits(&st, alg, cfg.needs.Plain, cfg.Engine.Mode, cfg.Pool.Name)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	eps, err := endpoints(net, cfg.Engine.Workers*cfg.Engine.Inflight)
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	if err := agree(err); err != nil {
		return nil, err
	}
	if pr.recut {
		var view *stored
		if view, pr.aux, err = recut(w, &cfg, alg, &st, pr.aux, eps, pr, agree); err != nil {
			return nil, err
		}
		st = *view
	}
	cfg.Graph, cfg.Csr = st.Graph, st.Csr
	out.Algorithm = alg
	out.Meta = &st.Meta
	out.Chunks = st.Layouts.Out.Config.Bounds
	out.Symmetric = st.Symmetric
	lo, hi := out.Chunks[w.Index], out.Chunks[w.Index+1]

	// The job's shape and program: rank 0 resolves the parameters from
	// the stored properties and ids.
	degrees, err := readDegrees(ep, pr.aux, lo, hi)
	var g *csr.Graph
	var spec programSpec
	if err == nil && w.Rank() == 0 {
		if g, err = readIDs(ep, pr.aux, &st); err == nil {
			spec, err = resolve(&cfg, alg, graphIDs{g}, st.Top, &st.Meta)
		}
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	shape := jobShape{Vertices: st.Vertices, Edges: st.Edges, MaxChunkEdges: st.MaxChunkEdges}
	if shape.Spec, err = bcastSpec(w, spec); err != nil {
		return nil, agree(err)
	}
	senders := []int64{int64(cfg.Engine.Workers * cfg.Engine.Inflight)}
	if err := w.Comm.AllReduceInt64(senders, spmd.Sum); err != nil {
		return nil, agree(err)
	}
	shape.Senders = int(senders[0])
	out.Params, out.SourceID, out.SourceIDs, out.SourceFrom = shape.Spec.Params, shape.Spec.SourceID, shape.Spec.SourceIDs, shape.Spec.SourceFrom
	s := alg.New(out.Params).Spec()
	shape.Multiset, shape.Triangles = s.Reduce == algo.Multiset, s.Triangles
	out.Vertices, out.Edges = shape.Vertices, shape.Edges
	out.Workers, out.NICProfile = cfg.Engine.Workers*cfg.Engine.Inflight, cfg.Engine.Profile.Name
	out.Mode, out.Ablations = cfg.Engine.Mode, ablations(cfg)
	if w.Rank() == 0 {
		out.Graph = g
	}
	var probe *rank.Probe
	if cfg.KeepGraph {
		sample, err := bySample(&cfg, alg, out, out.Symmetric || st.Layouts.In != nil)
		if err := agree(err); err != nil {
			return nil, err
		}
		if sample {
			probe = newProbe(alg, out, st.Top)
		}
	}

	phase(phaseLayout)
	// The engine's regions, in extents of this job's own.
	sc := storeConfig(cfg, shape, out.Chunks, net.NumMN())
	reserve := rank.Reserve(sc)
	start := make([]uint64, net.NumMN())
	var perr error
	if w.Rank() == 0 {
		perr = pr.regions(reserve, start)
	}
	if err := agree(bcastWords(w, start, perr)); err != nil {
		return nil, err
	}
	stor, err := rank.NewStoreAt(st.Layouts.Out, st.Layouts.In, sc, start)
	var puller verbs.Endpoint
	if err == nil && cfg.needs.Puller {
		if puller, err = net.NewEndpoint(); err == nil {
			defer puller.Close()
		}
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	out.Provider = net.Provider()
	out.Layout = st.Layouts.Out
	st.Layouts.describe(out)
	last := st.Layouts.last()
	for m := range net.NumMN() {
		out.MNPool = append(out.MNPool, net.PoolSize(m))
		out.MNUsed = append(out.MNUsed, last.MN[m].Needed-st.Layouts.Out.MN[m].Start+reserve)
		if st.Layouts.In != nil {
			u := st.Layouts.In.MN[m]
			out.InBytes = append(out.InBytes, u.IndexBytes+u.EdgeBytes)
		}
	}
	// The attach: from the start to the compute, with nothing read but
	// the pool.
	out.LoadS, out.Pooled, out.Recut = time.Since(t0).Seconds(), cfg.Pool.Name, pr.recut

	if err := pr.checkpoint(w, ep, &cfg, alg, &shape, agree); err != nil {
		return nil, err
	}
	phase(phaseCompute)
	if err := compute(w, net, stor, eps, puller, degrees, &cfg, alg, out, probe); err != nil {
		return nil, err
	}
	if w.Rank() == 0 && pr.ckpt >= 0 {
		// The run is done: nothing is left to resume.
		err = pr.p.Client.EndCheckpoint(pr.ckpt)
	}
	if w.Rank() == 0 {
		if rerr := pr.release(); err == nil {
			err = rerr
		}
	}
	switch {
	case err != nil || w.Rank() != 0:
	case probe != nil:
		out.Sample, err = sampleOf(probe, out)
	case cfg.KeepGraph:
		out.Graph, err = wholeGraph(&cfg, alg)
	}
	return out, agree(err)
}

// endpoints opens n endpoints (as many as there are, on an error).
func endpoints(net verbs.Network, n int) ([]verbs.Endpoint, error) {
	var eps []verbs.Endpoint
	for range n {
		ep, err := net.NewEndpoint()
		if err != nil {
			return eps, err
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// swap makes the job read the view pl has cut (ready: a graph of its
// own) instead of the graph it was cut from (rank 0).
func (pr *poolRun) swap(pl *poolLoad) error {
	pr.graph = pl.slot
	return pr.update(func(*pool.Client) ([]pool.Extent, error) { return nil, nil })
}

// fits checks that a stored graph serves the kernel as a one-job run
// would have read it.
func fits(st *stored, alg algo.Algorithm, plain bool, mode string, name string) error {
	var why string
	switch {
	case st.Layouts.Out.Config.Naive != plain:
		why = fmt.Sprintf("--mode %s needs the graph laid out for it; %q was loaded for another mode: load it again with this --mode under another name", mode, name)
	case alg.Symmetric && st.Directed:
		why = fmt.Sprintf("%s reads its graph undirected but %q was loaded directed; load it again with --undirected under another name", alg.Name, name)
	case alg.Weighted && !st.Meta.Weighted:
		why = fmt.Sprintf("%s needs weights but %q was loaded without them; load it again with --weighted under another name", alg.Name, name)
	case alg.Multigraph && st.Meta.DroppedDuplicates > 0:
		why = fmt.Sprintf("%s counts parallel edges but the load of %q dropped %d of them", alg.Name, name, st.Meta.DroppedDuplicates)
	}
	if why != "" {
		return &rank.ParamError{Msg: why}
	}
	return nil
}

// take finds the graph, cut for cns compute nodes if the pool has such
// a view of it, holds it (a Job slot of the run's own that names it) and
// reads its descriptor (rank 0), which it returns after a flag that says
// whether it must be re-cut and the aux extent's MN, offset and length.
func (pr *poolRun) take(ep verbs.Endpoint, cns int, logf func(string, ...any)) ([]byte, error) {
	c := pr.p.Client
	i, s, exact, ok, err := c.FindView(pr.p.Name, cns)
	if err == nil && !ok {
		// Not ready: being loaded, or not there at all.
		i, s, ok, err = c.Find(pr.p.Name)
	}
	if err != nil {
		return nil, err
	}
	pr.recut = !exact
	if !ok {
		return nil, &rank.ParamError{Msg: fmt.Sprintf("the pool holds no graph %q (see `dmg ls --pool-file PATH`)", pr.p.Name)}
	}
	if s.State != pool.Ready {
		return nil, &rank.ParamError{Msg: fmt.Sprintf("graph %q is still being loaded", pr.p.Name)}
	}
	pr.graph = i
	j, held, err := c.Hold(i, lockWait, pr.p.Wait)
	if err != nil {
		return nil, err
	}
	pr.job = j
	kep, err := pr.p.Net.NewEndpoint()
	if err != nil {
		return nil, err
	}
	k := pool.Keep(kep, j, c.ID(), pool.BeatEvery)
	pr.keeper.Store(k)
	pr.alive = append(pr.alive, k.Stop)
	if pr.p.OnSignal != nil {
		pr.p.OnSignal(fmt.Sprintf("the lease of graph %q", pr.p.Name), pr.abandon)
	}
	if pr.recut {
		view, vs, err := pr.cutOrWait(cns, logf)
		if err != nil {
			return nil, err
		}
		if view >= 0 { // cut meanwhile by another run
			pr.recut, held = false, vs
		}
	}
	// The graph's slot as Hold read it, holding it: the aux extent it names.
	aux := held.Aux
	head := []byte{0}
	if pr.recut {
		head[0] = 1
	}
	head = binary.LittleEndian.AppendUint64(head, uint64(aux.MN))
	head = binary.LittleEndian.AppendUint64(head, aux.Off)
	head = binary.LittleEndian.AppendUint64(head, aux.Len)
	n := make([]byte, 16)
	if err := readAux(ep, aux, 0, n); err != nil {
		return nil, err
	}
	size, at := binary.LittleEndian.Uint64(n), binary.LittleEndian.Uint64(n[8:])
	if at > aux.Len || size > aux.Len-at {
		return nil, errors.Errorf("job: graph %q's descriptor claims %d bytes at %d of a %d-byte extent", pr.p.Name, size, at, aux.Len)
	}
	desc := make([]byte, size)
	if err := readAux(ep, aux, at, desc); err != nil {
		return nil, err
	}
	return append(head, desc...), nil
}

// cutOrWait settles who cuts the graph anew for cns compute nodes, for a
// run that found no view of that count (rank 0, holding the graph).
// Under the catalogue's lock: a view of cns CNs that is ready now is
// read at once (the job slot moves onto it; its index and slot are
// returned); one another run is cutting is waited for, while its cutter
// lives, rather than cut twice (a second copy of the graph); otherwise
// this run claims the view's slot (pr.cut) and cuts it (view -1). A
// wait is logged (logf, may be nil) once.
func (pr *poolRun) cutOrWait(cns int, logf func(string, ...any)) (view int, vs pool.Slot, err error) {
	for waited := false; ; waited = true {
		var cutting bool
		err := pr.update(func(c *pool.Client) ([]pool.Extent, error) {
			var err error
			view, vs, cutting, err = c.FindCut(pr.p.Name, cns)
			switch {
			case err != nil:
			case view >= 0:
				pr.graph = view
			case !cutting:
				pl := &poolLoad{p: pr.p, view: true}
				if err = pl.take(c, cns); err == nil {
					err = c.Put(pl.slot, pl.s)
				}
				if err == nil {
					pr.cut = pl
				}
			}
			return nil, err
		})
		switch {
		case err != nil:
			return -1, vs, err
		case view >= 0:
			return view, vs, nil
		case !cutting:
			return -1, vs, pr.cut.keep()
		}
		if !waited && logf != nil {
			logf("another run is cutting graph %q for %d CNs: waiting for its cut rather than making a second", pr.p.Name, cns)
		}
		time.Sleep(pool.BeatEvery / 2)
	}
}

// regions allocates the job's extents for the engine's regions, reserve
// bytes on every MN, and records them in the job's slot (rank 0).
func (pr *poolRun) regions(reserve uint64, start []uint64) error {
	sizes := make([]uint64, len(start))
	for m := range sizes {
		sizes[m] = reserve
	}
	return pr.update(func(c *pool.Client) ([]pool.Extent, error) {
		ext, err := c.Alloc(sizes)
		for m, e := range ext {
			start[m] = e.Off
		}
		return ext, err
	})
}

// update rewrites the job's slot under the catalogue's lock: the graph
// it reads (pr.graph) and the extents alloc returns.
func (pr *poolRun) update(alloc func(c *pool.Client) ([]pool.Extent, error)) error {
	c := pr.p.Client
	if err := c.Lock(lockWait); err != nil {
		return err
	}
	defer c.Unlock()
	if pr.gone.Load() { // a signal gave the slot's lease up: not ours to write
		return errors.Errorf("job: the run on graph %q was interrupted", pr.p.Name)
	}
	ext, err := alloc(c)
	if err != nil {
		return err
	}
	now := uint64(time.Now().UnixMilli())
	return c.Put(pr.job, pool.Slot{State: pool.Job, Lease: c.ID(), Beat: now, Created: now, Name: pr.p.Name, Graph: pr.graph, Ext: ext})
}

// release frees the job's slot, and so its hold on the graph (rank 0;
// again is a no-op).
func (pr *poolRun) release() error {
	c := pr.p.Client
	if c == nil {
		return nil
	}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	// The slot is this release's to free unless a signal's abandon gave
	// its lease up first (decided before the keeper stops): it is then a
	// dead job's, for the next catalogue change to free.
	mine := pr.job >= 0 && !pr.gone.Swap(true)
	if pr.cut != nil {
		pr.cut.abandon() // claimed for a cut the run did not finish
	}
	for _, stop := range pr.alive {
		keep(stop())
	}
	pr.alive = nil
	if pr.job >= 0 && mine {
		if err := c.Lock(lockWait); err == nil {
			keep(c.Drop(pr.job))
			keep(c.Unlock())
		} else {
			keep(err)
		}
	}
	pr.job = -1
	return first
}

// abandon gives the job slot's lease up when a signal ends the job, on
// the keeper's endpoint (the run's may be mid-flush, and a new one would
// be a new connection): a Job slot without a lease is a dead job's, which
// holds no graph and which the next catalogue change frees. It runs once,
// and not after release.
func (pr *poolRun) abandon() error {
	if pr.gone.Swap(true) {
		return nil
	}
	k := pr.keeper.Load()
	if k == nil {
		return errors.New("job: the lease had no keeper yet")
	}
	if h, ok := pr.p.Net.(verbs.Halter); ok {
		// The run's traffic stops first: the MN then answers the release
		// at once, not behind the run's reads.
		h.Halt(k.Endpoint())
	}
	return k.Release()
}

// readAux reads len(dst) bytes at off of the aux extent.
func readAux(ep verbs.Endpoint, aux pool.Extent, off uint64, dst []byte) error {
	a, err := verbs.MakeAddr(aux.MN, aux.Off+off)
	if err != nil {
		return err
	}
	return verbs.ReadBulk(ep, dst, a)
}

// readDegrees reads the out-degrees of vertices [lo, hi).
func readDegrees(ep verbs.Endpoint, aux pool.Extent, lo, hi uint32) ([]uint32, error) {
	b := make([]byte, 4*int(hi-lo))
	if err := readAux(ep, aux, auxDegrees+4*uint64(lo), b); err != nil {
		return nil, err
	}
	d := make([]uint32, hi-lo)
	for i := range d {
		d[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return d, nil
}

// readIDs is the stored graph's vertices as an output needs them: their
// count and external ids (rank 0).
func readIDs(ep verbs.Endpoint, aux pool.Extent, st *stored) (*csr.Graph, error) {
	g := &csr.Graph{N: uint32(st.Vertices), Directed: st.Directed}
	if !st.IDs {
		return g, nil
	}
	b := make([]byte, 8*st.Vertices)
	if err := readAux(ep, aux, auxIDs(st.Vertices), b); err != nil {
		return nil, err
	}
	g.IDs = make([]uint64, st.Vertices)
	for i := range g.IDs {
		g.IDs[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return g, nil
}

// graphIDs gives a graph's ids as a share does (resolve).
type graphIDs struct{ g *csr.Graph }

func (x graphIDs) ExternalID(v uint32) (uint64, error) { return x.g.ExternalID(v), nil }
func (x graphIDs) DenseID(ext uint64) (uint32, bool, error) {
	v, ok := x.g.DenseID(ext)
	return v, ok, nil
}

// bcastSpec sends rank 0's program to every rank.
func bcastSpec(w *spmd.World, mine programSpec) (programSpec, error) {
	var blob []byte
	var spec programSpec
	if w.Rank() == 0 {
		var err error
		if blob, err = json.Marshal(mine); err != nil {
			return spec, errors.Wrap(err, "job: encoding the job's program")
		}
	}
	blob, err := w.Comm.Bcast(0, blob)
	if err != nil {
		return spec, err
	}
	return spec, errors.Wrap(json.Unmarshal(blob, &spec), "job: decoding the job's program")
}
