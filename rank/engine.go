package rank

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/hugemem"
	"github.com/dmg-hpc/dmg/reduce"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

// engine is one rank's state for one run of a program. On a CN it is the
// cache of its chunk [lo, hi): current values, next-iteration accumulators,
// contributions, out-degrees and the frontier (about 28 B per own vertex),
// plus the workers and their buffers, all made once per job.
type engine struct {
	w   *spmd.World
	net verbs.Network
	// numMN is the fabric's MNs: the world's, or a served pool's when
	// the job holds compute nodes alone.
	numMN int
	st    *Store
	cfg   Config
	mode  mode
	prog  algo.Program
	spec  algo.Spec
	op    reduce.Op
	edgr  algo.Edger // Custom edge maps only
	multi multiset   // Multiset kernels

	cn     bool
	me     int // CN index
	lo, hi uint32
	deg    []uint32 // out-degrees of the own chunk
	val    []uint64 // current values
	acc    []uint64 // reductions of this iteration's candidates
	// contrib is each own vertex's contribution while it is active, the
	// identity otherwise, so the pull needs no frontier test.
	contrib []uint64
	reached bitmap // traversals: vertices that have their value
	front   *frontier
	lanes   []uint32 // the workers' destination ranges, 64-aligned

	gang *gang
	eps  []verbs.Endpoint // the workers' and the puller's
	// valuesBehind: a dense apply left the own chunk's values on DM
	// behind the cache (lazyValues); catchUpValues writes them.
	valuesBehind bool
	queue        *balance.Queue
	wks          []*worker
	tasks        []balance.Task // the dense tasks, planned once
	sparse       []balance.Task // this sparse iteration's tasks (indices into the frontier list)
	pol          policy         // chooses each iteration's plan
	it           plan

	// Per-iteration state of the apply: what worker 0 read of the
	// chunk's regions, the mailboxes' drain, the sparse apply's vertices.
	info     drainInfo
	mail     mailDrain
	touched  []uint32 // sparse apply: every vertex a candidate reached
	oldFront []uint32
	laneSums []laneSum

	pull   *puller
	pullEP verbs.Endpoint
	// The phase functions, made once so a phase allocates nothing.
	pushFn, applyFn func(int) error
	// rangeCost and listCost are the stage-2 cost of a dense task and of
	// a sparse one (balance.EdgeCost, ListCost).
	rangeCost, listCost func(balance.Task) uint64

	bu  bottomUp   // traversals' bottom-up step
	rp  remotePull // rpull.go
	vpl valuePulls // valuepull.go
	fam famState   // famgraph.go
	// prev is what the previous phase left on DM (algo.Spec.Continue),
	// from vertex prevLo: the chunk's values, or every vertex's (famgraph).
	prev   []uint64
	prevLo uint32

	stats statsState
	ckpt  ckptState
	start *State // the chunk's kept state a resumed run starts from
	// startAll is every vertex's kept value, where the mode holds them
	// all (famgraph).
	startAll []uint64
	io       wordIO
	mem      hugemem.Arena // the large arrays of the cache, freed by close
	// ecache is the copies of the chunk's out- and in-entries (entrycache.go),
	// made with the first dmgFetcher; nil where none is kept.
	ecache     [2]*entryCache
	ecacheMade bool
	// probeTime is what taking Config.Probe's sample took.
	probeTime time.Duration
}

