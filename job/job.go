package job

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"time"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
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
	// Sources are the external ids of the source vertices of kernels that
	// have one (several for those that take several, algo.Algorithm.Sources);
	// none given: the Graphalytics properties', else the vertex with the
	// most out-edges.
	Sources []uint64
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
	// CNMem is each CN's memory budget (--cn-mem): its chunk's vertex
	// state must fit it (rank.MinCacheBytes), and the loading
	// (RowBytes, Csr.KeepBytes) and the value pull
	// (Engine.ValuePullMax) take their parts of it; 0: no budget.
	CNMem uint64
	// Open opens the data path (memfab or fabric) with the given config.
	Open   func(cfg verbs.Config) (verbs.Network, error)
	Engine rank.Config
	// Layout tunes the DM layout (entry size, in-place storage); the
	// memory nodes, chunk bounds and attribute arrays are filled in.
	Layout dmstore.LayoutConfig
	// Packed packs the DM layouts' edge lists (dmstore.LayoutConfig.Packed:
	// about half the bytes, decoded by the CNs): --compress.
	Packed bool
	// ComputeGCPercent, if above 0, is the garbage collector's percent
	// (debug.SetGCPercent) while a CN computes, restored after: a
	// process of its own sets it (in one process the ranks share it).
	// Most of a CN's state is mapped apart (hugemem), and what the
	// iterations leave on the heap would otherwise wait for it to double.
	ComputeGCPercent int
	// RowBytes bounds the rows a CN builds at once
	// (csr.ShareOptions.RowBytes, at least MinRowBytes); 0: no bound.
	RowBytes int64
	// WindowBytes is what a windowed share's windows are cut at when
	// each reads only its own records (csr.ShareOptions.WindowBytes;
	// the command line sets WindowBytes); 0: at RowBytes.
	WindowBytes int64
	// StageBytes bounds the edges a staged read holds in DM at once
	// (csr.ShareOptions.StageBytes: past it, rounds); 0: no bound.
	StageBytes int64
	// LoadProgress, if set, is called as this CN loads its chunk.
	LoadProgress func(dmstore.LoadProgress)
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
	SourceIDs  []uint64 // every source's, when there are several
	SourceFrom string
	Meta       *csr.Meta // on the CNs (the MNs do not read the graph)
	Vertices   uint64
	Edges      uint64
	Graph      *csr.Graph // rank 0: the vertices (N, IDs); the whole graph with KeepGraph
	// Sample is rank 0's sample of the run for a sampled check, where
	// KeepGraph asked for one and the whole graph is past CNMem.
	Sample    *algo.Sample
	Result    *rank.Result
	Chunks    []uint32
	Imbalance float64
	MNPool    []uint64 // pool bytes per MN
	MNUsed    []uint64 // bytes of graph, reverse adjacency and regions per MN
	// InBytes is the reverse adjacency's bytes per MN (directed graphs the
	// engine pulls on; nil when the graph is symmetric or not needed).
	InBytes      []uint64
	Symmetric    bool    // the graph's in-edges are its out-edges
	InPlaceShare float64 // vertices whose edges sit in their index entry
	// IndexBytes and ListBytes are the graph's index entries and
	// out-of-place edge lists on DM, both layouts; Packed: lists are
	// packed (dmstore.LayoutConfig.Packed). Weights is how a weighted
	// graph's weights are stored ("": unweighted), RecordBytes the size
	// of an out-of-place edge record.
	IndexBytes, ListBytes uint64
	Packed                bool
	Weights               string
	RecordBytes           int
	Load                  *dmstore.LoadReport // this CN's loading
	// StagedBytes is the most staging memory the CNs' staged read of a
	// generator or a text edge list held in DM at once (csr.OpenStaged);
	// 0 when every CN read the whole input. StagedRounds is how many
	// rounds its edges took (csr.Share.Rounds).
	StagedBytes  uint64
	StagedRounds int
	// CNMem is the CNs' budget (Config.CNMem).
	CNMem      uint64
	Layout     *dmstore.Layout
	Degrees    csr.DegreeSummary // LoadOnly, rank 0
	Provider   string
	Workers    int // goroutines per CN
	NICProfile string
	Mode       string
	Ablations  []string
	LoadS      float64
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

// numMN is the job's memory nodes: its world's, or the served pool's.
func (cfg *Config) numMN(w *spmd.World) int {
	if cfg.Pool != nil {
		return cfg.Pool.Net.NumMN()
	}
	return w.Roles.MN
}

// compute runs the kernel on the store (the last phase) into out.
func compute(w *spmd.World, net verbs.Network, st *rank.Store, eps []verbs.Endpoint, puller verbs.Endpoint, degrees []uint32, cfg *Config, alg algo.Algorithm, out *Outcome, probe *rank.Probe) error {
	ecfg := cfg.Engine
	ecfg.Program, ecfg.Probe = alg.New(out.Params), probe
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
	Out *dmstore.Layout
	In  *dmstore.Layout
}

