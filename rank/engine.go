package rank

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/balance"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/pkg/errors"
)

// Modes of the engine (DESIGN.md §8).
const (
	ModeDMG      = "dmg"      // the design: adaptive store, merging, collaborative update
	ModeNaive    = "naive"    // plain CSR on DM, per-vertex reads, remote atomics
	ModeFAMGraph = "famgraph" // every CN holds the whole index and all attributes
)

// Modes lists the engine modes.
var Modes = []string{ModeDMG, ModeNaive, ModeFAMGraph}

// Config is how the engine runs a program.
type Config struct {
	Program *algo.Program
	// Mode is dmg (default), naive or famgraph.
	Mode string
	// Workers per CN; 0 means the CN's cores.
	Workers int
	// Inflight is the number of goroutines per worker, each with its own
	// endpoint, so that several batches are in flight and remote latency
	// is hidden (the paper's coroutines); default 1: on shm over two cores
	// more goroutines only add contention (kron:16 PageRank, cn:2,mn:2:
	// 1.9 s with 1, 2.0 s with 2, 2.8 s with 4), while on an RDMA NIC with
	// microseconds per round trip they overlap the waits.
	Inflight int
	// Batch is the number of consecutive vertices a worker claims at once.
	Batch int
	// HubDegree: vertices with more out-edges are tasks of their own, cut
	// into edge ranges of at most HubDegree edges (0: max(1024, the
	// chunk's edges / (16·goroutines))).
	HubDegree uint64
	// NoSteal and NoHubSplit switch stage 2 of the workload manager off:
	// static shares per worker, hubs as one task.
	NoSteal, NoHubSplit bool
	// DenseDivisor classifies an iteration as dense when its active edges
	// exceed |E|/DenseDivisor (Ligra's 20 by default).
	DenseDivisor float64
	// Ablations of --mode dmg, one part of the design off each.
	NoMerge    bool // one READ per entry and per list, no merging of neighbours
	NoDoorbell bool // every operation its own doorbell and round trip
	NoCollab   bool // direct remote update in dense iterations too
	NoRefRD    bool // no pass-by-reference redistribution
	NoValRD    bool // no pass-by-value redistribution
	// RefRDMin is the segment length T from which a segment for another
	// chunk is sent by reference instead of fetched (default 16 edges,
	// see docs/design.md).
	RefRDMin uint32
	// RefRDPuller drains the own chunk's RefRD mailbox while the push runs,
	// in a goroutine with its own endpoint, instead of only after the
	// iteration's barrier; senders then commit every flush with a second
	// FAA. It overlaps the segment READs with the push where a CN has a
	// core to spare (see docs/results.md for what it costs where it has
	// not).
	RefRDPuller bool
	// ValRDApply says who folds ValRD pairs into the owner's attributes:
	// "cn" (the owner CN drains its mailbox), "mn" (the MN holding the
	// mailbox applies it in local memory) or "auto" (default): the first
	// collaborative iteration uses cn, the second mn, and from then on the
	// one that took less time per pair, measured job-wide.
	ValRDApply string
	// Mailbox sizes in bytes (0: sized from the graph); tests shrink them to
	// prove spilling loses nothing.
	ValMailbox, RefMailbox uint64
	// Agree is the job's phase boundary (launch.Job.Agree): every rank
	// passes its error and all continue or all stop. It must synchronise
	// like a barrier; nil means a plain all-reduce of the failure flags.
	Agree func(error) error
	// Logf logs progress (may be nil).
	Logf func(format string, args ...any)
	// Profile is the NIC model that projects the counted operations to an
	// RDMA fabric (zero: verbs.DefaultProfile).
	Profile verbs.Profile
}