// plan is what one iteration does.
type plan struct {
	index  int
	dense  bool
	pull   bool // dense and the mode pulls: local candidates are gathered at the destination
	pullIn bool // the pull reads the in-layout (directed graph); else the out-lists
	// bottomUp: a dense traversal iteration in which every unreached
	// vertex checks all its in-neighbours, the remote ones against their
	// chunks' frontier bitmaps, and the frontier sends nothing.
	bottomUp bool
	remote   remotePath
	refrd    bool // long segments for other chunks go by reference
	valrd    bool // other segments go by value
	// sparseVal: a sparse iteration sends segments of at least
	// Config.SparseValRDMin edges for other chunks by value.
	sparseVal bool
	// rpull: a dense pull iteration in which each CN also pulls for the
	// other chunks' vertices (rpull.go) and nothing is sent.
	rpull bool
	// vpull: a dense pull iteration in which every CN pulls its vertices'
	// whole in-lists against every chunk's contributions (valuepull.go)
	// and nothing is sent.
	vpull bool
	// reached: a sparse iteration of a traversal whose candidates for
	// other chunks are checked against their reached bitmaps, shared on
	// DM at its start, and dropped for reached vertices.
	reached bool
	// fresh: a sparse iteration of a kernel whose far words bound its
	// values (engine.boundsValues) reads them again from the
	// contributions on DM at its start, so that its candidates for other
	// chunks are checked against the values as the last apply left them.
	fresh bool
	// relax: a pull of a Relax kernel (algo.Spec.Relax): a vertex
	// whose pull lowers its value publishes it at once in the words the
	// CN's other pulls read (Gauss–Seidel within the CN).
	relax   bool
	valrdAt string // who applies ValRD pairs: "cn" or "mn" ("" when none are sent)
	sparseT bool   // tasks index the frontier list
	// skipIdle: the pull tests the frontier's bitmap before it loads a
	// source's contribution. It pays when the frontier holds few of the
	// vertices (most loads would miss the cache for an identity); with a
	// large frontier the test's branch costs more than it saves.
	skipIdle bool
}

// bottomUp is the state of a traversal's bottom-up step: the other
// chunks' frontier bitmaps (remote), and the candidate every frontier
// vertex sends in this iteration (a traversal's are all equal).
type bottomUp struct {
	remote bitmap
	trav   uint64
}

// laneSum is one worker's part of the apply's job-wide sums.
type laneSum struct {
	activeV, activeE uint64
	dangling         float64
}

// Run executes cfg.Program on every rank of w: CNs compute over their chunk
// [Bounds[i], Bounds[i+1]) of the graph stored in st; MNs take part in the
// phase boundaries while their pools serve the fabric, and apply ValRD
// pairs when chosen to. degrees are the out-degrees of this CN's chunk (nil
// on MNs).
//
// eps are this CN's endpoints, one per worker goroutine (nil on MNs), and
// puller the RefRD puller's (nil without one); the caller closes them.
//
// A Phased program runs its phases in turn, each a run of the engine; the
// result sums theirs, and its values are the kernel's.
func Run(w *spmd.World, net verbs.Network, st *Store, eps []verbs.Endpoint, puller verbs.Endpoint, degrees []uint32, cfg Config) (*Result, error) {
	phased, ok := cfg.Program.(algo.Phased)
	if ok && (cfg.Checkpoint != nil || cfg.Resume != nil) {
		return nil, errors.New("rank: a phased kernel's run is not checkpointed")
	}
	if !ok {
		return runProgram(w, net, st, eps, puller, degrees, cfg)
	}
	total := &Result{}
	for {
		res, err := runProgram(w, net, st, eps, puller, degrees, cfg)
		if err != nil {
			return nil, err
		}
		total.add(res)
		if cfg.Program, err = phased.Next(len(res.Iterations), res.Values); err != nil {
			return nil, &ParamError{Msg: err.Error()}
		}
		if cfg.Program == nil {
			total.Values = phased.Result()
			return total, nil
		}
	}
}