// describe sets what out reports of the graph's layouts on DM.
func (l layouts) describe(out *Outcome) {
	out.InPlaceShare = l.Out.InPlaceShare()
	out.IndexBytes, out.ListBytes, out.Packed = 0, 0, l.packed()
	out.RecordBytes = l.Out.Codec.RecordBytes()
	if out.Weights = ""; l.Out.Weighted {
		out.Weights = l.Out.Codec.Weights.String()
	}
	for _, x := range []*dmstore.Layout{l.Out, l.In} {
		if x == nil {
			continue
		}
		for _, u := range x.MN {
			out.IndexBytes += u.IndexBytes
			out.ListBytes += u.EdgeBytes
		}
	}
}

// packed says whether the layouts pack their lists (the out-layout's
// are never packed in the baselines' plain CSR; the in-layout's may be).
func (l layouts) packed() bool { return l.Out.Config.Packed || (l.In != nil && l.In.Config.Packed) }

func (l layouts) last() *dmstore.Layout {
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
	lcfg.Weights, icfg.Weights = shape.Weights, shape.Weights
	var l layouts
	var err error
	reserve := uint64(0)
	if w.Role == spmd.CN && !cfg.LoadOnly {
		reserve = rank.Reserve(storeConfig(*cfg, shape, chunks, cfg.numMN(w)))
	}
	if !hasIn {
		lcfg.Reserve = reserve
	}
	l.Out, err = planOne(w, f.out[shape.Weights], lcfg, shape.Vertices, shape.Edges, f.weighted)
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
		l.In, err = planOne(w, f.in[shape.Weights], icfg, shape.Vertices, shape.Edges, f.weighted)
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
func planOne(w *spmd.World, sizes dmstore.ChunkSizes, lcfg dmstore.LayoutConfig, vertices, edges uint64, weighted bool) (*dmstore.Layout, error) {
	all, err := gatherJSON(w, sizes, w.Role == spmd.CN)
	if err != nil || w.Role != spmd.CN {
		return nil, err
	}
	return dmstore.PlanSizes(uint32(vertices), edges, weighted, lcfg, all)
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
	SourceIDs  []uint64 // every source's, when there are several
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
	// Weights is the code the layouts store the graph's weights in.
	Weights dmstore.WeightCode
}

// shareShape sends CN 0's program to every rank (the other CNs check that
// their own, mine, is the same) and adds up the CNs' shares: the job's
// edges and, in rank 0's meta, the edges the builder dropped.
func shareShape(w *spmd.World, mine programSpec, sh *csr.Share, f *chunkFacts, meta *csr.Meta, goroutines int) (jobShape, error) {
	spec, err := bcastSpec(w, mine)
	if err != nil {
		return jobShape{}, err
	}
	if w.Role == spmd.CN && !reflect.DeepEqual(spec, mine) {
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
	most, weights, err := agreeChunks(w, f)
	if err != nil {
		return jobShape{}, err
	}
	if w.Rank() == 0 {
		meta.DroppedSelfLoops, meta.DroppedDuplicates = uint64(sums[1]), uint64(sums[2])
	}
	return jobShape{Spec: spec, Vertices: uint64(sums[3]), Edges: uint64(sums[0]), MaxChunkEdges: most, Senders: int(sums[4]), Weights: weights}, nil
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
	so := csr.ShareOptions{In: wantIn, RowBytes: cfg.RowBytes, WindowBytes: cfg.WindowBytes, StageBytes: cfg.StageBytes, Align: uint32(cfg.Layout.BatchVertices), Progress: cfg.ReadProgress}
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
	if len(cfg.Sources) > 1 && !alg.Sources {
		return programSpec{}, &rank.ParamError{Msg: fmt.Sprintf("--source names %d vertices; %s takes one", len(cfg.Sources), alg.Name)}
	}
	if len(cfg.Sources) == 0 {
		if ext, has := sourceProperty(alg, meta); has {
			return spec, resolveSources(&spec, cfg, sh, []uint64{ext}, "properties")
		}
		id, err := sh.ExternalID(top)
		spec.Params.Source, spec.SourceID, spec.SourceFrom = top, id, "most out-edges"
		return spec, err
	}
	return spec, resolveSources(&spec, cfg, sh, cfg.Sources, "--source")
}

// sourceProperty is the source the Graphalytics properties name for alg.
func sourceProperty(alg algo.Algorithm, meta *csr.Meta) (uint64, bool) {
	if alg.SourceProperty == nil || meta == nil {
		return 0, false
	}
	return alg.SourceProperty(meta)
}

// resolveSources sets spec's sources from their external ids: the first
// is Params.Source and SourceID; several are Params.Sources too.
func resolveSources(spec *programSpec, cfg *Config, sh vertexIDs, exts []uint64, from string) error {
	dense := make([]uint32, len(exts))
	for i, ext := range exts {
		v, ok, err := sh.DenseID(ext)
		if err != nil {
			return err
		}
		if !ok {
			return &rank.ParamError{Msg: fmt.Sprintf("source vertex %d is not a vertex of %s", ext, cfg.Graph)}
		}
		dense[i] = v
	}
	spec.Params.Source, spec.SourceID, spec.SourceFrom = dense[0], exts[0], from
	if len(dense) > 1 {
		spec.Params.Sources, spec.SourceIDs = dense, exts
	}
	return nil
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
