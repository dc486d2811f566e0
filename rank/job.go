package rank

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/pkg/errors"
)

// ParamError is a bad algorithm parameter (unknown algorithm, a source
// that is not a vertex, a negative weight for SSSP, a pool too small): the
// user's input, exit status 2.
type ParamError struct{ Msg string }

func (e *ParamError) Error() string  { return "rank: " + e.Msg }
func (e *ParamError) BadInput() bool { return true }

func paramErrorf(format string, args ...any) error {
	return &ParamError{Msg: fmt.Sprintf(format, args...)}
}

// Algorithms are the kernels Execute knows.
var Algorithms = []string{"pagerank", "bfs", "wcc", "sssp"}

// JobConfig is one run of one algorithm on one graph.
type JobConfig struct {
	Algo  string
	Graph string
	Csr   csr.Options
	// Source is the external id of the BFS/SSSP source; HasSource says
	// whether it was given (else the Graphalytics properties, else the first
	// vertex).
	Source    uint64
	HasSource bool
	// Iterations and Damping of PageRank; 0 takes the properties' or the
	// Graphalytics defaults (20, 0.85).
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
	Engine Config
	// Layout tunes the DM layout (entry size, in-place storage); the
	// memory nodes, chunk bounds and attribute arrays are filled in.
	Layout csr.LayoutConfig
	// LoadProgress, if set, is called as this CN loads its chunk.
	LoadProgress func(csr.LoadProgress)
	// LoadOnly stops after loading (dmg load): no algorithm is needed.
	LoadOnly bool
	// KeepGraph makes world rank 0 read the whole graph again after the
	// run, into Outcome.Graph, for a serial verifier (the CNs hold only
	// their shares while they work).
	KeepGraph bool
	// PreCheck runs on world rank 0 in the first phase (e.g. that --out is
	// writable), so bad output paths fail before any work.
	PreCheck func() error
}

// Outcome is what Execute reports on each rank.
type Outcome struct {
	Program      *algo.Program
	Meta         *csr.Meta // on the CNs (the MNs do not read the graph)
	Vertices     uint64
	Edges        uint64
	Source       uint32     // dense id (BFS, SSSP)
	Graph        *csr.Graph // rank 0: the vertices (N, IDs); the whole graph with KeepGraph
	Result       *Result
	Chunks       []uint32
	Imbalance    float64
	MNPool       []uint64        // pool bytes per MN
	MNUsed       []uint64        // bytes of graph and attributes per MN
	InPlaceShare float64         // vertices whose edges sit in their index entry
	Load         *csr.LoadReport // this CN's loading
	Layout       *csr.Layout
	Degrees      csr.DegreeSummary // LoadOnly, rank 0
	Provider     string
	Damping      float64 // PageRank
	Workers      int     // per CN
	NICProfile   string
	Mode         string
	Ablations    []string
	LoadS        float64
	PartS        float64
	ComputeS     float64
}

// poolHeadroom is added to a pool sized from the graph.
const poolHeadroom = 1 << 16

