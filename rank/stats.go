package rank

import (
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"
	"time"

	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
)

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
	// (famgraph: every attribute is local).
	Update  string       `json:"update"`
	Updates update.Stats `json:"updates"`
	// PushSeconds, ApplySeconds and WaitSeconds split the iteration on
	// the slowest CN: its push, its apply (drains and updates), and its
	// time in the iteration's boundaries; MNApplySeconds is the MNs'
	// ValRD phase.
	PushSeconds    float64 `json:"push_s"`
	ApplySeconds   float64 `json:"apply_s"`
	WaitSeconds    float64 `json:"wait_s"`
	MNApplySeconds float64 `json:"mn_apply_s,omitempty"`
}

// phaseTimes is one rank's split of an iteration.
type phaseTimes struct {
	push, apply, wait, mnApply time.Duration
}

// Result is what a run produced.
type Result struct {
	Iterations []IterStats
	// StartedAt is the iteration the run began with: 0, or where a kept
	// state left off (Config.Start).
	StartedAt int
	// Checkpoints counts the states the run kept (Config.Checkpoint),
	// and CheckpointSeconds is the time they took.
	Checkpoints       int
	CheckpointSeconds float64
	// Values holds every vertex's final value, on world rank 0 only.
	Values []uint64
	// Verbs are the job's fabric operations during compute, summed.
	Verbs verbs.Counters
	// Local are this CN's operations (zero on MNs).
	Local verbs.Counters
	// CacheBytes is this CN's local state (0 on MNs); MaxCacheBytes the
	// largest over the CNs.
	CacheBytes, MaxCacheBytes uint64
	// KeptEntries is the vertices, over all CNs, whose index entries
	// their CN keeps room for (entrycache.go), beyond the cache above;
	// MaxKeptBytes the largest CN's room for them.
	KeptEntries, MaxKeptBytes uint64
	ComputeSeconds            float64
	// SetupSeconds is the part of ComputeSeconds before the first
	// iteration: the vertex state made and written to DM, the first
	// boundary.
	SetupSeconds float64
	// ModeledSeconds is the sum of the iterations' modelled fabric time.
	ModeledSeconds float64
	// Updates sums the iterations' update paths over the job.
	Updates update.Stats
	// ValRDApply is who applied ValRD pairs ("cn", "mn", or auto's record).
	ValRDApply string
	// TailRatio is Σ max busy / Σ median busy over the iterations, the
	// worst CN (balance.Tail).
	TailRatio float64
	// Steals counts tasks stolen by idle workers, over the job.
	Steals uint64
	// HubDegree is the hub threshold used.
	HubDegree uint64
	// TaskVertices is the vertices a task held (Config.Batch, or the
	// fabric's: taskVertices).
	TaskVertices int
	// CPUNanosPerEdge is the CN processes' CPU time during compute over
	// the edges processed (0 where the platform does not tell CPU time).
	CPUNanosPerEdge float64
	// CNCPUSeconds and MNCPUSeconds are the CPU time of every CN and MN
	// process during compute (an MN's includes its fabric progress).
	CNCPUSeconds, MNCPUSeconds float64
	// PeakRSSCN and PeakRSSMN are the largest peak resident set of a CN
	// and of an MN process, from loading to the end of compute (getrusage;
	// 0 for the MNs of a served pool, which run no engine). Under --local
	// every rank is the one process.
	PeakRSSCN, PeakRSSMN uint64
}