// runProgram is one run of the engine: cfg.Program from its initial
// values to its last iteration.
func runProgram(w *spmd.World, net verbs.Network, st *Store, eps []verbs.Endpoint, puller verbs.Endpoint, degrees []uint32, cfg Config) (*Result, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Program == nil {
		return nil, errors.New("rank: Run needs a program")
	}
	if w.Roles.MN == 0 {
		// The MNs are a served pool's, which run no engine: the owners
		// apply their ValRD pairs.
		if cfg.ValRDApply == "mn" {
			return nil, paramErrorf("--valrd-apply mn needs memory nodes in the job; a job attached to a pool applies on its compute nodes (cn)")
		}
		cfg.ValRDApply = "cn"
	}
	if cfg.Sync == nil {
		cfg.Sync = BarrierSync(w)
	}
	if cfg.MergeGap == 0 {
		cfg.MergeGap = verbs.MergeGap(net)
	}
	if cfg.SparseValRDMin == 0 {
		cfg.SparseValRDMin = sparseValRDMin(net)
	}
	if cfg.Batch == 0 {
		cfg.Batch = taskVertices(net, st, len(eps))
	}
	m, _ := parseMode(cfg.Mode)
	e := &engine{w: w, net: net, st: st, cfg: cfg, mode: m, prog: cfg.Program, spec: cfg.Program.Spec(), cn: w.Role == spmd.CN, numMN: net.NumMN()}
	e.op = reduce.OpOf(e.spec)
	if e.spec.Edge == algo.Custom {
		ed, ok := algo.EdgerOf(e.prog)
		if !ok {
			return nil, errors.New("rank: the program has a custom edge map but no Edger")
		}
		e.edgr = ed
	}
	// What the kernels that need the engine's special operators require
	// of the program, then of the configuration (job checks the latter
	// before anything is read; a caller of Run may not have).
	var err error
	switch {
	case e.op.IsBag():
		e.multi.upd, err = checkBag(e.spec, e.prog)
	case e.spec.Triangles:
		err = checkTriangles(e.spec)
	}
	if err == nil {
		_, err = NeedsOf(e.cfg, e.spec)
	}
	if err != nil {
		return nil, err
	}
	if e.cn {
		if len(eps) == 0 {
			return nil, errors.New("rank: a compute node needs at least one endpoint")
		}
		e.me = w.Index
		e.lo, e.hi = st.Out.Config.Bounds[e.me], st.Out.Config.Bounds[e.me+1]
		if uint32(len(degrees)) != e.hi-e.lo {
			return nil, errors.Errorf("rank: %d degrees for a chunk of %d vertices", len(degrees), e.hi-e.lo)
		}
		e.deg = degrees
		e.rangeCost = balance.EdgeCost(e.deg, e.lo, balance.TaskAlpha)
		if cfg.NoDoorbell {
			wrapped := make([]verbs.Endpoint, len(eps))
			for i, ep := range eps {
				wrapped[i] = perOp(ep)
			}
			eps = wrapped
			if puller != nil {
				puller = perOp(puller)
			}
		}
		e.pullEP = puller
	}
	defer e.close()
	res := &Result{}
	start := time.Now()
	e.vpl.on = e.valuePulls()
	e.pol = newPolicy(e)
	e.stats.countFrom(append(slices.Clone(eps), puller))
	if e.spec.Continue {
		var ep verbs.Endpoint
		if e.cn {
			ep = eps[0]
		}
		if err := cfg.Sync(e.readPrevious(ep), nil); err != nil {
			return nil, err
		}
	}
	if cfg.Resume != nil {
		if err := e.readState(eps); err != nil {
			return nil, err
		}
	}
	// The first boundary: every rank is set up; the first iteration's
	// density from the initial frontier.
	sums, err := e.boundary(e.setup(eps), true)
	if err != nil {
		return nil, err
	}
	res.SetupSeconds = time.Since(start).Seconds()
	e.stats.prev = sums
	maxIter := e.spec.Iterations
	if maxIter == 0 {
		maxIter = int(st.N()) + 1
	}
	first := 0
	if cfg.Resume != nil {
		first = cfg.Resume.Done()
	}
	e.ckpt = ckptState{last: first, bytes: sums.verbs.Bytes()}
	res.StartedAt = first
	it := first
	for ; it < maxIter && (e.spec.Iterations > 0 || sums.activeV > 0); it++ {
		if err := e.probe(it, sums); err != nil {
			return nil, err
		}
		t0 := time.Now()
		e.plan(it, sums)
		s := IterStats{Dense: e.it.dense, ActiveVertices: sums.activeV, ActiveEdges: sums.activeE, Update: e.it.remote.String(), ValRDAt: e.it.valrdAt}
		if sums, err = e.iterate(sums, &s); err != nil {
			return nil, err
		}
		s.Seconds = time.Since(t0).Seconds()
		res.Iterations = append(res.Iterations, s)
		if w.Rank() == 0 {
			cfg.Logf("iter %d %s (%s update) %d active vertices, %d active edges, %d remote ops, %.3fs", it, e.it, s.Update, s.ActiveVertices, s.ActiveEdges, s.Verbs.Ops(), s.Seconds)
		}
		if err := e.checkpoint(it+1, sums, res); err != nil {
			return nil, err
		}
	}
	res.ComputeSeconds = time.Since(start).Seconds() - e.probeTime.Seconds() // the check's time is not the run's
	if p := cfg.Probe; p != nil && p.At >= it {
		if err := e.probe(p.At, sums); err != nil { // after the last iteration
			return nil, err
		}
	}
	if err := e.finish(res); err != nil {
		return nil, err
	}
	return res, nil
}

