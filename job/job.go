package job

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// Config is one run of one algorithm on one graph.
type Config struct {
	Algo string
	// Kernel, when set, is the algorithm run instead of the registered one
	// named Algo (a kernel of the caller's own; every rank must pass it).
	Kernel *algo.Algorithm
	Graph  string
	Csr    csr.Options
	// Source is the external id of the source vertex of kernels that have
	// one; HasSource says whether it was given (else the Graphalytics
	// properties, else the vertex with the most out-edges).
	Source    uint64
	HasSource bool
	// Iterations and Damping (PageRank); 0 takes the properties' or the
	// kernel's defaults.
	Iterations int
	Damping    float64
	// Alpha weighs vertices against edges in stage-1 partitioning
	// (0: balance.DefaultAlpha).
	Alpha float64
	// MNMem is each MN's pool size; 0 sizes pools to the graph plus
	// headroom.
	MNMem uint64
	// Open opens the data path (memfab or fabric) with the given config.
	Open   func(cfg verbs.Config) (verbs.Network, error)
	Engine rank.Config
	// Layout tunes the DM layout (entry size, in-place storage); the
	// memory nodes, chunk bounds and attribute arrays are filled in.
	Layout csr.LayoutConfig
	// RowBytes bounds the rows a CN builds at once
	// (csr.ShareOptions.RowBytes, at least MinRowBytes); 0: no bound.
	RowBytes int64
	// LoadProgress, if set, is called as this CN loads its chunk.
	LoadProgress func(csr.LoadProgress)
	// ReadProgress, if set, is told how many bytes of its range of the
	// input this CN has parsed, of how many (staged reads).
	ReadProgress func(done, total int64)
	// Phase, if set, is told the name of each phase as it starts (for a
	// rank that is interrupted to say where).
	Phase func(name string)
	// PeerTimeout, when positive, starts the liveness heartbeats once the
	// fabric is open: a peer whose heartbeat has not moved for this long
	// is reported to Stalled (once), which ends the job.
	PeerTimeout time.Duration
	Stalled     func(msg string)
	// RankName, if set, names a rank in Stalled's message ("rank R (cn I
	// on HOST)"); the default leaves out the host.
	RankName func(rank int) string
	// NoStage makes every CN read the whole input, as for inputs that
	// cannot be staged, instead of each its byte range of a text edge
	// list with the edges meeting their owners in DM (csr.OpenStaged).
	NoStage bool
	// LoadOnly stops after loading (dmg load): no algorithm is needed.
	LoadOnly bool
	// KeepGraph makes world rank 0 read the whole graph again after the
	// run, into Outcome.Graph, for a serial verifier (the CNs hold only
	// their shares while they work).
	KeepGraph bool
	// PreCheck runs on world rank 0 in the first phase (e.g. that --out is
	// writable), so bad output paths fail before any work.
	PreCheck func() error
	// Pool, when set, is a served pool this job of compute nodes alone
	// works on: a load (LoadOnly) stores the graph there under Pool.Name
	// for later jobs, a run computes on the graph of that name.
	Pool *Pool

	// needs is what the kernel in this configuration asks of the job
	// (rank.NeedsOf), answered in the first phase.
	needs rank.Needs
}

// Outcome is what Execute reports on each rank.
type Outcome struct {
	Algorithm algo.Algorithm
	Params    algo.Params
	// SourceID is the source's external id and SourceFrom how it was
	// chosen ("--source", "properties", "most out-edges"; kernels with a
	// source only).
	SourceID   uint64
	SourceFrom string
	Meta       *csr.Meta // on the CNs (the MNs do not read the graph)
	Vertices   uint64
	Edges      uint64
	Graph      *csr.Graph // rank 0: the vertices (N, IDs); the whole graph with KeepGraph
	Result     *rank.Result
	Chunks     []uint32
	Imbalance  float64
	MNPool     []uint64 // pool bytes per MN
	MNUsed     []uint64 // bytes of graph, reverse adjacency and regions per MN
	// InBytes is the reverse adjacency's bytes per MN (directed graphs the
	// engine pulls on; nil when the graph is symmetric or not needed).
	InBytes      []uint64
	Symmetric    bool            // the graph's in-edges are its out-edges
	InPlaceShare float64         // vertices whose edges sit in their index entry
	Load         *csr.LoadReport // this CN's loading
	// StagedBytes is the staging memory the CNs' staged read of a text
	// edge list used in DM (csr.OpenStaged); 0 when every CN read the
	// whole input.
	StagedBytes uint64
	Layout      *csr.Layout
	Degrees     csr.DegreeSummary // LoadOnly, rank 0
	Provider    string
	Workers     int // goroutines per CN
	NICProfile  string
	Mode        string
	Ablations   []string
	LoadS       float64
	// Pooled is the graph's name when the job ran on a served pool's
	// graph (LoadS is then the attach: lease, descriptor, regions), and
	// Recut says the attach cut a view of it for this job's compute
	// nodes.
	Pooled   string
	Recut    bool
	PartS    float64
	ComputeS float64
}

