package rank

import (
	"encoding/json"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/pkg/errors"
)

// Config is how the engine runs a program.
type Config struct {
	Program *algo.Program
	// Workers per CN; 0 means the CN's cores.
	Workers int
	// Batch is the number of consecutive vertices a worker claims at once.
	Batch int
	// DenseDivisor classifies an iteration as dense when its active edges
	// exceed |E|/DenseDivisor (Ligra's 20 by default).
	DenseDivisor float64
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
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Batch <= 0 {
		c.Batch = 256
	}
	if c.DenseDivisor <= 0 {
		c.DenseDivisor = 20
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Profile.Name == "" {
		c.Profile = verbs.DefaultProfile
	}
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
}

// Run executes cfg.Program on every rank of w: CNs compute over their chunk
// [chunks[i], chunks[i+1]) of the graph stored in st; MNs take part in the
// collectives while their pools serve the fabric. degrees are the
// out-degrees of this CN's chunk (nil on MNs).
//
// eps are this CN's endpoints, one per worker (nil on MNs); the caller
// closes them.
func Run(w *spmd.World, net verbs.Network, st *Store, eps []verbs.Endpoint, degrees []uint64, cfg Config) (*Result, error) {
	cfg.EnsureDefaults()
	if cfg.Agree == nil {
		cfg.Agree = barrierAgree(w)
	}
	p := cfg.Program
	e := &engine{w: w, net: net, st: st, cfg: cfg, p: p, eps: eps}
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
	start := time.Now()
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
		itc := &algo.Iteration{N: st.N(), Dangling: dangling}
		if err := cfg.Agree(e.push()); err != nil {
			return nil, err
		}
		if err := cfg.Agree(e.apply(itc)); err != nil {
			return nil, err
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
		s := IterStats{Dense: dense, ActiveVertices: activeV, ActiveEdges: activeE, Seconds: time.Since(t0).Seconds(), Verbs: cur.Sub(prev)}
		if s.ModeledSeconds, s.Bottleneck, err = e.model(); err != nil {
			return nil, err
		}
		res.ModeledSeconds += s.ModeledSeconds
		res.Iterations = append(res.Iterations, s)
		mode := "sparse"
		if dense {
			mode = "dense"
		}
		cfg.Logf("iter %d %s %d active vertices, %d active edges, %d remote ops, %.3fs", it, mode, activeV, activeE, s.Verbs.Ops(), s.Seconds)
		prev, activeV, activeE = cur, nextV, nextE
	}
	res.ComputeSeconds = time.Since(start).Seconds()
	if res.Verbs, err = e.jobCounters(); err != nil {
		return nil, err
	}
	res.Local = e.localCounters()
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
}

// model projects the fabric time since the previous call with the NIC
// profile: every CN's per-endpoint, per-MN operation counts are gathered
// and the slowest endpoint or NIC bounds the phase.
func (e *engine) model() (float64, string, error) {
	var mine []verbs.EndpointLoad
	for i, ep := range e.eps {
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

func (e *engine) isCN() bool { return e.w.Role == spmd.CN }

func (e *engine) init() error {
	if !e.isCN() {
		return nil
	}
	n := e.hi - e.lo
	e.val, e.acc, e.active = make([]uint64, n), make([]uint64, n), make([]bool, n)
	for i := range n {
		e.val[i], e.active[i] = e.p.Init(e.lo+i, e.st.N())
		e.acc[i] = e.p.Identity
	}
	for _, ep := range e.eps {
		if _, ok := ep.(verbs.Atomics); !ok {
			return errors.Errorf("rank: the %s fabric has no remote atomics", e.net.Provider())
		}
	}
	if err := e.st.writeWords(e.eps[0], attrValue, e.lo, e.val); err != nil {
		return err
	}
	return e.st.writeWords(e.eps[0], attrInbox, e.lo, e.acc)
}

func (e *engine) cacheBytes() uint64 {
	if !e.isCN() {
		return 0
	}
	n := uint64(e.hi - e.lo)
	return n * (8 + 8 + 8 + 1)
}

func (e *engine) localCounters() verbs.Counters {
	var c verbs.Counters
	for _, ep := range e.eps {
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

// batch is a run of consecutive own vertices: a loading batch of the
// layout (its out-of-place lists are contiguous on one MN), cut to at most
// Config.Batch vertices.
type batch struct{ lo, hi uint32 }

func (e *engine) batches() []batch {
	var out []batch
	for _, lb := range e.st.ChunkBatches(e.w.Index) {
		for a := lb.Lo; a < lb.Hi; a += uint32(e.cfg.Batch) {
			out = append(out, batch{a, min(lb.Hi, a+uint32(e.cfg.Batch))})
		}
	}
	return out
}

// push runs the edge function over every active vertex of the own chunk:
// workers claim batches dynamically.
func (e *engine) push() error {
	if !e.isCN() {
		return nil
	}
	bs := e.batches()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(e.eps))
	for wi, ep := range e.eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk, err := newWorker(e, ep)
			if err != nil {
				errs[wi] = err
				return
			}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bs) {
					return
				}
				if err := wk.process(bs[i]); err != nil {
					errs[wi] = err
					next.Store(int64(len(bs))) // stop the others early
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// apply folds the remote updates from the inbox into the cache, applies the
// program, writes the new values back and resets the inbox.
func (e *engine) apply(it *algo.Iteration) error {
	if !e.isCN() {
		return nil
	}
	ep := e.eps[0]
	inbox := make([]uint64, len(e.acc))
	if err := e.st.readWords(ep, attrInbox, e.lo, inbox); err != nil {
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
	return e.st.writeWords(ep, attrInbox, e.lo, inbox)
}

// worker is one goroutine's state: its endpoint and reusable buffers.
type worker struct {
	e      *engine
	ep     verbs.Endpoint
	at     verbs.Atomics
	f      *fetcher
	remote map[uint32]uint64
	pend   []pending
}

type pending struct {
	v               uint32
	cand, old, prev uint64
}

func newWorker(e *engine, ep verbs.Endpoint) (*worker, error) {
	f, err := newFetcher(e.st, ep, e.net)
	if err != nil {
		return nil, err
	}
	return &worker{e: e, ep: ep, at: ep.(verbs.Atomics), f: f, remote: map[uint32]uint64{}}, nil
}

func (wk *worker) process(b batch) error {
	e := wk.e
	p, n := e.p, e.st.N()
	active := func(v uint32) bool { return e.active[v-e.lo] }
	err := wk.f.fetch(b.lo, b.hi, active, func(v uint32, dst []uint32, ws []float32) error {
		val, deg := e.val[v-e.lo], uint64(len(dst))
		for k, d := range dst {
			if d >= n {
				return errors.Errorf("rank: vertex %d has an edge to %d, beyond the %d vertices (corrupt store)", v, d, n)
			}
			w := 1.0
			if ws != nil {
				w = float64(ws[k])
			}
			cand := p.Edge(val, deg, w)
			if d >= e.lo && d < e.hi {
				reduceLocal(p, &e.acc[d-e.lo], cand)
			} else if old, ok := wk.remote[d]; ok {
				wk.remote[d] = p.Combine(old, cand)
			} else {
				wk.remote[d] = cand
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return wk.flushRemote()
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

// flushRemote applies the combined candidates for other CNs' vertices to
// their inbox words on the MNs with CAS, in rounds: every round posts one
// CAS per unfinished vertex as one doorbell batch, and retries those that
// lost a race with the value they saw.
func (wk *worker) flushRemote() error {
	if len(wk.remote) == 0 {
		return nil
	}
	p, st := wk.e.p, wk.e.st
	wk.pend = wk.pend[:0]
	for v, c := range wk.remote {
		wk.pend = append(wk.pend, pending{v: v, cand: c, old: p.Identity})
		delete(wk.remote, v)
	}
	for len(wk.pend) > 0 {
		for i := range wk.pend {
			pd := &wk.pend[i]
			if err := wk.at.CAS64(st.InboxAddr(pd.v), pd.old, p.Combine(pd.old, pd.cand), &pd.prev); err != nil {
				return err
			}
		}
		if err := wk.ep.Flush(); err != nil {
			return err
		}
		keep := wk.pend[:0]
		for _, pd := range wk.pend {
			if pd.prev == pd.old {
				continue // applied
			}
			if p.Reduce == algo.Min && pd.cand >= pd.prev {
				continue // someone got there with a smaller value
			}
			pd.old = pd.prev
			keep = append(keep, pd)
		}
		wk.pend = keep
	}
	return nil
}