// iterate runs one iteration's phases and returns the sums of its last
// boundary, filling s with its statistics. The design's iteration has two
// boundaries, the push's barrier and the fused all-reduce after the apply
// (three when the MNs apply ValRD pairs); FAM-Graph's exchanges add two.
func (e *engine) iterate(prev sums, s *IterStats) (sums, error) {
	sync := e.cfg.Sync
	ph := &e.stats.phase
	*ph = phaseTimes{}
	var err error
	t := time.Now()
	if e.it.bottomUp {
		// Every CN's frontier bitmap on DM before any CN reads them.
		if err := sync(e.shareFrontier(), nil); err != nil {
			return sums{}, err
		}
	}
	if e.it.vpull && e.vpl.stale && e.contribsOnDM() {
		// A sparse apply changed contributions it did not write.
		if err := sync(e.shareContribs(), nil); err != nil {
			return sums{}, err
		}
	}
	e.vpl.stale = e.it.sparseT && !e.boundsValues() // whose sparse applies write them (writeChanged)
	if e.valuesBehind && e.prunesByValues() && e.it.remote == viaDirect && !e.it.bottomUp {
		// The push prunes direct candidates against the values on DM:
		// stale ones would prune fewer.
		if err := sync(e.catchUpValues(), nil); err != nil {
			return sums{}, err
		}
	}
	if e.it.reached {
		// Every CN's reached bitmap on DM before any CN reads them.
		if err := sync(e.shareReached(), nil); err != nil {
			return sums{}, err
		}
	}
	if e.cn {
		err = e.push()
	}
	ph.push = time.Since(t)
	t = time.Now()
	if err := sync(err, nil); err != nil {
		return sums{}, err
	}
	ph.wait += time.Since(t)
	if e.it.valrdAt == "mn" {
		t := time.Now()
		if err := sync(e.mnApply(), nil); err != nil {
			return sums{}, err
		}
		ph.mnApply = time.Since(t)
	}
	if e.mode.exchanges() {
		if err := sync(e.mode.exchange(e), nil); err != nil {
			return sums{}, err
		}
	}
	e.stats.drainSeconds = 0
	t = time.Now()
	if e.cn {
		err = e.apply()
	}
	e.valuesBehind = e.valuesBehind || e.it.dense && e.lazyValues()
	ph.apply = time.Since(t)
	if e.mode.exchanges() {
		if err := sync(err, nil); err != nil {
			return sums{}, err
		}
		err = e.mode.refresh(e)
	}
	e.stats.mnApplySeconds = ph.mnApply.Seconds()
	t = time.Now()
	next, err := e.boundary(err, false)
	if err != nil {
		return sums{}, err
	}
	ph.wait += time.Since(t)
	e.record(s, next)
	return next, nil
}

// plan decides iteration it (the policy's plan) and readies the frontier
// and tasks for it.
func (e *engine) plan(it int, prev sums) {
	e.it = e.pol.plan(facts{index: it, activeV: prev.activeV, activeE: prev.activeE, hasTrav: prev.hasTrav,
		valrdAt: e.stats.chooseValRD(e.cfg.ValRDApply)})
	e.bu.trav = prev.trav
	if !e.cn {
		return
	}
	if e.it.sparseT {
		e.front.asList()
		e.sparse = sparseTasks(e.front.list, e.deg, e.lo, e.cfg.Batch, e.cfg.HubDegree, !e.cfg.NoHubSplit, e.sparse[:0])
		e.queue.Reset(e.sparse, e.listCost, !e.cfg.NoSteal)
	} else {
		e.front.asBits()
		e.queue.Reset(e.tasks, e.rangeCost, !e.cfg.NoSteal)
	}
}