// Execute runs one job on every rank: read or generate the graph, cut it
// into chunks, open the fabric with pools sized for it, load each CN's
// chunk into DM, run the kernel. Every phase ends with cfg.Engine.Agree.
// Each CN holds only its share of the graph (csr.OpenShare), and only
// until its chunk is in DM.
func Execute(w *spmd.World, cfg JobConfig) (*Outcome, error) {
	cfg.Engine.EnsureDefaults()
	if cfg.Engine.Agree == nil {
		cfg.Engine.Agree = barrierAgree(w)
	}
	agree := cfg.Engine.Agree
	out := &Outcome{}
	t0 := time.Now()

	// Phase 0: parameters and output paths, before any reading.
	err := cfg.Engine.Validate()
	if err == nil {
		_, err = graphOptions(&cfg)
	}
	if err == nil && cfg.PreCheck != nil && w.Rank() == 0 {
		err = cfg.PreCheck()
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	// Phase 1: the graph, its partition and the program. Each compute node
	// reads its share of the graph: a first pass counts degrees, stage-1
	// partitioning cuts the chunks from them (the same on every CN), a
	// second pass keeps the out-edges of the own chunk. The memory nodes do
	// not read the graph: they learn its shape from CN 0 and, in phase 2,
	// its layout.
	var g *csr.Graph
	var spec programSpec
	if w.Role == spmd.CN {
		g, spec, err = prepare(&cfg, out, w)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	var shape jobShape
	if err = crossCheck(w, out.Chunks); err == nil {
		shape, err = shareShape(w, spec, g, out.Meta)
	}
	if err == nil && cfg.LoadOnly {
		out.Degrees, err = gatherDegrees(w, g, out.Chunks)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	prog := shape.Spec.program()
	out.Program, out.Vertices, out.Edges = prog, shape.Vertices, shape.Edges
	out.Workers, out.NICProfile = cfg.Engine.Workers, cfg.Engine.Profile.Name
	out.Mode, out.Ablations = cfg.Engine.Mode, ablations(cfg)
	loadRead := time.Since(t0)

	// Phase 2: lay out (each CN measures its chunk, they share the
	// figures, CN 0's layout goes to the MNs and is checked against the
	// other CNs'), size pools, open the fabric.
	t2 := time.Now()
	lcfg := cfg.Layout
	lcfg.NumMN, lcfg.Bounds, lcfg.AttrBytes = w.Roles.MN, out.Chunks, attrBytes
	mode := cfg.Engine.Mode
	lcfg.Naive = mode == ModeNaive || mode == ModeFAMGraph
	valCap, refCap := mailboxSizes(cfg.Engine, shape.Vertices, shape.Edges)
	var layout *csr.Layout
	var sizes csr.ChunkSizes
	if w.Role == spmd.CN {
		switch mode {
		case ModeDMG, "":
			lcfg.Reserve = update.Reserve(w.Roles.CN, w.Roles.MN, valCap, refCap)
		case ModeFAMGraph:
			lcfg.Reserve = famReserve(out.Chunks, w.Roles.MN)
		}
		sizes, err = csr.SizeChunk(g, lcfg, w.Index)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	all, err := gatherJSON(w, sizes, w.Role == spmd.CN)
	if err == nil && w.Role == spmd.CN {
		layout, err = csr.PlanSizes(uint32(shape.Vertices), shape.Edges, g.Weights != nil, lcfg, all)
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	layout, err = shareLayout(w, layout)
	if err == nil {
		out.Chunks = layout.Config.Bounds
	}
	if err == nil && cfg.MNMem > 0 {
		avail := make([]uint64, w.Roles.MN)
		for m := range avail {
			avail[m] = cfg.MNMem
		}
		if cerr := layout.CheckCapacity(avail); cerr != nil {
			err = &ParamError{Msg: "--mn-mem is too small: " + cerr.Error()}
		}
	}
	var net verbs.Network
	if err == nil {
		pool := uint64(0)
		if w.Role == spmd.MN {
			pool = layout.MN[w.Index].Needed + poolHeadroom
			if cfg.MNMem > 0 {
				pool = cfg.MNMem
			}
		}
		net, err = cfg.Open(verbs.Config{PoolBytes: pool})
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	st := &Store{Layout: layout}
	switch mode {
	case ModeDMG, "":
		st.mailboxes = update.PlanMailboxes(layout, valCap, refCap)
	case ModeFAMGraph:
		st.fam = planFAM(layout)
	}
	var eps []verbs.Endpoint
	closed := false
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
		if !closed {
			net.Close()
		}
	}()
	out.Provider = net.Provider()
	out.InPlaceShare = layout.InPlaceShare()
	pools := make([]uint64, w.Roles.MN)
	for m := range w.Roles.MN {
		pools[m] = net.PoolSize(m)
		out.MNPool = append(out.MNPool, pools[m])
		out.MNUsed = append(out.MNUsed, layout.MN[m].Needed)
	}

	// Phase 3: every CN writes its chunk, one endpoint per worker (the
	// engine keeps them: connection set-up is not free on every fabric).
	var degrees []uint64
	var puller verbs.Endpoint
	err = layout.CheckCapacity(pools)
	if err == nil && w.Role == spmd.CN {
		lo, hi := out.Chunks[w.Index], out.Chunks[w.Index+1]
		degrees = balance.DegreesFromOffsets(g.Offsets[lo : hi+1])
		for range cfg.Engine.Workers * cfg.Engine.Inflight {
			var ep verbs.Endpoint
			if ep, err = net.NewEndpoint(); err != nil {
				break
			}
			eps = append(eps, ep)
		}
		if err == nil && (mode == ModeDMG || mode == "") && cfg.Engine.RefRDPuller && !cfg.Engine.NoCollab && !cfg.Engine.NoRefRD && !cfg.LoadOnly {
			// The RefRD puller's own endpoint.
			if puller, err = net.NewEndpoint(); err == nil {
				defer puller.Close()
			}
		}
		if err == nil {
			out.Load, err = layout.Load(g, w.Index, eps, csr.LoadOptions{Progress: cfg.LoadProgress})
		}
	}
	if err := agree(err); err != nil {
		return nil, err
	}
	out.LoadS = loadRead.Seconds() + time.Since(t2).Seconds()
	if w.Rank() == 0 { // the vertices, for the output
		out.Graph = &csr.Graph{N: g.N, IDs: g.IDs, Directed: g.Directed}
	}
	g = nil // the CNs compute from DM only
	out.Layout = layout
	if cfg.LoadOnly {
		closed = true
		return out, agree(net.Close())
	}

	// Phase 4: compute.
	ecfg := cfg.Engine
	ecfg.Program = prog
	res, err := Run(w, net, st, eps, puller, degrees, ecfg)
	if err != nil {
		return nil, err
	}
	out.Result, out.ComputeS = res, res.ComputeSeconds
	closed = true
	err = net.Close()
	if err == nil && cfg.KeepGraph && w.Rank() == 0 {
		out.Graph, err = wholeGraph(&cfg)
	}
	return out, agree(err)
}

func ablations(c JobConfig) []string {
	var a []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Layout.NoInPlace, "--no-inplace"}, {c.Engine.NoMerge, "--no-merge"}, {c.Engine.NoDoorbell, "--no-doorbell"},
		{c.Engine.NoCollab, "--no-collab"}, {c.Engine.NoRefRD, "--no-refrd"}, {c.Engine.NoValRD, "--no-valrd"},
		{c.Engine.NoSteal, "--no-steal"}, {c.Engine.NoHubSplit, "--no-hubsplit"}} {
		if f.on {
			a = append(a, f.name)
		}
	}
	return a
}

// mailboxSizes are the ValRD and RefRD mailbox capacities per chunk: the
// configured ones, or room for about half the edges' pairs and a quarter
// of the vertices' items, within [64 KiB, 256 MiB] and [64 KiB, 32 MiB];
// overflow spills to direct update.
func mailboxSizes(c Config, vertices, edges uint64) (uint64, uint64) {
	valCap, refCap := c.ValMailbox, c.RefMailbox
	if valCap == 0 {
		valCap = min(256<<20, max(64<<10, update.ValRec*edges/2))
	}
	if refCap == 0 {
		refCap = min(32<<20, max(64<<10, update.RefRec*vertices/4))
	}
	return valCap, refCap
}

// programSpec is what builds a kernel's program on any rank, so the memory
// nodes get it from CN 0 instead of reading the graph.
type programSpec struct {
	Algo       string // "pagerank", "bfs", "wcc", "sssp", or "load"
	Iterations int
	Damping    float64
	Source     uint32
}

func (s programSpec) program() *algo.Program {
	switch s.Algo {
	case "pagerank":
		return algo.PageRankProgram(s.Iterations, s.Damping)
	case "bfs":
		return algo.BFSProgram(s.Source)
	case "wcc":
		return algo.WCCProgram()
	case "sssp":
		return algo.SSSPProgram(s.Source)
	}
	return &algo.Program{Name: s.Algo}
}

// jobShape is what CN 0 tells every rank after reading the graph.
type jobShape struct {
	Spec     programSpec
	Vertices uint64
	Edges    uint64
}

// shareShape sends CN 0's program to every rank (the other CNs check that
// their own, mine, is the same) and adds up the CNs' shares: the job's
// edges and, in rank 0's meta, the edges the builder dropped.
func shareShape(w *spmd.World, mine programSpec, g *csr.Graph, meta *csr.Meta) (jobShape, error) {
	var blob []byte
	if w.Rank() == 0 {
		var err error
		if blob, err = json.Marshal(mine); err != nil {
			return jobShape{}, errors.Wrap(err, "rank: encoding the job's program")
		}
	}
	blob, err := w.Comm.Bcast(0, blob)
	if err != nil {
		return jobShape{}, err
	}
	var spec programSpec
	if err := json.Unmarshal(blob, &spec); err != nil {
		return jobShape{}, errors.Wrap(err, "rank: decoding the job's program")
	}
	if w.Role == spmd.CN && spec != mine {
		return jobShape{}, errors.Errorf("rank: CN %d read a different graph than CN 0 (program %+v against %+v; different inputs on different nodes?)", w.Index, mine, spec)
	}
	sums := []int64{0, 0, 0, 0}
	if w.Role == spmd.CN {
		sums = []int64{int64(g.NumEdges()), int64(meta.DroppedSelfLoops), int64(meta.DroppedDuplicates), 0}
		if w.Index == 0 {
			sums[3] = int64(g.N)
		}
	}
	if err := w.Comm.AllReduceInt64(sums, spmd.Sum); err != nil {
		return jobShape{}, err
	}
	if w.Rank() == 0 {
		meta.DroppedSelfLoops, meta.DroppedDuplicates = uint64(sums[1]), uint64(sums[2])
	}
	return jobShape{Spec: spec, Vertices: uint64(sums[3]), Edges: uint64(sums[0])}, nil
}

// gatherJSON gathers v from the ranks that contribute (the CNs, in CN
// order, which are world ranks 0..C-1).
func gatherJSON[T any](w *spmd.World, v T, contribute bool) ([]T, error) {
	var blob []byte
	if contribute {
		var err error
		if blob, err = json.Marshal(v); err != nil {
			return nil, errors.Wrap(err, "rank: encoding")
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
			return nil, errors.Wrap(err, "rank: decoding")
		}
		out = append(out, x)
	}
	return out, nil
}

// gatherDegrees summarises the out-degrees of the whole graph for the load
// report: each CN gives its chunk's (rank 0 only gets the summary).
func gatherDegrees(w *spmd.World, g *csr.Graph, chunks []uint32) (csr.DegreeSummary, error) {
	var mine []uint64
	if w.Role == spmd.CN {
		mine = balance.DegreesFromOffsets(g.Offsets[chunks[w.Index] : chunks[w.Index+1]+1])
	}
	all, err := gatherJSON(w, mine, w.Role == spmd.CN)
	if err != nil || w.Rank() != 0 {
		return csr.DegreeSummary{}, err
	}
	var deg []uint64
	for _, d := range all {
		deg = append(deg, d...)
	}
	return csr.SummarizeDegrees(deg), nil
}

// shareLayout sends CN 0's layout to every rank: the memory nodes take it,
// the other CNs check that their own is the same.
func shareLayout(w *spmd.World, l *csr.Layout) (*csr.Layout, error) {
	var blob []byte
	var err error
	if w.Role == spmd.CN {
		var buf bytes.Buffer
		if err = gob.NewEncoder(&buf).Encode(l); err != nil {
			return nil, errors.Wrap(err, "rank: encoding the layout")
		}
		blob = buf.Bytes()
	}
	mine := blob
	if blob, err = w.Comm.Bcast(0, blob); err != nil {
		return nil, err
	}
	if w.Role == spmd.CN {
		if !bytes.Equal(mine, blob) {
			return nil, errors.Errorf("rank: CN %d laid the graph out differently than CN 0 (different inputs on different nodes?)", w.Index)
		}
		return l, nil
	}
	got := &csr.Layout{}
	if err := gob.NewDecoder(bytes.NewReader(blob)).Decode(got); err != nil {
		return nil, errors.Wrap(err, "rank: decoding the layout")
	}
	return got, nil
}

// graphOptions are the csr options the algorithm reads its graph with.
func graphOptions(cfg *JobConfig) (csr.Options, error) {
	opts := cfg.Csr
	if cfg.LoadOnly {
		return opts, nil
	}
	switch strings.ToLower(cfg.Algo) {
	case "wcc":
		opts.Undirected = true
	case "sssp":
		opts.Weighted = true
	case "pagerank", "pr", "bfs":
	default:
		return opts, paramErrorf("unknown algorithm %q; expected one of %s", cfg.Algo, strings.Join(Algorithms, ", "))
	}
	return opts, nil
}

// roundWeights rounds g's weights to float32 as the DM layout stores them,
// so verifiers see the weights the engine uses.
func roundWeights(g *csr.Graph) {
	for i, x := range g.Weights {
		g.Weights[i] = float64(float32(x))
	}
}

// wholeGraph reads the whole graph as the algorithm does (rank 0, for
// verification).
func wholeGraph(cfg *JobConfig) (*csr.Graph, error) {
	opts, err := graphOptions(cfg)
	if err != nil {
		return nil, err
	}
	g, _, err := csr.Open(cfg.Graph, opts)
	if err == nil {
		roundWeights(g)
	}
	return g, err
}

// prepare reads this CN's share of the graph with the options the
// algorithm needs, partitions it on the way (out.Chunks, out.Imbalance,
// out.PartS) and says how to build the program.
func prepare(cfg *JobConfig, out *Outcome, w *spmd.World) (*csr.Graph, programSpec, error) {
	opts, err := graphOptions(cfg)
	if err != nil {
		return nil, programSpec{}, err
	}
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
	sh, meta, err := csr.OpenShare(cfg.Graph, opts, part)
	if err != nil {
		return nil, programSpec{}, err
	}
	g := sh.Graph
	out.Meta = meta
	if cfg.LoadOnly {
		return g, programSpec{Algo: "load"}, nil
	}
	roundWeights(g)
	src := func(has bool, ext uint64) (uint32, error) {
		if cfg.HasSource {
			has, ext = true, cfg.Source
		}
		if !has {
			// No source given: the vertex with the most out-edges (lowest
			// id on ties; parallel edges counted), so a generated graph's
			// traversal is not empty.
			var best uint32
			for v, d := range sh.Degrees {
				if d > sh.Degrees[best] {
					best = uint32(v)
				}
			}
			return best, nil
		}
		v, ok := g.DenseID(ext)
		if !ok {
			return 0, paramErrorf("source vertex %d is not a vertex of %s", ext, cfg.Graph)
		}
		return v, nil
	}
	switch strings.ToLower(cfg.Algo) {
	case "pagerank", "pr":
		it, d := cfg.Iterations, cfg.Damping
		if it == 0 {
			it = 20
			if meta.HasPR {
				it = meta.PRIterations
			}
		}
		if d == 0 {
			d = 0.85
			if meta.HasPR {
				d = meta.PRDamping
			}
		}
		if it < 1 || d <= 0 || d >= 1 {
			return nil, programSpec{}, paramErrorf("PageRank needs iterations ≥ 1 and 0 < damping < 1, got %d and %g", it, d)
		}
		out.Damping = d
		return g, programSpec{Algo: "pagerank", Iterations: it, Damping: d}, nil
	case "bfs":
		s, err := src(meta.HasBFSSource, meta.BFSSource)
		out.Source = s
		return g, programSpec{Algo: "bfs", Source: s}, err
	case "wcc":
		return g, programSpec{Algo: "wcc"}, nil
	default: // sssp
		for i, wt := range g.Weights {
			if wt < 0 || math.IsNaN(wt) {
				return nil, programSpec{}, paramErrorf("SSSP needs non-negative weights; edge %d of %s's share on CN %d has weight %g", i, cfg.Graph, w.Index, wt)
			}
		}
		s, err := src(meta.HasSSSPSource, meta.SSSPSource)
		out.Source = s
		return g, programSpec{Algo: "sssp", Source: s}, err
	}
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
		return errors.New("rank: ranks disagree on the chunk boundaries (different inputs on different nodes?)")
	}
	return nil
}