// EnsureDefaults fills zero fields.
func (c *Config) EnsureDefaults() {
	if c.Mode == "" {
		c.Mode = ModeDMG
	}
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Inflight <= 0 {
		c.Inflight = 1
	}
	if c.Batch <= 0 {
		c.Batch = 256
	}
	if c.DenseDivisor <= 0 {
		c.DenseDivisor = 20
	}
	if c.RefRDMin == 0 {
		c.RefRDMin = 16
	}
	if c.ValRDApply == "" {
		c.ValRDApply = "auto"
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Profile.Name == "" {
		c.Profile = verbs.DefaultProfile
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch c.Mode {
	case ModeDMG, ModeNaive, ModeFAMGraph:
	default:
		return paramErrorf("unknown mode %q; expected one of %v", c.Mode, Modes)
	}
	if c.Mode != ModeDMG && (c.NoMerge || c.NoDoorbell || c.NoCollab || c.NoRefRD || c.NoValRD) {
		return paramErrorf("the ablation flags (--no-merge, --no-doorbell, --no-collab, --no-refrd, --no-valrd) apply to --mode dmg only")
	}
	switch c.ValRDApply {
	case "cn", "mn", "auto":
	default:
		return paramErrorf("--valrd-apply %q; expected cn, mn or auto", c.ValRDApply)
	}
	return nil
}

// barrierAgree is the phase boundary used when the caller gives none: an
// all-reduce of the failure flags, so it is also a barrier.
func barrierAgree(w *spmd.World) func(error) error {
	return func(err error) error {
		f := []int64{0}
		if err != nil {
			f[0] = 1
		}
		if rerr := w.Comm.AllReduceInt64(f, spmd.Max); rerr != nil {
			return rerr
		}
		if err != nil {
			return err
		}
		if f[0] != 0 {
			return errors.New("rank: another rank failed")
		}
		return nil
	}
}

// IterStats is one iteration, summed over the job.
type IterStats struct {
	Dense          bool    `json:"dense"`
	ActiveVertices uint64  `json:"active_vertices"`
	ActiveEdges    uint64  `json:"active_edges"`
	Seconds        float64 `json:"seconds"`
	// ModeledSeconds is the iteration's fabric time projected by the NIC
	// model: its slowest endpoint, CN NIC or MN NIC.
	ModeledSeconds float64        `json:"modeled_s"`
	Bottleneck     string         `json:"bottleneck"`
	Verbs          verbs.Counters `json:"verbs"`
	// TailRatio is max/median busy time of the workers, the worst CN.
	TailRatio float64 `json:"tail_ratio"`
	// ValRDAt is who applied the ValRD pairs ("cn", "mn"; empty when none
	// were sent).
	ValRDAt string `json:"valrd_at,omitempty"`
	// Update says how non-local updates travelled: "collaborative" (RefRD
	// and ValRD through mailboxes), "direct" (remote atomics), "local"
	// (famgraph: every attribute is local), by candidates per path.
	Update  string       `json:"update"`
	Updates update.Stats `json:"updates"`
}

// Result is what a run produced.
type Result struct {
	Iterations []IterStats
	// Values holds every vertex's final value, on world rank 0 only.
	Values []uint64
	// Verbs are the job's fabric operations during compute, summed.
	Verbs verbs.Counters
	// VerbsByRank are this CN's operations (zero on MNs).
	Local verbs.Counters
	// CacheBytes is this CN's local state: values, accumulators, degrees,
	// activity flags of its own chunk (0 on MNs).
	CacheBytes uint64
	// MaxCacheBytes is the largest CacheBytes over the CNs.
	MaxCacheBytes  uint64
	ComputeSeconds float64
	// ModeledSeconds is the sum of the iterations' modelled fabric time.
	ModeledSeconds float64
	// Updates sums the iterations' update paths over the job.
	Updates update.Stats
	// ValRDApply is who applied ValRD pairs ("cn" or "mn").
	ValRDApply string
	// TailRatio is Σ max busy / Σ median busy over the iterations, the
	// worst CN (balance.Tail).
	TailRatio float64
	// Steals counts tasks stolen by idle workers, over the job.
	Steals uint64
	// HubDegree is the hub threshold used.
	HubDegree uint64
}

// Run executes cfg.Program on every rank of w: CNs compute over their chunk
// [chunks[i], chunks[i+1]) of the graph stored in st; MNs take part in the
// collectives while their pools serve the fabric. degrees are the
// out-degrees of this CN's chunk (nil on MNs).
//
// eps are this CN's endpoints, one per worker (nil on MNs); the caller
// closes them.
func Run(w *spmd.World, net verbs.Network, st *Store, eps []verbs.Endpoint, puller verbs.Endpoint, degrees []uint64, cfg Config) (*Result, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Agree == nil {
		cfg.Agree = barrierAgree(w)
	}
	p := cfg.Program
	e := &engine{w: w, net: net, st: st, cfg: cfg, p: p, eps: eps, mb: st.mailboxes, fam: st.fam, pullEP: puller}
	if cfg.NoDoorbell {
		e.eps = make([]verbs.Endpoint, len(eps))
		for i, ep := range eps {
			e.eps[i] = perOp(ep)
		}
		if puller != nil {
			e.pullEP = perOp(puller)
		}
	}
	if w.Role == spmd.CN {
		if len(eps) == 0 {
			return nil, errors.New("rank: a compute node needs at least one endpoint")
		}
		e.lo, e.hi = st.Config.Bounds[w.Index], st.Config.Bounds[w.Index+1]
		e.deg = degrees
		if uint32(len(degrees)) != e.hi-e.lo {
			return nil, errors.Errorf("rank: %d degrees for a chunk of %d vertices", len(degrees), e.hi-e.lo)
		}
	}
	res := &Result{}
	e.perPair, e.valrdCount = map[string]float64{}, map[string]int{}
	start := time.Now()
	if e.isCN() {
		e.planTasks()
	}
	res.HubDegree = e.cfg.HubDegree
	err := cfg.Agree(e.init())
	if err != nil {
		return nil, err
	}
	dangling, err := e.reduceDangling()
	if err != nil {
		return nil, err
	}
	activeV, activeE, err := e.reduceActive()
	if err != nil {
		return nil, err
	}
	maxIter := p.Iterations
	if maxIter == 0 {
		maxIter = int(st.N()) + 1
	}
	prev, err := e.jobCounters()
	if err != nil {
		return nil, err
	}
	if _, _, err := e.model(); err != nil { // start the per-iteration deltas here
		return nil, err
	}
	for it := 0; it < maxIter && (p.Iterations > 0 || activeV > 0); it++ {
		t0 := time.Now()
		dense := float64(activeE) > float64(st.Edges)/cfg.DenseDivisor
		e.collab = cfg.Mode == ModeDMG && dense && !cfg.NoCollab && !(cfg.NoRefRD && cfg.NoValRD)
		itc := &algo.Iteration{N: st.N(), Dangling: dangling}
		if err := cfg.Agree(e.push()); err != nil {
			return nil, err
		}
		e.valrdAt = ""
		if e.collab && !cfg.NoValRD {
			e.valrdAt = e.chooseValRD()
		}
		e.drainValS, e.mnApplyS = 0, 0
		if e.valrdAt == "mn" {
			t := time.Now()
			if err := cfg.Agree(e.mnApply()); err != nil {
				return nil, err
			}
			e.mnApplyS = time.Since(t).Seconds()
		}
		if cfg.Mode == ModeFAMGraph {
			if err := cfg.Agree(e.famExchange()); err != nil {
				return nil, err
			}
		}
		if err := cfg.Agree(e.apply(itc)); err != nil {
			return nil, err
		}
		if cfg.Mode == ModeFAMGraph {
			if err := cfg.Agree(e.famRefresh()); err != nil {
				return nil, err
			}
		}
		if dangling, err = e.reduceDangling(); err != nil {
			return nil, err
		}
		nextV, nextE, err := e.reduceActive()
		if err != nil {
			return nil, err
		}
		cur, err := e.jobCounters()
		if err != nil {
			return nil, err
		}
		ups, err := e.jobUpdates()
		if err != nil {
			return nil, err
		}
		tail, err := e.tailRatio()
		if err != nil {
			return nil, err
		}
		s := IterStats{Dense: dense, ActiveVertices: activeV, ActiveEdges: activeE, Seconds: time.Since(t0).Seconds(), Verbs: cur.Sub(prev),
			Update: e.pathName(), Updates: ups.Sub(res.Updates), TailRatio: tail, ValRDAt: e.valrdAt}
		if err := e.measureValRD(s.Updates.ValRD); err != nil {
			return nil, err
		}
		res.Updates = ups
		if s.ModeledSeconds, s.Bottleneck, err = e.model(); err != nil {
			return nil, err
		}
		res.ModeledSeconds += s.ModeledSeconds
		res.Iterations = append(res.Iterations, s)
		mode := "sparse"
		if dense {
			mode = "dense"
		}
		cfg.Logf("iter %d %s (%s update) %d active vertices, %d active edges, %d remote ops, %.3fs", it, mode, s.Update, activeV, activeE, s.Verbs.Ops(), s.Seconds)
		prev, activeV, activeE = cur, nextV, nextE
	}
	res.ComputeSeconds = time.Since(start).Seconds()
	if res.Verbs, err = e.jobCounters(); err != nil {
		return nil, err
	}
	res.Local = e.localCounters()
	tails := []float64{0}
	steals := []int64{0}
	if e.isCN() {
		tails[0] = balance.Tail(e.phases)
		for _, ph := range e.phases {
			steals[0] += int64(ph.TotalSteals())
		}
	}
	if err := w.Comm.AllReduceFloat64(tails, spmd.Max); err != nil {
		return nil, err
	}
	if err := w.Comm.AllReduceInt64(steals, spmd.Sum); err != nil {
		return nil, err
	}
	res.TailRatio, res.Steals = tails[0], uint64(steals[0])
	res.ValRDApply = cfg.ValRDApply
	if cfg.ValRDApply == "auto" {
		res.ValRDApply = fmt.Sprintf("auto (cn in %d iterations, mn in %d)", e.valrdCount["cn"], e.valrdCount["mn"])
	}
	res.CacheBytes = e.cacheBytes()
	mx := []int64{int64(res.CacheBytes)}
	if err := w.Comm.AllReduceInt64(mx, spmd.Max); err != nil {
		return nil, err
	}
	res.MaxCacheBytes = uint64(mx[0])
	// Rank 0 gathers the values from DM for the output.
	var gather error
	if w.Rank() == 0 {
		res.Values = make([]uint64, st.N())
		gather = st.readWords(e.eps[0], attrValue, 0, res.Values)
	}
	if err := cfg.Agree(gather); err != nil {
		return nil, err
	}
	return res, nil
}

type engine struct {
	w      *spmd.World
	net    verbs.Network
	st     *Store
	cfg    Config
	p      *algo.Program
	lo, hi uint32
	deg    []uint64
	val    []uint64 // current values of the own chunk
	acc    []uint64 // accumulators of the next iteration (the CN cache)
	active []bool
	eps    []verbs.Endpoint
	// last holds each endpoint's counters at the previous model() call.
	last []verbs.EndpointLoad
	// collab is set for the iterations that use the collaborative update.
	collab bool
	// valrdAt is who applies ValRD pairs this iteration; perPair the
	// measured seconds per pair of each choice (0: not measured yet).
	valrdAt    string
	perPair    map[string]float64
	drainValS  float64 // this CN's ValRD drain time in the last apply
	mnApplyS   float64 // the MN apply phase's wall time
	valrdCount map[string]int
	mb         *update.Mailboxes
	// pullEP is the RefRD puller's endpoint (nil: the RefRD mailbox is
	// drained only after the iteration's barrier); pull is the running
	// puller of a collaborative push.
	pullEP verbs.Endpoint
	pull   *puller
	statMu sync.Mutex
	stats  update.Stats // this CN's update paths so far
	// stage 2: the chunk's tasks, their cost, and each push's stats.
	tasks  []balance.Task
	sparse []balance.Task
	cost   func(balance.Task) uint64
	phases []balance.Stats
	// famgraph: the whole index and every attribute, on every CN.
	fam    *famRegions
	famIdx []uint64 // naive index words of every chunk, chunk by chunk
	allVal []uint64
	allAcc []uint64
}

func (e *engine) isCN() bool { return e.w.Role == spmd.CN }

func (e *engine) pathName() string {
	switch {
	case e.cfg.Mode == ModeFAMGraph:
		return "local"
	case e.collab:
		return "collaborative"
	}
	return "direct"
}

func (e *engine) init() error {
	if !e.isCN() {
		return nil
	}
	n := e.hi - e.lo
	for _, ep := range e.eps {
		if _, ok := ep.(verbs.Atomics); !ok {
			return errors.Errorf("rank: the %s fabric has no remote atomics", e.net.Provider())
		}
	}
	if e.cfg.Mode == ModeFAMGraph {
		if err := e.famInit(); err != nil {
			return err
		}
		e.val, e.acc = e.allVal[e.lo:e.hi], e.allAcc[e.lo:e.hi]
	} else {
		e.val, e.acc = make([]uint64, n), make([]uint64, n)
	}
	e.active = make([]bool, n)
	for i := range n {
		e.val[i], e.active[i] = e.p.Init(e.lo+i, e.st.N())
		e.acc[i] = e.p.Identity
	}
	if err := e.st.writeWords(e.eps[0], attrValue, e.lo, e.val); err != nil {
		return err
	}
	return e.st.writeWords(e.eps[0], attrInbox, e.lo, e.acc)
}

// cacheBytes is the CN's per-vertex state: values, accumulators, degrees
// and activity of its chunk; famgraph adds the whole index and every
// vertex's value and accumulator.
func (e *engine) cacheBytes() uint64 {
	if !e.isCN() {
		return 0
	}
	n := uint64(e.hi - e.lo)
	if e.cfg.Mode == ModeFAMGraph {
		return 8*uint64(len(e.famIdx)) + 16*uint64(len(e.allVal)) + n*(8+1)
	}
	return n * (8 + 8 + 8 + 1)
}

func (e *engine) addStats(s update.Stats) {
	e.statMu.Lock()
	e.stats.Add(s)
	e.statMu.Unlock()
}

func (e *engine) jobUpdates() (update.Stats, error) {
	v := e.stats.Int64s()
	if err := e.w.Comm.AllReduceInt64(v, spmd.Sum); err != nil {
		return update.Stats{}, err
	}
	return update.StatsFromInt64s(v), nil
}

// planTasks cuts the chunk into stage-2 tasks: the layout's loading
// batches (whose lists are contiguous on one MN) cut to Config.Batch
// vertices and about HubDegree edges, hubs split into edge ranges.
func (e *engine) planTasks() {
	var edges uint64
	for _, d := range e.deg {
		edges += d
	}
	if e.cfg.HubDegree == 0 {
		e.cfg.HubDegree = max(1024, edges/uint64(16*len(e.eps)))
	}
	for _, lb := range e.st.ChunkBatches(e.w.Index) {
		e.tasks = append(e.tasks, balance.Tasks(e.deg[lb.Lo-e.lo:lb.Hi-e.lo], lb.Lo, e.cfg.Batch, e.cfg.HubDegree, !e.cfg.NoHubSplit)...)
	}
	e.cost = balance.EdgeCost(e.deg, e.lo, 8)
}

// push runs the edge function over every active vertex of the own chunk:
// the workers share the tasks through the work-stealing runner.
func (e *engine) push() (err error) {
	if !e.isCN() {
		return nil
	}
	defer func() {
		if err != nil && e.pull != nil {
			_ = e.pull.stop() // the job ends; the first error is the one to report
			e.pull = nil
		}
	}()
	wks := make([]*worker, len(e.eps))
	for i, ep := range e.eps {
		wk, err := newWorker(e, ep)
		if err != nil {
			return err
		}
		wks[i] = wk
	}
	tasks := e.tasks
	if !e.p.AllActive { // skip tasks without an active vertex
		tasks = e.sparse[:0]
		for _, t := range e.tasks {
			for v := t.Lo; v < t.Hi; v++ {
				if e.active[v-e.lo] {
					tasks = append(tasks, t)
					break
				}
			}
		}
		e.sparse = tasks
	}
	if e.collab && !e.cfg.NoRefRD && e.pullEP != nil {
		if e.pull, err = e.startPuller(); err != nil {
			return err
		}
	}
	st, err := balance.Run(len(wks), tasks, e.cost, !e.cfg.NoSteal, func(w int, t balance.Task) error { return wks[w].process(t) })
	e.phases = append(e.phases, st)
	errs := make([]error, len(wks))
	var wg sync.WaitGroup
	for i, wk := range wks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err == nil {
				errs[i] = wk.finish()
			}
			e.addStats(wk.stats)
		}()
	}
	wg.Wait()
	if err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// tailRatio is the worst CN's tail ratio of the last push (0 on MNs).
func (e *engine) tailRatio() (float64, error) {
	v := []float64{0}
	if e.isCN() && len(e.phases) > 0 {
		v[0] = e.phases[len(e.phases)-1].TailRatio()
	}
	if err := e.w.Comm.AllReduceFloat64(v, spmd.Max); err != nil {
		return 0, err
	}
	return v[0], nil
}

// chooseValRD picks who applies this iteration's ValRD pairs (the same
// on every rank: the measurements are job-wide).
func (e *engine) chooseValRD() string {
	if e.cfg.ValRDApply != "auto" {
		return e.cfg.ValRDApply
	}
	cn, mn := e.perPair["cn"], e.perPair["mn"]
	switch {
	case cn == 0:
		return "cn"
	case mn == 0:
		return "mn"
	case mn < cn:
		return "mn"
	}
	return "cn"
}

// measureValRD records the seconds per ValRD pair of this iteration's
// choice: the slowest CN's drain, or the MN phase's wall time (collective).
func (e *engine) measureValRD(pairs uint64) error {
	t := []float64{e.drainValS, e.mnApplyS}
	if err := e.w.Comm.AllReduceFloat64(t, spmd.Max); err != nil {
		return err
	}
	if e.valrdAt == "" {
		return nil
	}
	e.valrdCount[e.valrdAt]++
	if pairs == 0 {
		return nil
	}
	sec := t[0]
	if e.valrdAt == "mn" {
		sec = t[1]
	}
	e.perPair[e.valrdAt] = max(sec/float64(pairs), 1e-12)
	return nil
}

// mnApply is the memory nodes' part of ValRD when they apply it: each MN
// folds the ValRD mailboxes it holds into the inbox words, in local memory.
func (e *engine) mnApply() error {
	if e.isCN() {
		return nil
	}
	pool := e.net.Pool()
	var n uint64
	for k, m := range e.st.ChunkMN {
		if m != e.w.Index {
			continue
		}
		n += e.mb.ApplyValLocal(pool, k, func(v uint32) uint64 { return e.st.InboxAddr(v).Offset() }, e.p.Combine)
	}
	e.addStats(update.Stats{MNApplied: n})
	return nil
}

// apply drains the own chunk's mailboxes (collaborative iterations), folds
// the remote updates from the inbox into the cache, applies the program,
// writes the new values back and resets the inbox.
func (e *engine) apply(it *algo.Iteration) error {
	if !e.isCN() {
		return nil
	}
	ep := e.eps[0]
	k := e.w.Index
	// The puller (if one ran) stops here, after the barrier that ended
	// every CN's sends and before the cache is written without atomics;
	// the drain below takes what it had not.
	var cur *update.RefCursor
	if e.pull != nil {
		err := e.pull.stop()
		cur, e.pull = e.pull.cur, nil
		if err != nil {
			return err
		}
	}
	if e.collab {
		if e.valrdAt == "cn" {
			t := time.Now()
			if _, err := e.mb.DrainVal(ep, k, func(v uint32, val uint64) {
				e.acc[v-e.lo] = e.p.Combine(e.acc[v-e.lo], val)
			}); err != nil {
				return err
			}
			e.drainValS = time.Since(t).Seconds()
		}
		if !e.cfg.NoRefRD {
			if cur == nil {
				cur = e.mb.RefCursor(k, e.st.Codec.RecordBytes(), e.st.Weighted)
			}
			r, err := newReader(e, ep)
			if err != nil {
				return err
			}
			if _, _, err := cur.Drain(ep, r, func(ri update.RefItem, dst uint32, w float64) {
				e.acc[dst-e.lo] = e.p.Combine(e.acc[dst-e.lo], e.p.Edge(ri.Val, uint64(ri.Deg), w))
			}); err != nil {
				return err
			}
		}
	}
	inbox := make([]uint64, len(e.acc))
	if e.cfg.Mode == ModeFAMGraph {
		// No remote atomics: the partial accumulators came in famExchange.
		if err := e.famGather(inbox); err != nil {
			return err
		}
	} else if err := e.st.readWords(ep, attrInbox, e.lo, inbox); err != nil {
		return err
	}
	for i := range e.acc {
		a := e.p.Combine(e.acc[i], inbox[i])
		nv := e.p.Apply(a, e.val[i], it)
		e.active[i] = e.p.AllActive || nv != e.val[i]
		e.val[i] = nv
		e.acc[i] = e.p.Identity
		inbox[i] = e.p.Identity
	}
	if err := e.st.writeWords(ep, attrValue, e.lo, e.val); err != nil {
		return err
	}
	if e.cfg.Mode == ModeFAMGraph {
		return nil
	}
	return e.st.writeWords(ep, attrInbox, e.lo, inbox)
}

// worker is one goroutine's state: its endpoint and reusable buffers.
type worker struct {
	e      *engine
	ep     verbs.Endpoint
	f      *fetcher
	direct *update.Direct
	sender *update.Sender
	remote map[uint32]uint64
	stats  update.Stats
	err    error
	buf    []byte
}

func newWorker(e *engine, ep verbs.Endpoint) (*worker, error) {
	wk := &worker{e: e, ep: ep, remote: map[uint32]uint64{}}
	dep := ep
	if e.cfg.Mode == ModeNaive {
		dep = perOp(ep) // the baseline batches nothing: every CAS rings its own doorbell
	}
	d, err := update.NewDirect(dep, e.p, e.st.InboxAddr, &wk.stats)
	if err != nil {
		return nil, err
	}
	wk.direct = d
	if e.cfg.Mode == ModeDMG {
		r, err := newReader(e, ep)
		if err != nil {
			return nil, err
		}
		wk.f = &fetcher{s: e.st, merger: r, ep: ep}
		if e.collab {
			wk.sender = update.NewSender(ep, e.p, e.mb, d, update.SenderConfig{RecordBytes: e.st.Codec.RecordBytes(), Weighted: e.st.Weighted, Commit: e.cfg.RefRDPuller}, &wk.stats)
		}
	}
	return wk, nil
}

// newReader is the worker's read path: merging neighbours, or (--no-merge)
// every read on its own.
func newReader(e *engine, ep verbs.Endpoint) (reader, error) {
	if e.cfg.NoMerge {
		return plainReader{ep}, nil
	}
	return verbs.NewReadMerger(ep, e.net, 256, 4<<20)
}

// finish sends what the worker still holds.
func (wk *worker) finish() error {
	if wk.sender != nil {
		return wk.sender.Flush()
	}
	return nil
}

// candidate routes one update candidate for vertex d.
func (wk *worker) candidate(d uint32, cand uint64) error {
	e := wk.e
	wk.stats.Candidates++
	switch {
	case d >= e.lo && d < e.hi:
		reduceLocal(e.p, &e.acc[d-e.lo], cand)
		wk.stats.Local++
	case e.cfg.Mode == ModeFAMGraph:
		reduceLocal(e.p, &e.allAcc[d], cand)
		wk.stats.Local++
	case e.collab && !e.cfg.NoValRD:
		return wk.sender.Val(e.st.ChunkOf(d), d, cand)
	case e.cfg.Mode == ModeNaive:
		wk.direct.Add(d, cand)
	default:
		if old, ok := wk.remote[d]; ok {
			wk.remote[d] = e.p.Combine(old, cand)
			wk.stats.Combined++
		} else {
			wk.remote[d] = cand
		}
	}
	return nil
}

// edges applies the edge function along a vertex's fetched edges.
func (wk *worker) edges(v uint32, deg uint64, dst []uint32, ws []float32) error {
	e := wk.e
	n := e.st.N()
	val := e.val[v-e.lo]
	for k, d := range dst {
		if d >= n {
			return errors.Errorf("rank: vertex %d has an edge to %d, beyond the %d vertices (corrupt store)", v, d, n)
		}
		w := 1.0
		if ws != nil {
			w = float64(ws[k])
		}
		if err := wk.candidate(d, e.p.Edge(val, deg, w)); err != nil {
			return err
		}
	}
	return nil
}

// flushRemote sends the combined direct-remote candidates.
func (wk *worker) flushRemote() error {
	for v, c := range wk.remote {
		wk.direct.Add(v, c)
		delete(wk.remote, v)
	}
	if wk.direct.Pending() == 0 {
		return nil
	}
	return wk.direct.Flush()
}

func (wk *worker) process(t balance.Task) error {
	if !t.Whole() {
		return wk.processHub(t)
	}
	b := batch{t.Lo, t.Hi}
	switch wk.e.cfg.Mode {
	case ModeNaive:
		return wk.processNaive(b)
	case ModeFAMGraph:
		return wk.processFAM(b)
	}
	e := wk.e
	active := func(v uint32) bool { return e.active[v-e.lo] }
	var byRef refFn
	if e.collab && !e.cfg.NoRefRD {
		rec := uint64(e.st.Codec.RecordBytes())
		me := e.w.Index
		byRef = func(v uint32, ent *csr.Entry, skip []bool) bool {
			any := false
			var off uint64
			for k, n := range ent.Segments {
				skip[k] = k != me && n >= e.cfg.RefRDMin
				if skip[k] {
					any = true
					it := update.RefItem{Seg: verbs.Addr(ent.Addr).Add(off * rec), Edges: n, Deg: ent.Degree, Val: e.val[v-e.lo]}
					if err := wk.sender.Ref(k, it); err != nil && wk.err == nil {
						wk.err = err
					}
				}
				off += uint64(n)
			}
			return any
		}
	}
	if err := wk.f.fetch(b.lo, b.hi, active, byRef, wk.edges); err != nil {
		return err
	}
	if wk.err != nil {
		return wk.err
	}
	return wk.flushRemote()
}

// batch is a run of consecutive own vertices.
type batch struct{ lo, hi uint32 }

// processNaive is the naive baseline on the plain CSR layout: for each
// active vertex two dependent READs (its two offset words, then its list),
// no merging across vertices, and every non-local update a remote CAS
// (posted per source vertex as one doorbell).
func (wk *worker) processNaive(b batch) error {
	e := wk.e
	rec := e.st.Codec.RecordBytes()
	var words [16]byte
	for v := b.lo; v < b.hi; v++ {
		if !e.active[v-e.lo] {
			continue
		}
		if err := wk.ep.Read(words[:], e.st.EntryAddr(v)); err != nil {
			return err
		}
		if err := wk.ep.Flush(); err != nil {
			return err
		}
		start := binary.LittleEndian.Uint64(words[:])
		end := binary.LittleEndian.Uint64(words[8:])
		if err := wk.readList(verbs.Addr(start), int(end-start)); err != nil {
			return err
		}
		if err := wk.visitRecords(v, uint64(int(end-start)/rec)); err != nil {
			return err
		}
		if err := wk.direct.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// readList reads n bytes of edge records at a into wk.buf (one READ).
func (wk *worker) readList(a verbs.Addr, n int) error {
	wk.buf = grow(wk.buf, n)
	if n == 0 {
		return nil
	}
	if err := wk.ep.Read(wk.buf, a); err != nil {
		return err
	}
	return wk.ep.Flush()
}

// visitRecords applies the edge function to the records in wk.buf.
func (wk *worker) visitRecords(v uint32, deg uint64) error {
	e := wk.e
	rec := e.st.Codec.RecordBytes()
	val := e.val[v-e.lo]
	for off := 0; off+rec <= len(wk.buf); off += rec {
		d := binary.LittleEndian.Uint32(wk.buf[off:])
		if d >= e.st.N() {
			return errors.Errorf("rank: vertex %d has an edge to %d, beyond the %d vertices (corrupt store)", v, d, e.st.N())
		}
		w := 1.0
		if e.st.Weighted {
			w = float64(math.Float32frombits(binary.LittleEndian.Uint32(wk.buf[off+4:])))
		}
		if err := wk.candidate(d, e.p.Edge(val, deg, w)); err != nil {
			return err
		}
	}
	return nil
}

// processFAM is the FAM-Graph baseline: the index is local, so one READ
// per active vertex fetches its list; every update is local.
func (wk *worker) processFAM(b batch) error {
	e := wk.e
	rec := e.st.Codec.RecordBytes()
	for v := b.lo; v < b.hi; v++ {
		if !e.active[v-e.lo] {
			continue
		}
		p := int(v) + e.st.ChunkOf(v)
		start, end := e.famIdx[p], e.famIdx[p+1]
		if err := wk.readList(verbs.Addr(start), int(end-start)); err != nil {
			return err
		}
		if err := wk.visitRecords(v, (end-start)/uint64(rec)); err != nil {
			return err
		}
	}
	return nil
}

// reduceLocal folds cand into a cached accumulator shared by the workers.
func reduceLocal(p *algo.Program, a *uint64, cand uint64) {
	for {
		old := atomic.LoadUint64(a)
		nv := p.Combine(old, cand)
		if nv == old || atomic.CompareAndSwapUint64(a, old, nv) {
			return
		}
	}
}

// model projects the fabric time since the previous call with the NIC
// profile: every CN's per-endpoint, per-MN operation counts are gathered
// and the slowest endpoint or NIC bounds the phase.
func (e *engine) model() (float64, string, error) {
	var mine []verbs.EndpointLoad
	for i, ep := range e.endpoints() {
		cur := verbs.EndpointLoad{CN: e.w.Index, Total: ep.Counters(), PerMN: ep.CountersByMN()}
		if len(e.last) <= i {
			e.last = append(e.last, verbs.EndpointLoad{PerMN: make([]verbs.Counters, len(cur.PerMN))})
		}
		d := verbs.EndpointLoad{CN: cur.CN, Total: cur.Total.Sub(e.last[i].Total), PerMN: make([]verbs.Counters, len(cur.PerMN))}
		for m := range cur.PerMN {
			d.PerMN[m] = cur.PerMN[m].Sub(e.last[i].PerMN[m])
		}
		e.last[i] = cur
		mine = append(mine, d)
	}
	blob, err := json.Marshal(mine)
	if err != nil {
		return 0, "", errors.Wrap(err, "rank: encoding fabric loads")
	}
	all, err := e.w.Comm.AllGather(blob)
	if err != nil {
		return 0, "", err
	}
	var loads []verbs.EndpointLoad
	for _, b := range all {
		var l []verbs.EndpointLoad
		if err := json.Unmarshal(b, &l); err != nil {
			return 0, "", errors.Wrap(err, "rank: decoding fabric loads")
		}
		loads = append(loads, l...)
	}
	mt := e.cfg.Profile.Time(loads)
	return mt.Seconds, mt.Bottleneck, nil
}

// endpoints are the workers' endpoints and the puller's.
func (e *engine) endpoints() []verbs.Endpoint {
	if e.pullEP == nil {
		return e.eps
	}
	return append(slices.Clip(e.eps), e.pullEP)
}

func (e *engine) localCounters() verbs.Counters {
	var c verbs.Counters
	for _, ep := range e.endpoints() {
		c.Add(ep.Counters())
	}
	return c
}

func (e *engine) jobCounters() (verbs.Counters, error) {
	v := e.localCounters().Int64s()
	if err := e.w.Comm.AllReduceInt64(v, spmd.Sum); err != nil {
		return verbs.Counters{}, err
	}
	return verbs.CountersFromInt64s(v), nil
}

// reduceActive sums the active vertices and their out-edges over the job.
func (e *engine) reduceActive() (uint64, uint64, error) {
	v := []int64{0, 0}
	for i, a := range e.active {
		if a {
			v[0]++
			v[1] += int64(e.deg[i])
		}
	}
	if err := e.w.Comm.AllReduceInt64(v, spmd.Sum); err != nil {
		return 0, 0, err
	}
	return uint64(v[0]), uint64(v[1]), nil
}

// reduceDangling sums the (float) values of vertices without out-edges.
func (e *engine) reduceDangling() (float64, error) {
	v := []float64{0}
	if e.p.Float {
		for i, d := range e.deg {
			if d == 0 {
				v[0] += math.Float64frombits(e.val[i])
			}
		}
	}
	if err := e.w.Comm.AllReduceFloat64(v, spmd.Sum); err != nil {
		return 0, err
	}
	return v[0], nil
}

// processHub runs the edges [t.EdgeLo, t.EdgeHi) of one hub vertex (stage
// 2 splits hubs so no goroutine holds more than one hub's share of work):
// it reads the vertex's index entry (or offset words), then only its part
// of the list — in dmg mode sending the parts of long segments for other
// chunks by reference — and applies the edge function with the vertex's
// full degree.
func (wk *worker) processHub(t balance.Task) error {
	e := wk.e
	v := t.Lo
	if !e.active[v-e.lo] {
		return nil
	}
	deg := e.deg[v-e.lo]
	a, b := t.EdgeRange(deg)
	st := e.st
	rec := uint64(st.Codec.RecordBytes())
	var list verbs.Addr
	var segs []uint32
	switch e.cfg.Mode {
	case ModeFAMGraph:
		list = verbs.Addr(e.famIdx[int(v)+st.ChunkOf(v)])
	case ModeNaive:
		var words [16]byte
		if err := wk.ep.Read(words[:], st.EntryAddr(v)); err != nil {
			return err
		}
		if err := wk.ep.Flush(); err != nil {
			return err
		}
		list = verbs.Addr(binary.LittleEndian.Uint64(words[:]))
	default:
		ent := make([]byte, st.Codec.Size)
		if err := wk.ep.Read(ent, st.EntryAddr(v)); err != nil {
			return err
		}
		if err := wk.ep.Flush(); err != nil {
			return err
		}
		var d csr.Entry
		if err := st.Codec.Decode(ent, &d); err != nil {
			return errors.Wrapf(err, "rank: index entry of vertex %d", v)
		}
		if uint64(d.Degree) != deg {
			return errors.Errorf("rank: hub vertex %d has an index entry of degree %d, expected %d", v, d.Degree, deg)
		}
		if d.Kind == csr.InPlace { // a hub threshold below the in-place capacity
			var ws []float32
			if st.Weighted {
				ws = d.Weights[a:b]
			}
			for k, dst := range d.Dst[a:b] {
				w := 1.0
				if ws != nil {
					w = float64(ws[k])
				}
				if err := wk.candidate(dst, e.p.Edge(e.val[v-e.lo], deg, w)); err != nil {
					return err
				}
			}
			return wk.flushRemote()
		}
		list = verbs.Addr(d.Addr)
		if d.Kind == csr.OutOfPlace && e.collab && !e.cfg.NoRefRD {
			segs = d.Segments
		}
	}
	// Pieces of [a, b) to fetch; parts of long segments for other chunks go
	// by reference instead.
	type piece struct{ lo, hi uint64 }
	var fetch []piece
	if segs == nil {
		fetch = append(fetch, piece{a, b})
	} else {
		var s0 uint64
		for k, n := range segs {
			lo, hi := max(a, s0), min(b, s0+uint64(n))
			s0 += uint64(n)
			if lo >= hi {
				continue
			}
			if k != e.w.Index && hi-lo >= uint64(e.cfg.RefRDMin) {
				it := update.RefItem{Seg: list.Add(lo * rec), Edges: uint32(hi - lo), Deg: uint32(deg), Val: e.val[v-e.lo]}
				if err := wk.sender.Ref(k, it); err != nil {
					return err
				}
				continue
			}
			fetch = append(fetch, piece{lo, hi})
		}
	}
	var total uint64
	for _, p := range fetch {
		total += p.hi - p.lo
	}
	wk.buf = grow(wk.buf, int(total*rec))
	var off uint64
	for _, p := range fetch {
		n := (p.hi - p.lo) * rec
		if err := wk.ep.Read(wk.buf[off:off+n], list.Add(p.lo*rec)); err != nil {
			return err
		}
		off += n
	}
	if total > 0 {
		if err := wk.ep.Flush(); err != nil {
			return err
		}
	}
	if err := wk.visitRecords(v, deg); err != nil {
		return err
	}
	if e.cfg.Mode == ModeNaive {
		return wk.direct.Flush()
	}
	return wk.flushRemote()
}
