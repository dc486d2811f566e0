package job

import (
	"fmt"
	"runtime/debug"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/hugemem"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// Execute runs one job on every rank: read or generate the graph, cut it
// into chunks, open the fabric with pools sized for it, load each CN's
// chunk into DM, run the kernel. It is a pipeline of named steps, each
// ending with an agreement (cfg.Engine.Sync), so all ranks go on or all
// stop. Each CN holds only its share of the graph (csr.OpenShareWith),
// and only until its chunk is in DM. A job on a served pool's graph
// attaches instead of reading (runOnPool).
func Execute(w *spmd.World, cfg Config) (out *Outcome, err error) {
	cfg.Engine.EnsureDefaults()
	if cfg.Engine.Sync == nil {
		cfg.Engine.Sync = rank.BarrierSync(w)
	}
	if cfg.Pool != nil && !cfg.LoadOnly {
		return runOnPool(w, cfg)
	}
	x := &execution{w: w, cfg: &cfg, out: &Outcome{}, t0: time.Now()}
	x.sync = cfg.Engine.Sync
	x.agree = func(err error) error { return x.sync(err, nil) }
	defer x.release()
	for _, step := range []func() error{x.params, x.read, x.settle, x.layout, x.open, x.load, x.compute} {
		err := step()
		if x.done { // the last step's agreement
			return x.out, err
		}
		if err != nil {
			return nil, err
		}
	}
	return x.out, nil
}

// execution is one rank's state through Execute's steps.
type execution struct {
	w        *spmd.World
	cfg      *Config
	out      *Outcome
	sync     rank.Sync
	agree    func(error) error
	t0, t2   time.Time
	loadRead time.Duration
	cur      int  // the phase
	done     bool // past the last step's work: its agreement ends the job
	live     *liveness
	pl       *poolLoad // a load into a served pool
	stg      *stage    // a staged read
	alg      algo.Algorithm
	wantIn   bool
	hasIn    bool
	windowed bool
	sh       *csr.Share
	top      uint32 // the vertex with the most out-edges
	spec     programSpec
	facts    chunkFacts
	shape    jobShape
	layouts  layouts
	net      verbs.Network
	closed   bool // the network is closed, or the caller's (a served pool's)
	st       *rank.Store
	eps      []verbs.Endpoint
	puller   verbs.Endpoint
	degrees  []uint32
	degMem   hugemem.Arena // the degrees', freed by release
	sample   bool          // --verify by a sample (verify.go)
}

func (x *execution) phase(i int) {
	x.cur = i
	if x.cfg.Phase != nil {
		x.cfg.Phase(phaseNames[i])
	}
	x.live.setPhase(i)
}

// release gives back what the steps took, last taken first: the puller
// and the workers' endpoints, the network, the staging memory, a pool
// load's claim. After a panic it closes nothing collective: a bug left
// this rank out of step with the others' collectives, and closing the
// network (a barrier) would wait for them forever; the caller ends the
// job (MPI_Abort).
func (x *execution) release() {
	if p := recover(); p != nil {
		x.live.close()
		if x.pl != nil {
			x.pl.abandon()
		}
		panic(p)
	}
	if x.puller != nil {
		x.puller.Close()
	}
	if x.net != nil {
		x.live.close() // before the network it uses
		for _, ep := range x.eps {
			ep.Close()
		}
		if !x.closed {
			x.net.Close()
		}
	}
	if x.stg != nil {
		x.stg.close()
	}
	if x.pl != nil {
		x.pl.abandon()
	}
	x.degMem.Free() // the engine is done with the degrees
}

// params checks the parameters and the output paths before any reading,
// asks what the kernel needs, claims a served pool's slot for a load, and
// learns whether the CNs read the graph staged (each its byte range, the
// edges meeting their owners in DM): rank 0, CN 0, looks at the input
// (the MNs may not see the file).
func (x *execution) params() error {
	cfg, w := x.cfg, x.w
	x.phase(phaseParams)
	err := cfg.Engine.Validate()
	var kspec algo.Spec // a load's is the zero one: it asks for the layout alone
	if err == nil && !cfg.LoadOnly {
		if x.alg, err = lookup(cfg, cfg.Algo); err == nil {
			kspec = x.alg.New(algo.Params{}).Spec()
		}
	}
	if err == nil {
		cfg.needs, err = rank.NeedsOf(cfg.Engine, kspec)
	}
	if err == nil && cfg.PreCheck != nil && w.Rank() == 0 {
		err = cfg.PreCheck()
	}
	if cfg.Pool != nil {
		x.pl = &poolLoad{p: cfg.Pool}
		if err == nil {
			err = x.pl.claim(w)
		}
	}
	staged := []float64{0}
	if err == nil && w.Rank() == 0 && w.Roles.CN > 1 && !cfg.NoStage && cfg.Pool == nil && csr.Stageable(cfg.Graph, graphOptions(cfg, x.alg)) {
		staged[0] = 1
	}
	if err := x.sync(err, staged); err != nil {
		return err
	}
	if staged[0] != 0 {
		x.stg = &stage{w: w, open: cfg.Open}
	}
	x.out.Algorithm = x.alg
	return nil
}

// read reads the graph: each compute node its share (and, for a directed
// graph the engine pulls on, its in-edges), with the program's parameters;
// the memory nodes serve a staged read, and learn the graph's shape from
// CN 0 (shape) and its layout in the next phase.
func (x *execution) read() error {
	cfg, w := x.cfg, x.w
	x.phase(phaseRead)
	x.wantIn = !cfg.LoadOnly && cfg.needs.In
	if cfg.LoadOnly {
		// A graph stored in a served pool keeps its in-edges, for the
		// kernels that pull on it later.
		x.wantIn = cfg.Pool != nil
	}
	var err error
	x.out.CNMem = cfg.CNMem
	if w.Role == spmd.CN {
		if x.sh, x.spec, err = prepare(cfg, x.alg, x.wantIn, x.out, w, x.stg); err == nil {
			x.top = x.sh.Top
			err = fitsBudget(cfg.CNMem, w.Index, x.sh.Hi-x.sh.Lo)
		}
		switch {
		case err != nil:
		case fromDegrees(cfg, x.sh):
			x.facts, err = roomFacts(w, cfg, x.sh, x.out.Chunks, &x.degMem)
		default:
			x.facts, err = measure(w, cfg, x.alg, x.sh, x.out.Chunks, &x.degMem)
		}
	} else if x.stg != nil {
		err = csr.ServeStaged(x.stg)
	}
	if err := x.agree(err); err != nil {
		return err
	}
	if x.stg != nil {
		x.out.StagedBytes = x.stg.most
	}
	if x.sh != nil {
		x.out.StagedRounds = x.sh.Rounds()
	}
	return nil
}

// fitsBudget refuses a CN budget (--cn-mem; 0: none) that cannot hold
// the vertex state of CN k's chunk of n vertices, which the engine keeps
// for the whole run.
func fitsBudget(budget uint64, k int, n uint32) error {
	need := rank.MinCacheBytes(uint64(n))
	if budget == 0 || need <= budget {
		return nil
	}
	return &rank.ParamError{Msg: fmt.Sprintf("--cn-mem %s is too small for CN %d's chunk: its %s vertices need %s of vertex state; expected at least that, or more CNs",
		humanize.IBytes(budget), k, humanize.Comma(int64(n)), humanize.IBytes(need))}
}

// settle agrees on the graph's shape and traits (every rank learns them),
// ends the read where it can, and settles the kernel and its parameters.
func (x *execution) settle() error {
	cfg, w, out := x.cfg, x.w, x.out
	var err error
	if err = crossCheck(w, out.Chunks); err == nil {
		x.shape, err = shareShape(w, x.spec, x.sh, &x.facts, out.Meta, cfg.Engine.Workers*cfg.Engine.Inflight)
	}
	if err == nil && x.shape.Vertices == 0 {
		err = &rank.ParamError{Msg: fmt.Sprintf("the graph %s has no vertices (an empty input); expected at least one edge or vertex", cfg.Graph)}
	}
	if err == nil && uint64(w.Roles.CN) > x.shape.Vertices {
		// A chunk holds at least one vertex (every rank knows the count:
		// they fail alike, before the layout's collectives).
		err = &rank.ParamError{Msg: fmt.Sprintf("%d compute nodes for a graph of %d vertices; expected at most one compute node per vertex (--roles)", w.Roles.CN, x.shape.Vertices)}
	}
	if err == nil && cfg.LoadOnly {
		out.Degrees, err = gatherDegrees(w, &x.facts)
	}
	if err := x.agree(err); err != nil {
		return err
	}
	// A directed graph whose every share lists the same in- as out-edges
	// is symmetric: the out-lists serve the pull.
	out.Symmetric, x.windowed, err = shareTraits(w, x.sh)
	if err := x.agree(err); err != nil {
		return err
	}
	x.hasIn = x.wantIn && !out.Symmetric
	// The read ends before the store's pools are opened, unless a windowed
	// share's load still reads its edges from what the read kept: the
	// memory that the CNs' kept edges and the MNs' staging memory free
	// then backs the pools instead of fresh pages (on this VM a fresh page
	// can cost more than the copy into it).
	if !x.windowed {
		if err := endStage(w, x.sh, x.stg, out, x.agree); err != nil {
			return err
		}
	}
	if !cfg.LoadOnly {
		if x.alg, err = lookup(cfg, x.shape.Spec.Algo); err != nil {
			return err
		}
		out.Algorithm, out.Params = x.alg, x.shape.Spec.Params
		out.SourceID, out.SourceIDs, out.SourceFrom = x.shape.Spec.SourceID, x.shape.Spec.SourceIDs, x.shape.Spec.SourceFrom
		s := x.alg.New(out.Params).Spec()
		x.shape.Multiset, x.shape.Triangles = s.Reduce == algo.Multiset, s.Triangles
	}
	out.Vertices, out.Edges = x.shape.Vertices, x.shape.Edges
	if cfg.KeepGraph && !cfg.LoadOnly {
		if x.sample, err = bySample(cfg, x.alg, out, out.Symmetric || x.hasIn); err != nil {
			return x.agree(err) // every rank knows the same
		}
	}
	out.Workers, out.NICProfile = cfg.Engine.Workers*cfg.Engine.Inflight, cfg.Engine.Profile.Name
	out.Mode, out.Ablations = cfg.Engine.Mode, ablations(*cfg)
	x.loadRead = time.Since(x.t0)
	return nil
}

// layout lays the store out: each CN has measured its chunk, they share
// the figures, CN 0's layouts go to the MNs and are checked against the
// other CNs'; a pool load plans again at the extents the pool gives it.
func (x *execution) layout() error {
	cfg, w := x.cfg, x.w
	x.phase(phaseLayout)
	x.t2 = time.Now()
	var err error
	x.layouts, err = planLayouts(w, cfg, x.shape, &x.facts, x.hasIn, x.out.Chunks, nil)
	if err == nil && x.pl != nil {
		needed := make([]uint64, len(x.layouts.last().MN))
		for m, u := range x.layouts.last().MN {
			needed[m] = u.Needed
		}
		var base []uint64
		if base, err = x.pl.place(w, needed); err == nil {
			x.layouts, err = planLayouts(w, cfg, x.shape, &x.facts, x.hasIn, x.out.Chunks, base)
		}
	}
	if err == nil {
		x.out.Chunks = x.layouts.Out.Config.Bounds
	}
	if err == nil && cfg.MNMem > 0 && x.pl == nil {
		avail := make([]uint64, cfg.numMN(w))
		for m := range avail {
			avail[m] = usableBytes(cfg.MNMem, w.Roles.Size())
		}
		if cerr := x.layouts.last().CheckCapacity(avail); cerr != nil {
			err = &rank.ParamError{Msg: "--mn-mem is too small: " + cerr.Error()}
		}
	}
	return x.agree(err)
}

// open opens the fabric with pools sized for the layouts (a served pool's
// is open already), starts the liveness watch and makes the store.
func (x *execution) open() error {
	cfg, w, out := x.cfg, x.w, x.out
	last := x.layouts.last()
	var err error
	var net verbs.Network
	if x.pl != nil {
		net = cfg.Pool.Net
	} else {
		pool := uint64(0)
		if w.Role == spmd.MN {
			pool = last.MN[w.Index].Needed + poolHeadroom + heartbeatBytes(w.Roles.Size())
			if cfg.MNMem > 0 {
				pool = cfg.MNMem
			}
		}
		net, err = cfg.Open(verbs.Config{PoolBytes: pool})
	}
	// Released from here on only: a rank whose network opened while
	// another's did not closes nothing (a close is collective).
	if err := x.agree(err); err != nil {
		return err
	}
	x.net, x.closed = net, x.pl != nil // the caller closes a served pool's
	if cfg.PeerTimeout > 0 && cfg.Stalled != nil && x.pl == nil {
		var leps []verbs.Endpoint
		for range cfg.numMN(w) {
			if w.Role != spmd.CN || err != nil {
				break
			}
			var ep verbs.Endpoint
			if ep, err = x.net.NewEndpoint(); err == nil {
				leps = append(leps, ep)
			}
		}
		if err != nil {
			for _, ep := range leps {
				ep.Close()
			}
		} else {
			x.live = startLiveness(w, x.net, leps, cfg.PeerTimeout, phaseNames[:], cfg.Stalled, cfg.RankName)
			x.live.setPhase(x.cur)
		}
	}
	out.Provider = x.net.Provider()
	x.layouts.describe(out)
	for m := range cfg.numMN(w) {
		out.MNPool = append(out.MNPool, x.net.PoolSize(m))
		out.MNUsed = append(out.MNUsed, last.MN[m].Needed-x.layouts.Out.MN[m].Start) // from the graph's extent in a served pool
		if x.layouts.In != nil {
			u := x.layouts.In.MN[m]
			out.InBytes = append(out.InBytes, u.IndexBytes+u.EdgeBytes)
		}
	}
	return nil
}

// load has every CN write its chunk (and its in-lists), one endpoint per
// worker goroutine (the engine keeps them: connection set-up is not free
// on every fabric); a pool load then stores the graph's descriptor. A job
// that only loads ends here.
func (x *execution) load() error {
	cfg, w, out := x.cfg, x.w, x.out
	x.phase(phaseLoad)
	usable := make([]uint64, len(out.MNPool))
	for m, p := range out.MNPool {
		usable[m] = usableBytes(p, w.Roles.Size())
	}
	var err error
	if x.pl == nil {
		err = x.layouts.last().CheckCapacity(usable)
	}
	var dropped [2]uint64 // what the share's windows dropped before the load
	if m := out.Meta; m != nil {
		dropped = [2]uint64{m.DroppedSelfLoops, m.DroppedDuplicates}
	}
	if err == nil && w.Role == spmd.CN {
		x.degrees = x.facts.degrees
		for range cfg.Engine.Workers * cfg.Engine.Inflight {
			var ep verbs.Endpoint
			if ep, err = x.net.NewEndpoint(); err != nil {
				break
			}
			x.eps = append(x.eps, ep)
		}
		if err == nil && cfg.needs.Puller && !cfg.LoadOnly {
			// The RefRD puller's own endpoint.
			x.puller, err = x.net.NewEndpoint()
			if err != nil {
				x.puller = nil
			}
		}
		if err == nil {
			out.Load, err = loadShare(x.sh, x.layouts, w.Index, x.eps, &x.facts, cfg.LoadProgress)
		}
	}
	if err := x.agree(err); err != nil {
		return err
	}
	if x.windowed {
		if err := x.loaded(dropped); err != nil {
			return err
		}
		if err := endStage(w, x.sh, x.stg, out, x.agree); err != nil {
			return err
		}
	}
	if x.pl != nil {
		st := stored{Graph: cfg.Graph, Csr: graphOptions(cfg, x.alg), Layouts: x.layouts, Vertices: x.shape.Vertices, Edges: x.shape.Edges,
			MaxChunkEdges: x.shape.MaxChunkEdges, Symmetric: out.Symmetric, Top: x.top, CNs: w.Roles.CN}
		_, serr := x.pl.store(w, x.eps[0], &st, out, x.facts.degrees)
		if err := x.agree(serr); err != nil {
			return err
		}
	}
	out.LoadS = x.loadRead.Seconds() + time.Since(x.t2).Seconds()
	x.sh, x.facts = nil, chunkFacts{} // the CNs compute from DM only
	// The load's heap (the chunk's degrees, the last window's rows) is
	// garbage now: collect it and give its pages back, so that the next
	// collection comes at twice the compute's live heap, not twice the
	// load's, and the compute's state reuses its pages.
	debug.FreeOSMemory()
	out.Layout = x.layouts.Out
	if !cfg.LoadOnly {
		return nil
	}
	x.done = true
	x.live.close()
	if x.pl != nil {
		return x.agree(x.pl.ready(x.shape.Vertices, x.shape.Edges))
	}
	x.closed = true
	return x.agree(x.net.Close())
}

// loaded agrees, after a windowed load, on what the CNs' loads found,
// which a CN that laid its chunk out from its degrees (fromDegrees) knew
// only as bounds before: the edges (and the most of one chunk), the
// self-loops and parallel edges its windows dropped (dropped: its
// Meta's counts before the load), and the layouts' vertices in place
// and with an overflow table. Every rank takes them, rank 0's report
// too (collective).
func (x *execution) loaded(dropped [2]uint64) error {
	w, out := x.w, x.out
	sums, most := make([]int64, 7), []int64{0}
	if w.Role == spmd.CN {
		l := x.facts.loaded
		sums = []int64{int64(l.edges), 0, 0, int64(l.out.inPlace), int64(l.out.overflow), int64(l.in.inPlace), int64(l.in.overflow)}
		if m := out.Meta; m != nil {
			sums[1], sums[2] = int64(m.DroppedSelfLoops-dropped[0]), int64(m.DroppedDuplicates-dropped[1])
		}
		most[0] = int64(l.edges)
	}
	err := w.Comm.AllReduceInt64(sums, spmd.Sum)
	if err == nil {
		err = w.Comm.AllReduceInt64(most, spmd.Max)
	}
	if err != nil {
		return x.agree(err)
	}
	x.shape.Edges, x.shape.MaxChunkEdges = uint64(sums[0]), uint64(most[0])
	out.Edges = x.shape.Edges
	for i, l := range []*dmstore.Layout{x.layouts.Out, x.layouts.In} {
		if l != nil {
			l.Edges, l.InPlace, l.Overflow = x.shape.Edges, uint64(sums[3+2*i]), uint64(sums[4+2*i])
		}
	}
	x.layouts.describe(out)
	if m := out.Meta; w.Rank() == 0 && m != nil {
		m.DroppedSelfLoops, m.DroppedDuplicates = dropped[0]+uint64(sums[1]), dropped[1]+uint64(sums[2])
	}
	return nil
}

// compute makes the store (the engine's regions after the layouts, for
// the graph the load wrote), runs the kernel, closes the network and,
// when asked, hands rank 0 the whole graph for the caller's check.
func (x *execution) compute() error {
	cfg, w := x.cfg, x.w
	x.phase(phaseCompute)
	var err error
	x.st, err = rank.NewStore(x.layouts.Out, x.layouts.In, storeConfig(*cfg, x.shape, x.out.Chunks, cfg.numMN(w)))
	if err := x.agree(err); err != nil {
		return err
	}
	var probe *rank.Probe
	if x.sample {
		probe = newProbe(x.alg, x.out, x.top)
	}
	if p := cfg.ComputeGCPercent; p > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(p))
	}
	if err := compute(w, x.net, x.st, x.eps, x.puller, x.degrees, cfg, x.alg, x.out, probe); err != nil {
		return err
	}
	x.done, x.closed = true, true
	x.live.close()
	err = x.net.Close()
	switch {
	case err != nil || w.Rank() != 0:
	case x.sample:
		x.out.Sample, err = sampleOf(probe, x.out)
	case cfg.KeepGraph:
		x.out.Graph, err = wholeGraph(cfg, x.alg)
	}
	return x.agree(err)
}