// add appends the run of a Phased kernel's next phase to r: its
// iterations, its sums of operations, seconds and CPU, its largest caches
// and tails, and its values.
func (r *Result) add(next *Result) {
	r.Iterations = append(r.Iterations, next.Iterations...)
	r.Values = next.Values
	r.Verbs.Add(next.Verbs)
	r.Local.Add(next.Local)
	r.CacheBytes, r.MaxCacheBytes = max(r.CacheBytes, next.CacheBytes), max(r.MaxCacheBytes, next.MaxCacheBytes)
	r.KeptEntries, r.MaxKeptBytes = max(r.KeptEntries, next.KeptEntries), max(r.MaxKeptBytes, next.MaxKeptBytes)
	r.ComputeSeconds += next.ComputeSeconds
	r.SetupSeconds += next.SetupSeconds
	r.ModeledSeconds += next.ModeledSeconds
	r.Updates.Add(next.Updates)
	r.ValRDApply = next.ValRDApply
	r.TailRatio = max(r.TailRatio, next.TailRatio)
	r.Steals += next.Steals
	r.HubDegree, r.TaskVertices = next.HubDegree, next.TaskVertices
	r.CNCPUSeconds += next.CNCPUSeconds
	r.MNCPUSeconds += next.MNCPUSeconds
	r.PeakRSSCN, r.PeakRSSMN = max(r.PeakRSSCN, next.PeakRSSCN), max(r.PeakRSSMN, next.PeakRSSMN)
	r.setCPUPerEdge()
}

// setCPUPerEdge is CPUNanosPerEdge from the CNs' CPU and the iterations'
// active edges.
func (r *Result) setCPUPerEdge() {
	var edges uint64
	for _, it := range r.Iterations {
		edges += it.ActiveEdges
	}
	if edges > 0 {
		r.CPUNanosPerEdge = r.CNCPUSeconds * 1e9 / float64(edges)
	}
}

// sums is what a boundary's all-reduce tells every rank.
type sums struct {
	activeV, activeE uint64
	dangling         float64
	verbs            verbs.Counters // job totals so far
	updates          update.Stats   // job totals so far
	modeled          float64        // this iteration
	bottleneck       string
	tail             float64 // this iteration's worst CN
	drainMax         float64 // slowest CN's apply phase
	mnApply          float64
	steals           uint64
	cacheMax         uint64
	kept             uint64  // the CNs' entry caches' vertices (entrycache.go)
	keptMax          uint64  // and the largest one's bytes
	cpu              float64 // CN CPU seconds so far
	mnCPU            float64 // MN CPU seconds so far
	rssCN, rssMN     uint64  // the largest CN's and MN's peak resident set so far
	tailJob          float64 // Σ max / Σ median so far, the worst CN
	push, apply      float64 // the slowest CN's phases this iteration
	wait             float64
	// trav is the contribution of some frontier vertex (traversals: all
	// are equal), for the bottom-up step.
	trav    uint64
	hasTrav bool
}

// statsState is what a rank keeps between boundaries.
type statsState struct {
	// base is every endpoint's counters when the program started: what
	// the job did on them before (the load, a previous phase) is not
	// the program's.
	base map[verbs.Endpoint]verbs.Counters
	// Per endpoint: the counters at the last boundary.
	lastTotal []verbs.Counters
	lastPerMN [][]verbs.Counters
	curPerMN  []verbs.Counters
	vec       []float64
	// The last push's busy summary and the job's Σ max and Σ median.
	lastMax, lastMed float64
	sumMax, sumMed   float64
	steals           uint64
	// updates this rank counted (workers and the MN's apply).
	updates update.Stats
	// auto ValRD placement: seconds per pair measured for each side.
	perPair        map[string]float64
	count          map[string]int
	drainSeconds   float64
	mnApplySeconds float64
	cpuStart       float64
	prev           sums
	busyBuf        []float64
	phase          phaseTimes
	// pulled counts RefRD edges the puller applied (its own goroutine).
	pulled atomic.Uint64
}

// The fused vector: fixed offsets for a job of C CNs and M MNs. Every
// value is a float64 (counters are exact below 2^53); a rank writes its
// own slots and the all-reduce sums.
const (
	vActiveV = iota
	vActiveE
	vVerbs
	vUpdates = vVerbs + verbs.NumCounterFields
	vSlots   = vUpdates + update.NumStats // then per-CN slots, then per-MN counters
)