// The phases of Execute, in order; phaseNames names them (Config.Phase,
// the liveness words).
const (
	phaseParams = iota
	phaseRead
	phaseLayout
	phaseLoad
	phaseCompute
)

var phaseNames = [...]string{"checking the parameters", "reading the graph", "laying out the store", "loading the memory nodes", "computing"}

// poolHeadroom is added to a pool sized from the graph.
const poolHeadroom = 1 << 16

// Execute runs one job on every rank: read or generate the graph, cut it
// into chunks, open the fabric with pools sized for it, load each CN's
// chunk into DM, run the kernel. Every phase ends with cfg.Engine.Sync, so
// all ranks go on or all stop. Each CN holds only its share of the graph
// (csr.OpenShareWith), and only until its chunk is in DM.
func Execute(w *spmd.World, cfg Config) (*Outcome, error) {
	cfg.Engine.EnsureDefaults()
	if cfg.Engine.Sync == nil {
		cfg.Engine.Sync = rank.BarrierSync(w)
	}
	sync := cfg.Engine.Sync
	agree := func(err error) error { return sync(err, nil) }
	if cfg.Pool != nil && !cfg.LoadOnly {
		return runOnPool(w, cfg)
	}
	var live *liveness
	cur := phaseParams
	phase := func(i int) {
		cur = i
		if cfg.Phase != nil {
			cfg.Phase(phaseNames[i])
		}
		live.setPhase(i)
	}
	out := &Outcome{}
	t0 := time.Now()

	phase(phaseParams)
	// Phase 0: parameters and output paths, before any reading.
	err := cfg.Engine.Validate()
	var alg algo.Algorithm
	var kspec algo.Spec // a load's is the zero one: it asks for the layout alone
	if err == nil && !cfg.LoadOnly {
		if alg, err = lookup(&cfg, cfg.Algo); err == nil {
			kspec = alg.New(algo.Params{}).Spec()
		}
	}
	if err == nil {
		cfg.needs, err = rank.NeedsOf(cfg.Engine, kspec)
	}
	if err == nil && cfg.PreCheck != nil && w.Rank() == 0 {
		err = cfg.PreCheck()
	}
	var pl *poolLoad
	if cfg.Pool != nil {
		pl = &poolLoad{p: cfg.Pool}
		if err == nil {
			err = pl.claim(w)
		}
		defer pl.abandon()
	}
	// Whether the CNs read the graph staged (each its byte range, the
	// edges meeting their owners in DM): rank 0, CN 0, looks at the
	// input (the MNs may not see the file), and every rank learns it here.
	staged := []float64{0}
	if err == nil && w.Rank() == 0 && w.Roles.CN > 1 && !cfg.NoStage && cfg.Pool == nil && csr.Stageable(cfg.Graph, graphOptions(&cfg, alg)) {
		staged[0] = 1
	}
	if err := sync(err, staged); err != nil {
		return nil, err
	}
	var stg *stage
	if staged[0] != 0 {
		stg = &stage{w: w, open: cfg.Open}
		defer func() {
			if p := recover(); p != nil {
				panic(p) // no collective close: the others may be elsewhere
			}
			stg.close()
		}()
	}
	out.Algorithm = alg
	phase(phaseRead)
	// Phase 1: the graph, its partition and the program. Each compute node
	// reads its share of the graph (and, for a directed graph the engine
	// pulls on, its in-edges); the memory nodes learn its shape from CN 0
	// and, in phase 2, its layout.
	wantIn := !cfg.LoadOnly && cfg.needs.In
	if cfg.LoadOnly {
		// A graph stored in a served pool keeps its in-edges, for the
		// kernels that pull on it later.
		wantIn = cfg.Pool != nil
	}
	var sh *csr.Share
	var top uint32 // the vertex with the most out-edges
	var spec programSpec
	var facts chunkFacts
	if w.Role == spmd.CN {
		if sh, spec, err = prepare(&cfg, alg, wantIn, out, w, stg); err == nil {
			top = sh.Top
			facts, err = measure(w, &cfg, alg, sh, out.Chunks)
		}
	} else if stg != nil {
		err = csr.ServeStaged(stg)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	if stg != nil {
		out.StagedBytes = stg.bytes()
	}
	var shape jobShape
	if err = crossCheck(w, out.Chunks); err == nil {
		shape, err = shareShape(w, spec, sh, &facts, out.Meta, cfg.Engine.Workers*cfg.Engine.Inflight)
	}
	if err == nil && shape.Vertices == 0 {
		err = &rank.ParamError{Msg: fmt.Sprintf("the graph %s has no vertices (an empty input); expected at least one edge or vertex", cfg.Graph)}
	}
	if err == nil && uint64(w.Roles.CN) > shape.Vertices {
		// A chunk holds at least one vertex (every rank knows the count:
		// they fail alike, before the layout's collectives).
		err = &rank.ParamError{Msg: fmt.Sprintf("%d compute nodes for a graph of %d vertices; expected at most one compute node per vertex (--roles)", w.Roles.CN, shape.Vertices)}
	}
	if err == nil && cfg.LoadOnly {
		out.Degrees, err = gatherDegrees(w, &facts)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	// A directed graph whose every share lists the same in- as out-edges
	// is symmetric: the out-lists serve the pull.
	var windowed bool
	out.Symmetric, windowed, err = shareTraits(w, sh)
	if err := agree(err); err != nil {
		return nil, err
	}
	hasIn := wantIn && !out.Symmetric
	// The read ends before the store's pools are opened, unless a windowed
	// share's load still reads its edges from what the read kept: the
	// memory that the CNs' kept edges and the MNs' staging memory free
	// then backs the pools instead of fresh pages (on this VM a fresh page
	// can cost more than the copy into it).
	if !windowed {
		if err := endStage(w, sh, stg, out, agree); err != nil {
			return nil, err
		}
	}
	if !cfg.LoadOnly {
		if alg, err = lookup(&cfg, shape.Spec.Algo); err != nil {
			return nil, err
		}
		out.Algorithm, out.Params = alg, shape.Spec.Params
		out.SourceID, out.SourceFrom = shape.Spec.SourceID, shape.Spec.SourceFrom
		s := alg.New(out.Params).Spec()
		shape.Multiset, shape.Triangles = s.Reduce == algo.Multiset, s.Triangles
	}
	out.Vertices, out.Edges = shape.Vertices, shape.Edges
	out.Workers, out.NICProfile = cfg.Engine.Workers*cfg.Engine.Inflight, cfg.Engine.Profile.Name
	out.Mode, out.Ablations = cfg.Engine.Mode, ablations(cfg)
	loadRead := time.Since(t0)

	phase(phaseLayout)
	// Phase 2: lay out (each CN measures its chunk, they share the
	// figures, CN 0's layouts go to the MNs and are checked against the
	// other CNs'), size pools, open the fabric.
	t2 := time.Now()
	layouts, err := planLayouts(w, &cfg, shape, &facts, hasIn, out.Chunks, nil)
	if err == nil && pl != nil {
		// Again at the extents the pool gives the graph.
		needed := make([]uint64, len(layouts.last().MN))
		for m, u := range layouts.last().MN {
			needed[m] = u.Needed
		}
		var base []uint64
		if base, err = pl.place(w, needed); err == nil {
			layouts, err = planLayouts(w, &cfg, shape, &facts, hasIn, out.Chunks, base)
		}
	}
	if err == nil {
		out.Chunks = layouts.Out.Config.Bounds
	}
	last := layouts.last()
	if err == nil && cfg.MNMem > 0 && pl == nil {
		avail := make([]uint64, cfg.numMN(w))
		for m := range avail {
			avail[m] = usableBytes(cfg.MNMem, w.Roles.Size())
		}
		if cerr := last.CheckCapacity(avail); cerr != nil {
			err = &rank.ParamError{Msg: "--mn-mem is too small: " + cerr.Error()}
		}
	}
	var net verbs.Network
	if pl != nil {
		net = cfg.Pool.Net
	} else if err == nil {
		pool := uint64(0)
		if w.Role == spmd.MN {
			pool = last.MN[w.Index].Needed + poolHeadroom + heartbeatBytes(w.Roles.Size())
			if cfg.MNMem > 0 {
				pool = cfg.MNMem
			}
		}
		net, err = cfg.Open(verbs.Config{PoolBytes: pool})
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	var st *rank.Store
	var eps []verbs.Endpoint
	closed := pl != nil // the caller closes a served pool's network
	defer func() {
		if p := recover(); p != nil {
			// A bug left this rank out of step with the others'
			// collectives: closing the network (a barrier) would wait for
			// them forever. The caller ends the job (MPI_Abort).
			live.close()
			panic(p)
		}
		live.close() // before the network it uses
		for _, ep := range eps {
			ep.Close()
		}
		if !closed {
			net.Close()
		}
	}()
	if cfg.PeerTimeout > 0 && cfg.Stalled != nil && pl == nil {
		var leps []verbs.Endpoint
		for range cfg.numMN(w) {
			if w.Role != spmd.CN || err != nil {
				break
			}
			var ep verbs.Endpoint
			if ep, err = net.NewEndpoint(); err == nil {
				leps = append(leps, ep)
			}
		}
		if err != nil {
			for _, ep := range leps {
				ep.Close()
			}
		} else {
			live = startLiveness(w, net, leps, cfg.PeerTimeout, phaseNames[:], cfg.Stalled, cfg.RankName)
			live.setPhase(cur)
		}
	}
	st, err = rank.NewStore(layouts.Out, layouts.In, storeConfig(cfg, shape, out.Chunks, cfg.numMN(w)))
	if err := agree(err); err != nil {
		return nil, err
	}
	out.Provider = net.Provider()
	out.InPlaceShare = layouts.Out.InPlaceShare()
	for m := range cfg.numMN(w) {
		out.MNPool = append(out.MNPool, net.PoolSize(m))
		out.MNUsed = append(out.MNUsed, last.MN[m].Needed-layouts.Out.MN[m].Start) // from the graph's extent in a served pool
		if layouts.In != nil {
			u := layouts.In.MN[m]
			out.InBytes = append(out.InBytes, u.IndexBytes+u.EdgeBytes)
		}
	}

	phase(phaseLoad)
	// Phase 3: every CN writes its chunk (and its in-lists), one endpoint
	// per worker goroutine (the engine keeps them: connection set-up is not
	// free on every fabric).
	var degrees []uint32
	var puller verbs.Endpoint
	usable := make([]uint64, len(out.MNPool))
	for m, p := range out.MNPool {
		usable[m] = usableBytes(p, w.Roles.Size())
	}
	if pl == nil {
		err = last.CheckCapacity(usable)
	}
	if err == nil && w.Role == spmd.CN {
		degrees = facts.degrees
		for range cfg.Engine.Workers * cfg.Engine.Inflight {
			var ep verbs.Endpoint
			if ep, err = net.NewEndpoint(); err != nil {
				break
			}
			eps = append(eps, ep)
		}
		if err == nil && cfg.needs.Puller && !cfg.LoadOnly {
			// The RefRD puller's own endpoint.
			if puller, err = net.NewEndpoint(); err == nil {
				defer puller.Close()
			}
		}
		if err == nil {
			out.Load, err = loadShare(sh, layouts, w.Index, eps, &facts, cfg.LoadProgress)
		}
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	if windowed {
		if err := endStage(w, sh, stg, out, agree); err != nil {
			return nil, err
		}
	}
	if pl != nil {
		st := stored{Graph: cfg.Graph, Csr: graphOptions(&cfg, alg), Layouts: layouts, Vertices: shape.Vertices, Edges: shape.Edges,
			MaxChunkEdges: shape.MaxChunkEdges, Symmetric: out.Symmetric, Top: top, CNs: w.Roles.CN}
		_, serr := pl.store(w, eps[0], &st, out, facts.degrees)
		if err := agree(serr); err != nil {
			return nil, err
		}
	}
	out.LoadS = loadRead.Seconds() + time.Since(t2).Seconds()
	sh, facts = nil, chunkFacts{} // the CNs compute from DM only
	out.Layout = layouts.Out
	if cfg.LoadOnly {
		live.close()
		if pl != nil {
			return out, agree(pl.ready(shape.Vertices, shape.Edges))
		}
		closed = true
		return out, agree(net.Close())
	}

	phase(phaseCompute)
	// Phase 4: compute.
	if err := compute(w, net, st, eps, puller, degrees, &cfg, alg, out); err != nil {
		return nil, err
	}
	closed = true
	live.close()
	err = net.Close()
	if err == nil && cfg.KeepGraph && w.Rank() == 0 {
		out.Graph, err = wholeGraph(&cfg, alg)
	}
	return out, agree(err)
}

// numMN is the job's memory nodes: its world's, or the served pool's.
func (cfg *Config) numMN(w *spmd.World) int {
	if cfg.Pool != nil {
		return cfg.Pool.Net.NumMN()
	}
	return w.Roles.MN
}

// compute runs the kernel on the store (the last phase) into out.
func compute(w *spmd.World, net verbs.Network, st *rank.Store, eps []verbs.Endpoint, puller verbs.Endpoint, degrees []uint32, cfg *Config, alg algo.Algorithm, out *Outcome) error {
	ecfg := cfg.Engine
	ecfg.Program = alg.New(out.Params)
	res, err := rank.Run(w, net, st, eps, puller, degrees, ecfg)
	if err != nil {
		return err
	}
	out.Result, out.ComputeS = res, res.ComputeSeconds
	return nil
}

// lookup is the algorithm a job runs: the caller's Kernel, or the
// registered one of that name.
func lookup(cfg *Config, name string) (algo.Algorithm, error) {
	if cfg.Kernel != nil {
		return *cfg.Kernel, nil
	}
	a, err := algo.Lookup(name)
	if err != nil {
		return a, &rank.ParamError{Msg: err.Error()}
	}
	return a, nil
}

func ablations(c Config) []string {
	a := []string{}
	if c.Layout.NoInPlace {
		a = append(a, "--no-inplace")
	}
	return append(a, c.Engine.Ablations()...)
}

func storeConfig(cfg Config, shape jobShape, bounds []uint32, numMN int) rank.StoreConfig {
	return rank.StoreConfig{Mode: cfg.Engine.Mode, ValMailbox: cfg.Engine.ValMailbox, RefMailbox: cfg.Engine.RefMailbox,
		Bounds: bounds, NumMN: numMN, Vertices: shape.Vertices, Edges: shape.Edges,
		Senders: shape.Senders, Multiset: shape.Multiset, Triangles: shape.Triangles, MaxChunkEdges: shape.MaxChunkEdges}
}

// layouts are a job's out-layout (lists and attributes) and, for directed
// graphs the engine pulls on, its in-layout after it.
type layouts struct {
	Out *csr.Layout
	In  *csr.Layout
}

func (l layouts) last() *csr.Layout {
	if l.In != nil {
		return l.In
	}
	return l.Out
}

// planLayouts lays the graph out: each CN measures its chunk, the figures
// are all-gathered and every CN plans the same layouts; CN 0's go to the
// memory nodes, the other CNs check theirs are byte-identical. The
// engine's regions are reserved after the last layout.
func planLayouts(w *spmd.World, cfg *Config, shape jobShape, f *chunkFacts, hasIn bool, chunks []uint32, base []uint64) (layouts, error) {
	lcfg, icfg := layoutConfigs(w, cfg, chunks)
	lcfg.Base = base
	var l layouts
	var err error
	reserve := uint64(0)
	if w.Role == spmd.CN && !cfg.LoadOnly {
		reserve = rank.Reserve(storeConfig(*cfg, shape, chunks, cfg.numMN(w)))
	}
	if !hasIn {
		lcfg.Reserve = reserve
	}
	l.Out, err = planOne(w, f.out, lcfg, shape.Vertices, shape.Edges, f.weighted)
	if err = planFailed(w, err); err != nil {
		return l, err
	}
	if hasIn {
		icfg.Reserve = reserve
		icfg.Base = make([]uint64, cfg.numMN(w))
		if l.Out != nil {
			for m, u := range l.Out.MN {
				icfg.Base[m] = u.End
			}
		}
		l.In, err = planOne(w, f.in, icfg, shape.Vertices, shape.Edges, f.weighted)
		if err = planFailed(w, err); err != nil {
			return l, err
		}
	}
	blob := []byte(nil)
	if w.Role == spmd.CN {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(l); err != nil {
			return l, errors.Wrap(err, "job: encoding the layout")
		}
		blob = buf.Bytes()
	}
	mine := blob
	if blob, err = w.Comm.Bcast(0, blob); err != nil {
		return l, err
	}
	if w.Role == spmd.CN {
		if !bytes.Equal(mine, blob) {
			return l, errors.Errorf("job: CN %d laid the graph out differently than CN 0 (different inputs on different nodes?)", w.Index)
		}
		return l, nil
	}
	var got layouts
	if err := gob.NewDecoder(bytes.NewReader(blob)).Decode(&got); err != nil {
		return l, errors.Wrap(err, "job: decoding the layout")
	}
	return got, nil
}

// planFailed tells the MNs that the CNs' plan failed: the CNs plan from
// the same gathered figures and fail alike, and no rank may be left in a
// collective that the others skipped. It is collective.
func planFailed(w *spmd.World, err error) error {
	v := []int64{0}
	if err != nil {
		v[0] = 1
	}
	if rerr := w.Comm.AllReduceInt64(v, spmd.Max); rerr != nil {
		return rerr
	}
	if v[0] == 1 && err == nil {
		return errors.New("job: the compute nodes could not lay the graph out")
	}
	return err
}

// planOne plans one layout from every CN's chunk sizes (sizes, on the
// CNs; the MNs only take part in the collectives).
func planOne(w *spmd.World, sizes csr.ChunkSizes, lcfg csr.LayoutConfig, vertices, edges uint64, weighted bool) (*csr.Layout, error) {
	all, err := gatherJSON(w, sizes, w.Role == spmd.CN)
	if err != nil || w.Role != spmd.CN {
		return nil, err
	}
	return csr.PlanSizes(uint32(vertices), edges, weighted, lcfg, all)
}

// shareTraits tells whether every CN's share has the same in- as
// out-edges (true for undirected graphs and when no in-edges were read),
// and whether some CN's share builds its rows window by window (its load
// then reads its kept edges and the staging memory).
func shareTraits(w *spmd.World, sh *csr.Share) (symmetric, windowed bool, err error) {
	v := []int64{0, 0}
	if sh != nil && !sh.Symmetric() { // directed without in-edges: not known to be
		v[0] = 1
	}
	if sh != nil && sh.Windowed() {
		v[1] = 1
	}
	if err := w.Comm.AllReduceInt64(v, spmd.Max); err != nil {
		return false, false, err
	}
	return v[0] == 0, v[1] == 1, nil
}

// endStage ends the read, collectively, once no CN needs its share's
// input any more: the share frees what it kept to build its rows, rank 0
// takes the vertices for the output (a staged share reads their ids from
// the staging memory), and the staging memory closes.
func endStage(w *spmd.World, sh *csr.Share, stg *stage, out *Outcome, agree func(error) error) error {
	sh.Free()
	var err error
	if w.Rank() == 0 {
		var ids []uint64
		ids, err = sh.ExternalIDs()
		out.Graph = &csr.Graph{N: sh.Graph.N, IDs: ids, Directed: sh.Graph.Directed}
	}
	if err := agree(err); err != nil {
		return err
	}
	return agree(stg.close())
}

// programSpec is what builds a kernel's program on any rank, so the memory
// nodes get it from CN 0 instead of reading the graph.
type programSpec struct {
	Algo       string // the algorithm's name, or "load"
	Params     algo.Params
	SourceID   uint64
	SourceFrom string
}

// jobShape is what CN 0 tells every rank after reading the graph.
type jobShape struct {
	Spec     programSpec
	Vertices uint64
	Edges    uint64
	// Senders is the worker goroutines of every CN together (each holds
	// its own ValRD blocks): the mailboxes are sized from it on every
	// rank, so every rank must know the same number.
	Senders int
	// Multiset says the kernel keeps every candidate, Triangles that it
	// runs the triangle operator (rank.StoreConfig).
	Multiset, Triangles bool
	// MaxChunkEdges is the most out-edges of one CN's chunk.
	MaxChunkEdges uint64
}

// shareShape sends CN 0's program to every rank (the other CNs check that
// their own, mine, is the same) and adds up the CNs' shares: the job's
// edges and, in rank 0's meta, the edges the builder dropped.
func shareShape(w *spmd.World, mine programSpec, sh *csr.Share, f *chunkFacts, meta *csr.Meta, goroutines int) (jobShape, error) {
	spec, err := bcastSpec(w, mine)
	if err != nil {
		return jobShape{}, err
	}
	if w.Role == spmd.CN && spec != mine {
		return jobShape{}, errors.Errorf("job: CN %d read a different graph than CN 0 (program %+v against %+v; different inputs on different nodes?)", w.Index, mine, spec)
	}
	sums := []int64{0, 0, 0, 0, 0}
	if w.Role == spmd.CN {
		sums = []int64{int64(f.edges), int64(meta.DroppedSelfLoops), int64(meta.DroppedDuplicates), 0, int64(goroutines)}
		if w.Index == 0 {
			sums[3] = int64(sh.Graph.N)
		}
	}
	if err := w.Comm.AllReduceInt64(sums, spmd.Sum); err != nil {
		return jobShape{}, err
	}
	most := []int64{0}
	if w.Role == spmd.CN {
		most[0] = int64(f.edges)
	}
	if err := w.Comm.AllReduceInt64(most, spmd.Max); err != nil {
		return jobShape{}, err
	}
	if w.Rank() == 0 {
		meta.DroppedSelfLoops, meta.DroppedDuplicates = uint64(sums[1]), uint64(sums[2])
	}
	return jobShape{Spec: spec, Vertices: uint64(sums[3]), Edges: uint64(sums[0]), MaxChunkEdges: uint64(most[0]), Senders: int(sums[4])}, nil
}

// gatherJSON gathers v from the ranks that contribute (the CNs, in CN
// order, which are world ranks 0..C-1).
func gatherJSON[T any](w *spmd.World, v T, contribute bool) ([]T, error) {
	var blob []byte
	if contribute {
		var err error
		if blob, err = json.Marshal(v); err != nil {
			return nil, errors.Wrap(err, "job: encoding")
		}
	}
	all, err := w.Comm.AllGather(blob)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, b := range all {
		if len(b) == 0 {
			continue
		}
		var x T
		if err := json.Unmarshal(b, &x); err != nil {
			return nil, errors.Wrap(err, "job: decoding")
		}
		out = append(out, x)
	}
	return out, nil
}

// gatherDegrees summarises the out-degrees of the whole graph for the load
// report: each CN gives its chunk's distribution (an entry per distinct
// degree, not a word per vertex); rank 0 merges them and gets the
// summary.
func gatherDegrees(w *spmd.World, f *chunkFacts) (csr.DegreeSummary, error) {
	var mine []byte
	if w.Role == spmd.CN {
		mine = csr.CountDegrees(f.degrees).AppendBinary(nil)
	}
	all, err := w.Comm.AllGather(mine)
	if err != nil || w.Rank() != 0 {
		return csr.DegreeSummary{}, err
	}
	parts := make([]csr.DegreeCounts, len(all))
	for r, b := range all { // the MNs' are empty
		if parts[r], err = csr.DecodeDegreeCounts(b); err != nil {
			return csr.DegreeSummary{}, errors.Wrapf(err, "job: rank %d's degrees", r)
		}
	}
	return csr.MergeDegreeCounts(parts...).Summary(), nil
}

// graphOptions are the csr options the algorithm reads its graph with.
func graphOptions(cfg *Config, alg algo.Algorithm) csr.Options {
	opts := cfg.Csr
	if cfg.LoadOnly {
		return opts
	}
	if alg.Symmetric {
		opts.Undirected = true
	}
	if alg.Multigraph {
		opts.Duplicates = csr.KeepDuplicates
	}
	switch {
	case alg.Weighted:
		opts.Weighted = true
	case !opts.Weighted:
		// A kernel that reads no weights does not pay for them: the
		// store holds its edges at 4 bytes, not 8.
		opts.Unweighted = true
	}
	return opts
}

// roundWeights rounds g's weights to float32 as the DM layout stores them,
// so verifiers see the weights the engine uses.
func roundWeights(g *csr.Graph) {
	if g == nil {
		return
	}
	for i, x := range g.Weights {
		g.Weights[i] = float64(float32(x))
	}
}

// wholeGraph reads the whole graph as the algorithm does (rank 0, for
// verification).
func wholeGraph(cfg *Config, alg algo.Algorithm) (*csr.Graph, error) {
	g, _, err := csr.Open(cfg.Graph, graphOptions(cfg, alg))
	if err == nil {
		roundWeights(g)
	}
	return g, err
}

// prepare reads this CN's share of the graph with the options the
// algorithm needs, partitions it on the way (out.Chunks, out.Imbalance,
// out.PartS) and resolves the algorithm's parameters.
func prepare(cfg *Config, alg algo.Algorithm, wantIn bool, out *Outcome, w *spmd.World, stg *stage) (*csr.Share, programSpec, error) {
	opts := graphOptions(cfg, alg)
	alpha := cfg.Alpha
	if alpha == 0 {
		alpha = balance.DefaultAlpha(w.Roles.CN)
	}
	part := func(deg []uint64) (uint32, uint32, error) {
		t := time.Now()
		chunks, err := balance.Chunks(deg, w.Roles.CN, alpha)
		if err != nil {
			return 0, 0, err
		}
		out.Chunks, out.Imbalance = chunks, balance.Imbalance(deg, chunks, alpha)
		out.PartS = time.Since(t).Seconds()
		return chunks[w.Index], chunks[w.Index+1], nil
	}
	so := csr.ShareOptions{In: wantIn, RowBytes: cfg.RowBytes, Align: uint32(cfg.Layout.BatchVertices), Progress: cfg.ReadProgress}
	var sh *csr.Share
	var meta *csr.Meta
	var err error
	if stg != nil {
		sh, meta, err = csr.OpenStaged(cfg.Graph, opts, so, &slicedCut{parts: w.Roles.CN, alpha: alpha, out: out}, stg, w.Index, w.Roles.CN)
	} else {
		sh, meta, err = csr.OpenShareWith(cfg.Graph, opts, so, part)
	}
	if err != nil {
		return nil, programSpec{}, err
	}
	out.Meta = meta
	if cfg.LoadOnly {
		return sh, programSpec{Algo: "load"}, nil
	}
	spec, err := resolve(cfg, alg, sh, sh.Top, meta)
	return sh, spec, err
}

// resolve chooses the algorithm's parameters: the flags, else the
// Graphalytics properties, else the kernel's defaults; for kernels with a
// source, the vertex given, named by the properties, or with the most
// out-edges (lowest id on ties; parallel edges counted).
func resolve(cfg *Config, alg algo.Algorithm, sh vertexIDs, top uint32, meta *csr.Meta) (programSpec, error) {
	p, err := alg.Configure(algo.Params{Iterations: cfg.Iterations, Damping: cfg.Damping}, meta)
	if err != nil {
		return programSpec{}, &rank.ParamError{Msg: err.Error()}
	}
	spec := programSpec{Algo: alg.Name, Params: p}
	if !alg.Source {
		return spec, nil
	}
	ext, from := cfg.Source, "--source"
	has := cfg.HasSource
	if !has && alg.SourceProperty != nil {
		if ext, has = alg.SourceProperty(meta); has {
			from = "properties"
		}
	}
	if !has {
		best := top
		id, err := sh.ExternalID(best)
		spec.Params.Source, spec.SourceID, spec.SourceFrom = best, id, "most out-edges"
		return spec, err
	}
	v, ok, err := sh.DenseID(ext)
	if err != nil {
		return programSpec{}, err
	}
	if !ok {
		return programSpec{}, &rank.ParamError{Msg: fmt.Sprintf("source vertex %d is not a vertex of %s", ext, cfg.Graph)}
	}
	spec.Params.Source, spec.SourceID, spec.SourceFrom = v, ext, from
	return spec, nil
}

// vertexIDs maps dense to external ids and back: a share's, or a
// stored graph's (graphIDs).
type vertexIDs interface {
	ExternalID(v uint32) (uint64, error)
	DenseID(ext uint64) (uint32, bool, error)
}

// slicedCut is the stage-1 cut (balance.Chunks) of a staged read, made
// from the slices of the degrees the CNs hold (csr.Cutter); it records
// the cut in out as the part function of a whole read does.
type slicedCut struct {
	parts int
	alpha float64
	out   *Outcome
	cut   balance.Cut
	secs  float64 // spent in Slice
}

func (c *slicedCut) Slice(deg []uint64, lo uint32, before uint64, n uint32, edges uint64) ([]csr.Boundary, error) {
	t := time.Now()
	c.cut = balance.Cut{Parts: c.parts, Alpha: c.alpha, N: n, Edges: edges}
	bs, err := c.cut.Slice(deg, lo, before)
	out := make([]csr.Boundary, len(bs))
	for i, b := range bs {
		out[i] = csr.Boundary(b)
	}
	c.secs = time.Since(t).Seconds()
	return out, err
}

func (c *slicedCut) Cut(placed []csr.Boundary) ([]uint32, error) {
	t := time.Now()
	bs := make([]balance.Boundary, len(placed))
	for i, b := range placed {
		bs[i] = balance.Boundary(b)
	}
	chunks, err := c.cut.Bounds(bs)
	if err != nil {
		return nil, err
	}
	c.out.Chunks, c.out.Imbalance = chunks, c.cut.Imbalance(chunks, bs)
	c.out.PartS = c.secs + time.Since(t).Seconds()
	return chunks, nil
}

// crossCheck verifies every CN computed the same chunk boundaries (the
// MNs, which have none, take part without a say).
func crossCheck(w *spmd.World, chunks []uint32) error {
	h := fnv.New64a()
	for _, c := range chunks {
		fmt.Fprintf(h, "%d,", c)
	}
	sum := int64(h.Sum64() >> 1)
	lo, hi := []int64{sum}, []int64{sum}
	if w.Role != spmd.CN {
		lo[0], hi[0] = math.MaxInt64, -1
	}
	if err := w.Comm.AllReduceInt64(lo, spmd.Min); err != nil {
		return err
	}
	if err := w.Comm.AllReduceInt64(hi, spmd.Max); err != nil {
		return err
	}
	if lo[0] != hi[0] {
		return errors.New("job: ranks disagree on the chunk boundaries (different inputs on different nodes?)")
	}
	return nil
}