// BarrierSync is the phase boundary used when the caller gives none: an
// all-reduce of the vector with a failure flag appended. (launch.Job.Sync
// also prints the failing rank's error once and aborts a job whose peers
// do not arrive.)
func BarrierSync(w *spmd.World) Sync {
	var buf []float64
	return func(err error, sum []float64) error {
		v := append(buf[:0], sum...)
		flag := 0.0
		if err != nil {
			flag = 1
		}
		v = append(v, flag)
		buf = v
		if rerr := w.Comm.AllReduceFloat64(v, spmd.Sum); rerr != nil {
			return rerr
		}
		copy(sum, v)
		if err != nil {
			return err
		}
		if v[len(v)-1] != 0 {
			return errors.New("rank: another rank failed")
		}
		return nil
	}
}

// close ends the workers and gives the cache's large arrays back; a
// second call does nothing.
func (e *engine) close() {
	if e.pull != nil {
		_ = e.pull.stop()
		e.pull = nil
	}
	if e.gang != nil {
		e.gang.close()
		e.gang = nil
	}
	e.mem.Free()
}

// f64 is a value word as a float64.
func f64(x uint64) float64 { return math.Float64frombits(x) }

// errRefSegment is a RefRD segment whose destinations are not the owner's.
func errRefSegment(it update.RefItem, lo, hi uint32) error {
	return errors.Errorf("rank: RefRD segment at %v from vertex %d is not %d sorted destinations of chunk [%d, %d) (corrupt store or mailbox)", it.Seg, it.Src, it.Edges, lo, hi)
}

// shareFrontier writes the own chunk's frontier bitmap to DM (the
// bottom-up step reads the other chunks' after the barrier that follows).
func (e *engine) shareFrontier() error {
	if !e.cn {
		return nil
	}
	e.front.asBits()
	return e.shareBits(e.front.bits)
}

// shareReached writes the own chunk's reached bitmap to DM, where its
// frontier's goes before a bottom-up step (a pruned sparse push reads the
// other chunks' after the barrier that follows).
func (e *engine) shareReached() error {
	if !e.cn {
		return nil
	}
	return e.shareBits(e.reached)
}

func (e *engine) shareBits(b bitmap) error {
	wk := e.wks[0]
	return verbs.WriteBulk(wk.ep, e.st.bits[e.me], update.WordBytes(b, &wk.bytes))
}

// readFrontiers ORs the other chunks' bitmaps on DM into e.bu.remote (a
// bitmap over every vertex; the own chunk's bits are left clear): their
// frontiers before a bottom-up step, their reached sets before a pruned
// sparse push. Either is a subset of the reached vertices, and the bits
// of earlier iterations it keeps are reached vertices too: a bottom-up
// step's vertex has none of them as in-neighbour (it would be reached),
// and a pruned push drops what it finds reached.
func (e *engine) readFrontiers() error {
	b := e.st.Out.Config.Bounds
	if e.bu.remote == nil {
		e.bu.remote = make(bitmap, (e.st.N()+63)/64+1)
	}
	wk := e.wks[0]
	for k := range len(b) - 1 {
		if k == e.me || b[k] == b[k+1] {
			continue
		}
		n := bitmapBytes(b[k+1] - b[k])
		wk.bytes = grow(wk.bytes, int(n))
		if err := verbs.ReadBulk(wk.ep, wk.bytes, e.st.bits[k]); err != nil {
			return err
		}
		// Chunk k's bit i is vertex b[k]+i: shift the words into place.
		orBits(e.bu.remote, b[k], wk.bytes, b[k+1]-b[k])
	}
	return nil
}

// orBits sets in dst (a bitmap over every vertex) the n bits of the
// little-endian bitmap src, from vertex lo on.
func orBits(dst []uint64, lo uint32, src []byte, n uint32) {
	for i := uint32(0); i < n; i += 64 {
		w := binary.LittleEndian.Uint64(src[i/8:])
		if m := n - i; m < 64 {
			w &= 1<<m - 1
		}
		if w == 0 {
			continue
		}
		at := lo + i
		dst[at/64] |= w << (at % 64)
		if s := at % 64; s != 0 {
			dst[at/64+1] |= w >> (64 - s)
		}
	}
}