// Per-CN slots.
const (
	sDangling = iota
	sEndpoint // slowest endpoint's modelled time this iteration
	sEndpointIdx
	sNIC  // the CN NIC's modelled time
	sTail // this push's max/median busy
	sDrain
	sSumMax // Σ max busy so far
	sSumMed // Σ median busy so far
	sSteals
	sCache
	sCPU
	sPush
	sApply
	sWait
	sTravHas // the CN has an active vertex, whose contribution is
	sTravLo  // this (low 32 bits)
	sTravHi  // and this (high 32 bits)
	sRSS     // the CN process's peak resident set so far
	sKept    // the vertices whose index entries the CN keeps room for
	sKeptB   // and the bytes of that room
	numCNSlots
)

// Per-MN values: its NIC's counters this iteration (summed over every
// CN's endpoints), then its own slot for the apply time.
const (
	mCounters = 0
	mApply    = verbs.NumCounterFields
	mCPU      = mApply + 1
	mRSS      = mCPU + 1 // the MN process's peak resident set so far
	numMNVals = mRSS + 1
)

func (e *engine) vecLen() int {
	return vSlots + numCNSlots*e.w.Roles.CN + numMNVals*e.numMN
}

func (e *engine) cnSlot(cn, s int) int { return vSlots + numCNSlots*cn + s }
func (e *engine) mnVal(mn, s int) int {
	return vSlots + numCNSlots*e.w.Roles.CN + numMNVals*mn + s
}

// boundary is the iteration boundary: one fused all-reduce carrying the
// failure flag, the next frontier's size, the dangling mass, the counters
// and the NIC model's loads.
func (e *engine) boundary(err error, first bool) (sums, error) {
	st := &e.stats
	if len(st.vec) == 0 {
		st.vec = make([]float64, e.vecLen())
	}
	v := st.vec
	clear(v)
	if e.cn {
		e.fillCN(v, first)
	}
	if !e.cn {
		v[e.mnVal(e.w.Index, mApply)] = st.mnApplySeconds
		cpu, rss := processUsage()
		v[e.mnVal(e.w.Index, mCPU)] = cpu - st.cpuStart
		v[e.mnVal(e.w.Index, mRSS)] = float64(rss)
		st.updates.Put(v[vUpdates : vUpdates+update.NumStats])
	}
	if serr := e.cfg.Sync(err, v); serr != nil {
		return sums{}, serr
	}
	return e.readSums(v), nil
}

// fillCN writes a CN's part of the vector.
func (e *engine) fillCN(v []float64, first bool) {
	st := &e.stats
	var act, edges uint64
	var dangling float64
	for i := range e.laneSums {
		act += e.laneSums[i].activeV
		edges += e.laneSums[i].activeE
		dangling += e.laneSums[i].dangling
	}
	v[vActiveV], v[vActiveE] = float64(act), float64(edges)
	v[e.cnSlot(e.me, sDangling)] = dangling
	eps := e.endpoints()
	if st.lastTotal == nil {
		st.lastTotal = make([]verbs.Counters, len(eps))
		st.lastPerMN = make([][]verbs.Counters, len(eps))
		for i := range eps {
			st.lastPerMN[i] = make([]verbs.Counters, e.numMN)
		}
		st.curPerMN = make([]verbs.Counters, e.numMN)
	}
	var total, nic verbs.Counters
	slowest, slowIdx := 0.0, 0
	p := e.cfg.Profile
	for i, ep := range eps {
		cur := verbs.ReadCounters(ep, st.curPerMN)
		total.Add(cur.Sub(st.base[ep]))
		d := cur.Sub(st.lastTotal[i])
		if !first {
			if t := p.EndpointTime(d); t > slowest {
				slowest, slowIdx = t, i
			}
			nic.Add(d)
			for m, c := range st.curPerMN {
				putCounters(v[e.mnVal(m, mCounters):], c.Sub(st.lastPerMN[i][m]))
			}
		}
		st.lastTotal[i] = cur
		copy(st.lastPerMN[i], st.curPerMN)
	}
	putCounters(v[vVerbs:], total)
	for i := range e.wks {
		st.updates.Add(e.wks[i].stats)
		e.wks[i].stats = update.Stats{}
	}
	st.updates.RefPulled += st.pulled.Swap(0)
	st.updates.Put(v[vUpdates : vUpdates+update.NumStats])
	v[e.cnSlot(e.me, sEndpoint)] = slowest
	v[e.cnSlot(e.me, sEndpointIdx)] = float64(slowIdx)
	v[e.cnSlot(e.me, sNIC)] = p.NICTime(nic)
	if st.lastMed > 0 {
		v[e.cnSlot(e.me, sTail)] = st.lastMax / st.lastMed
	} else if st.lastMax > 0 {
		v[e.cnSlot(e.me, sTail)] = 1
	}
	v[e.cnSlot(e.me, sDrain)] = st.drainSeconds
	v[e.cnSlot(e.me, sSumMax)] = st.sumMax
	v[e.cnSlot(e.me, sSumMed)] = st.sumMed
	v[e.cnSlot(e.me, sSteals)] = float64(st.steals)
	v[e.cnSlot(e.me, sCache)] = float64(e.cacheBytes())
	cpu, rss := processUsage()
	v[e.cnSlot(e.me, sCPU)] = cpu - st.cpuStart
	v[e.cnSlot(e.me, sRSS)] = float64(rss)
	v[e.cnSlot(e.me, sKept)], v[e.cnSlot(e.me, sKeptB)] = float64(e.keptEntries()), float64(e.keptBytes())
	v[e.cnSlot(e.me, sPush)] = st.phase.push.Seconds()
	v[e.cnSlot(e.me, sApply)] = st.phase.apply.Seconds()
	v[e.cnSlot(e.me, sWait)] = st.phase.wait.Seconds()
	if c, ok := e.someContribution(); ok {
		v[e.cnSlot(e.me, sTravHas)] = 1
		v[e.cnSlot(e.me, sTravLo)] = float64(uint32(c))
		v[e.cnSlot(e.me, sTravHi)] = float64(c >> 32)
	}
}

func putCounters(v []float64, c verbs.Counters) {
	for i, x := range c.Int64s() {
		v[i] += float64(x)
	}
}

func getCounters(v []float64) verbs.Counters {
	var f [verbs.NumCounterFields]int64
	for i := range f {
		f[i] = int64(v[i])
	}
	return verbs.CountersFromInt64s(f[:])
}

// readSums decodes the reduced vector, in the same order on every rank.
func (e *engine) readSums(v []float64) sums {
	s := sums{activeV: uint64(v[vActiveV]), activeE: uint64(v[vActiveE]), verbs: getCounters(v[vVerbs:]),
		updates: update.StatsFrom(v[vUpdates : vUpdates+update.NumStats])}
	p := e.cfg.Profile
	// The bottleneck: the slowest endpoint, CN NIC or MN NIC (named only
	// once found, so a boundary formats one string).
	kind, who, idx := 0, 0, 0
	consider := func(t float64, k, w, i int) {
		if t > s.modeled {
			s.modeled, kind, who, idx = t, k, w, i
		}
	}
	worstTail := 0.0
	for cn := range e.w.Roles.CN {
		s.dangling += v[e.cnSlot(cn, sDangling)]
		consider(v[e.cnSlot(cn, sEndpoint)], 1, cn, int(v[e.cnSlot(cn, sEndpointIdx)]))
		consider(v[e.cnSlot(cn, sNIC)], 2, cn, 0)
		s.tail = max(s.tail, v[e.cnSlot(cn, sTail)])
		s.drainMax = max(s.drainMax, v[e.cnSlot(cn, sDrain)])
		if med := v[e.cnSlot(cn, sSumMed)]; med > 0 {
			worstTail = max(worstTail, v[e.cnSlot(cn, sSumMax)]/med)
		}
		s.steals += uint64(v[e.cnSlot(cn, sSteals)])
		s.cacheMax = max(s.cacheMax, uint64(v[e.cnSlot(cn, sCache)]))
		s.cpu += v[e.cnSlot(cn, sCPU)]
		s.push = max(s.push, v[e.cnSlot(cn, sPush)])
		s.apply = max(s.apply, v[e.cnSlot(cn, sApply)])
		s.wait = max(s.wait, v[e.cnSlot(cn, sWait)])
		s.rssCN = max(s.rssCN, uint64(v[e.cnSlot(cn, sRSS)]))
		s.kept += uint64(v[e.cnSlot(cn, sKept)])
		s.keptMax = max(s.keptMax, uint64(v[e.cnSlot(cn, sKeptB)]))
	}
	for mn := range e.numMN {
		consider(p.NICTime(getCounters(v[e.mnVal(mn, mCounters):])), 3, mn, 0)
		s.mnApply = max(s.mnApply, v[e.mnVal(mn, mApply)])
		s.mnCPU += v[e.mnVal(mn, mCPU)]
		s.rssMN = max(s.rssMN, uint64(v[e.mnVal(mn, mRSS)]))
	}
	switch kind {
	case 1:
		s.bottleneck = fmt.Sprintf("cn %d endpoint %d", who, idx)
	case 2:
		s.bottleneck = fmt.Sprintf("cn %d nic", who)
	case 3:
		s.bottleneck = fmt.Sprintf("mn %d nic", who)
	}
	s.tailJob = max(1, worstTail)
	for cn := range e.w.Roles.CN {
		if v[e.cnSlot(cn, sTravHas)] != 0 {
			s.trav = uint64(v[e.cnSlot(cn, sTravLo)]) | uint64(v[e.cnSlot(cn, sTravHi)])<<32
			s.hasTrav = true
			break
		}
	}
	return s
}

// record fills an iteration's statistics from the boundary that ended it.
func (e *engine) record(s *IterStats, next sums) {
	st := &e.stats
	prev := st.prev
	s.Verbs = next.verbs.Sub(prev.verbs)
	s.Updates = next.updates.Sub(prev.updates)
	s.ModeledSeconds, s.Bottleneck = next.modeled, next.bottleneck
	s.TailRatio = max(1, next.tail)
	s.PushSeconds, s.ApplySeconds, s.WaitSeconds, s.MNApplySeconds = next.push, next.apply, next.wait, next.mnApply
	if e.it.valrdAt != "" {
		st.count[e.it.valrdAt]++
		if pairs := s.Updates.ValRD; pairs > 0 {
			sec := next.drainMax
			if e.it.valrdAt == "mn" {
				sec = next.mnApply
			}
			st.perPair[e.it.valrdAt] = max(sec/float64(pairs), 1e-12)
		}
	}
	st.prev = next
}

// chooseValRD picks who applies this iteration's ValRD pairs (the same on
// every rank: the measurements are job-wide).
func (st *statsState) chooseValRD(setting string) string {
	if setting != "auto" {
		return setting
	}
	cn, mn := st.perPair["cn"], st.perPair["mn"]
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

// busy records the last push's busy times.
func (st *statsState) busy(b []float64, steals uint64) {
	if len(b) == 0 {
		return
	}
	s := slices.Clone(b)
	slices.Sort(s)
	mx, med := s[len(s)-1], s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if med == 0 {
		var sum float64
		for _, x := range s {
			sum += x
		}
		med = sum / float64(len(s))
	}
	st.lastMax, st.lastMed = mx, med
	if len(s) > 1 {
		st.sumMax += mx
		st.sumMed += med
	}
	st.steals += steals
}

// countFrom takes the endpoints' counters now as the program's zero (nil
// endpoints skipped).
func (st *statsState) countFrom(eps []verbs.Endpoint) {
	st.base = map[verbs.Endpoint]verbs.Counters{}
	for _, ep := range eps {
		if ep != nil {
			st.base[ep] = verbs.ReadCounters(ep, nil)
		}
	}
}

// finish fills the job's totals and gathers the values on rank 0.
func (e *engine) finish(res *Result) error {
	last := e.stats.prev
	res.Verbs, res.Updates = last.verbs, last.updates
	for _, it := range res.Iterations {
		res.ModeledSeconds += it.ModeledSeconds
	}
	res.TailRatio, res.Steals, res.MaxCacheBytes = last.tailJob, last.steals, last.cacheMax
	res.KeptEntries, res.MaxKeptBytes = last.kept, last.keptMax
	res.HubDegree, res.TaskVertices = e.cfg.HubDegree, e.cfg.Batch
	res.CNCPUSeconds, res.MNCPUSeconds = last.cpu, last.mnCPU
	res.PeakRSSCN, res.PeakRSSMN = last.rssCN, last.rssMN
	res.setCPUPerEdge()
	res.ValRDApply = e.cfg.ValRDApply
	if e.cfg.ValRDApply == "auto" {
		res.ValRDApply = fmt.Sprintf("auto (cn in %d iterations, mn in %d)", e.stats.count["cn"], e.stats.count["mn"])
	}
	if e.cn {
		res.CacheBytes = e.cacheBytes()
		for _, ep := range e.endpoints() {
			res.Local.Add(verbs.ReadCounters(ep, nil).Sub(e.stats.base[ep]))
		}
	}
	if e.valuesBehind {
		if err := e.cfg.Sync(e.catchUpValues(), nil); err != nil {
			return err
		}
	}
	// Rank 0 gathers the values from DM for the output, once the cache
	// is given back (the values are on DM; the cache and a word per
	// vertex need not be held at once), and its peak resident set then
	// counts in the report.
	var ep verbs.Endpoint
	if e.cn {
		ep = e.wks[0].ep
	}
	e.close()
	var gather error
	peak := []float64{0}
	if e.w.Rank() == 0 {
		res.Values = make([]uint64, e.st.N())
		gather = e.io.read(e.st, ep, attrValue, 0, res.Values)
		_, rss := processUsage()
		peak[0] = float64(rss)
	}
	if err := e.cfg.Sync(gather, peak); err != nil {
		return err
	}
	res.PeakRSSCN = max(res.PeakRSSCN, uint64(peak[0])) // rank 0 is CN 0
	return nil
}

// endpoints are the workers' endpoints and the puller's.
func (e *engine) endpoints() []verbs.Endpoint { return e.eps }

// MinCacheBytes is the least state a CN keeps for a chunk of n vertices,
// whatever the kernel and the mode: a value, an accumulator, a
// contribution and a degree per vertex (cacheBytes adds the rest).
func MinCacheBytes(n uint64) uint64 { return n * (8 + 8 + 8 + 4) }

// cacheBytes is the CN's per-vertex state: values, accumulators,
// contributions, degrees and the frontier of its chunk, plus what the mode
// keeps (famgraph: the whole index and every vertex's value and
// accumulator) and the triangle operator's buffers (bounded per worker):
// what the design needs. The copies of index entries it keeps within the
// budget beyond that (entrycache.go) are counted apart (keptBytes).
func (e *engine) cacheBytes() uint64 {
	n := uint64(e.hi - e.lo)
	b := MinCacheBytes(n) + 8*uint64(len(e.front.bits)) + 8*uint64(len(e.reached))
	// The other chunks' contributions (the value pull) and frontier bits
	// (the bottom-up step).
	b += 8*(uint64(len(e.vpl.far))-min(uint64(len(e.vpl.far)), n)) + 4*uint64(len(e.vpl.ids)) + 8*uint64(len(e.bu.remote))
	if e.multi.bag != nil {
		b += e.multi.bag.bytes()
	}
	for _, wk := range e.wks {
		if t, ok := wk.f.(*triangles); ok {
			b += t.bytes()
		}
		b += wk.tbag.bytes()
	}
	return b + e.mode.cacheBytes(e)
}

// someContribution is the contribution of one active vertex of the own
// chunk (traversals only: they are all equal).
func (e *engine) someContribution() (uint64, bool) {
	if !e.spec.Traversal {
		return 0, false
	}
	f := e.front
	if !f.dense {
		if len(f.list) == 0 {
			return 0, false
		}
		return e.contrib[f.list[0]-e.lo], true
	}
	for i, w := range f.bits {
		if w != 0 {
			return e.contrib[uint32(i*64+bits.TrailingZeros64(w))], true
		}
	}
	return 0, false
}
