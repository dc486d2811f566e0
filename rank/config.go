package rank

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/verbs"
)

// Modes of the engine (DESIGN.md §8), as --mode spells them.
const (
	ModeDMG      = "dmg"      // the design: adaptive store, merging, collaborative update, pull
	ModeNaive    = "naive"    // plain CSR on DM, per-vertex reads, remote atomics
	ModeFAMGraph = "famgraph" // every CN holds the whole index and all attributes
)

// Modes lists the engine modes.
var Modes = []string{ModeDMG, ModeNaive, ModeFAMGraph}

// Sync is the job's phase boundary (launch.Job.Sync): every rank passes
// its phase's error and a vector; the vectors are summed element-wise over
// the world into sum (nil: a plain barrier). Either every rank continues
// (nil) or every rank stops with the same error. It must synchronise like a
// barrier.
type Sync func(err error, sum []float64) error

// Config is how the engine runs a program.
type Config struct {
	Program algo.Program
	// Mode is dmg (default), naive or famgraph.
	Mode string
	// Workers per CN; 0 means the CN's cores.
	Workers int
	// Inflight is the number of goroutines per worker, each with its own
	// endpoint, so that several batches are in flight and remote latency
	// is hidden (the paper's coroutines); default 1: on shm over two cores
	// more goroutines only add contention, while on an RDMA NIC with
	// microseconds per round trip they overlap the waits.
	Inflight int
	// Batch is the number of consecutive vertices a task holds, whole
	// loading batches where it holds more than one (0: the fabric's,
	// taskVertices: 1024, one loading batch, or more where a round trip
	// costs more than its bytes). A task's entries are one READ, its
	// lists one more per MN, both MNs' in one round trip.
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
	// PullDivisor: a dense iteration pulls its local candidates when its
	// active edges exceed |E|/PullDivisor (default 1.5), else it pushes
	// them; the pull reads every local in-list through the fabric, the
	// push only the active vertices' (see docs/design.md). Traversals pull
	// whenever dense: the pull skips reached vertices.
	PullDivisor float64
	// Ablations of --mode dmg, one part of the design off each.
	NoMerge    bool // one READ per entry and per list, no merging of neighbours
	NoDoorbell bool // every operation its own doorbell and round trip
	NoCollab   bool // direct remote update in dense iterations too
	NoRefRD    bool // no pass-by-reference redistribution
	NoValRD    bool // no pass-by-value redistribution
	NoPull     bool // dense iterations push local candidates too (a CAS per edge)
	NoBottomUp bool // dense traversal iterations push their frontier's remote segments instead of checking remote in-neighbours against the other chunks' frontier bitmaps
	// RemotePull: a dense pull iteration with most edges active has every
	// CN pull for the other chunks' vertices too (rpull.go) instead of
	// sending its segments for them through the update coordinator
	// (RefRD, ValRD). Off by default: it measured no faster here (see
	// docs/design.md).
	RemotePull bool
	// NoValuePull switches the value pull off (valuepull.go): a dense pull
	// iteration with most edges active then sends its segments for other
	// chunks through the update coordinator (RefRD, ValRD) instead of
	// having every CN pull its vertices' whole in-lists against the other
	// chunks' contributions, read from DM in bulk.
	NoValuePull bool
	// ValuePullMax bounds the other chunks' contributions a CN holds for
	// the value pull, in bytes (8 per vertex of the graph); a larger graph
	// takes the update coordinator (default 512 MiB: 64 M vertices).
	ValuePullMax uint64
	// CNMem is the CN's memory budget (--cn-mem; 0: none). The copies of
	// the chunk's index entries (entrycache.go) take at most a quarter of
	// it, within what the rest of the cache leaves of three quarters.
	CNMem uint64
	// NoEntryCache reads a task's index entries from DM in every
	// iteration instead of keeping the chunk's entries once read.
	NoEntryCache bool
	// ValuePullDivisor: a dense iteration takes the value pull when its
	// active edges exceed |E|/ValuePullDivisor (default 3): it reads every
	// list of the chunk, the collaborative update only the active ones'.
	ValuePullDivisor float64
	// NoRelax keeps the pulls (value pulls and local ones) of Relax
	// kernels (algo.Spec.Relax: WCC, SSSP) Jacobi: a vertex sees only the
	// values of the iteration's start, not those its CN's pulls lowered
	// earlier in it.
	NoRelax bool
	// NoNarrow has the value pull of a kernel whose values are vertex ids
	// (algo.Spec.VertexIDs: WCC) gather them from the 8-byte words read
	// from DM, not from the CN's copy of them in 4 bytes.
	NoNarrow bool
	// RefRDMin is the segment length T from which a segment for another
	// chunk is sent by reference instead of fetched (default 256 edges,
	// see docs/design.md).
	RefRDMin uint32
	// SparseValRDMin is the segment length from which a sparse iteration
	// sends a segment for another chunk by value (ValRD pairs in the
	// owner's mailbox, drained by its sparse apply) instead of by direct
	// remote update: a hub in the frontier then costs a few WRITEs, not a
	// remote CAS per neighbour. 0 takes the fabric's: 1 (every segment by
	// value) where the MNs' CPUs execute remote atomics
	// (verbs.AtomicsOnTargetCPU: shm, tcp), else 32 edges (see
	// docs/design.md). NoCollab and NoValRD switch it off.
	SparseValRDMin uint32
	// RefRDPuller drains the own chunk's RefRD mailbox while the push runs,
	// in a goroutine with its own endpoint, instead of only after the
	// iteration's barrier; senders then commit every flush with a second
	// FAA.
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
	// MergeGap is the largest gap (bytes) the read mergers join across;
	// 0 takes the fabric's (verbs.MergeGap: 16 KiB on shm, 64 KiB on tcp,
	// 2 KiB on RDMA NICs; see docs/design.md).
	MergeGap int
	// Sync is the job's phase boundary; nil means an all-reduce of the
	// failure flags.
	Sync Sync
	// Logf logs progress, called on world rank 0 only (may be nil).
	Logf func(format string, args ...any)
	// Profile is the NIC model that projects the counted operations to an
	// RDMA fabric (zero: verbs.DefaultProfile).
	Profile verbs.Profile
	// Checkpoint, when set, keeps the run's state at the boundaries
	// Cadence chooses (checkpoint.go); not for phased or triangle kernels.
	Checkpoint Checkpointer
	Cadence    Cadence
	// Resume, when set, gives the kept state the run continues from
	// instead of the program's initial values.
	Resume Restorer
	// Probe, when set, has rank 0 read a sample of the run from DM at a
	// boundary, for a sampled check (probe.go).
	Probe *Probe
}

// Defaults is the zero Config with its defaults filled in: the one place
// the command line takes its flags' default values from.
func Defaults() Config {
	var c Config
	c.EnsureDefaults()
	return c
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
	if c.DenseDivisor == 0 {
		c.DenseDivisor = 20
	}
	if c.PullDivisor == 0 {
		c.PullDivisor = 1.5
	}
	if c.RefRDMin == 0 {
		c.RefRDMin = 256
	}
	if c.ValuePullDivisor == 0 {
		c.ValuePullDivisor = 3
	}
	if c.ValuePullMax == 0 {
		c.ValuePullMax = 512 << 20
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

// Validate checks the configuration (after EnsureDefaults); every problem
// is a *ParamError naming the setting.
func (c *Config) Validate() error {
	if _, err := parseMode(c.Mode); err != nil {
		return err
	}
	if set, all := c.designOnly(); c.Mode != ModeDMG && len(set) > 0 {
		return paramErrorf("the ablation flags (%s) apply to --mode dmg only", strings.Join(all, ", "))
	}
	switch c.ValRDApply {
	case "cn", "mn", "auto":
	default:
		return paramErrorf("--valrd-apply %q; expected cn, mn or auto", c.ValRDApply)
	}
	for _, d := range []struct {
		flag string
		v    float64
	}{{"--dense-threshold", c.DenseDivisor}, {"--pull-threshold", c.PullDivisor}, {"--value-pull-threshold", c.ValuePullDivisor}} {
		if math.IsNaN(d.v) || math.IsInf(d.v, 0) || d.v <= 0 {
			return paramErrorf("%s %v; expected a finite number > 0", d.flag, d.v)
		}
	}
	if c.MergeGap < 0 {
		return paramErrorf("read merge gap %d; expected ≥ 0", c.MergeGap)
	}
	if c.Batch < 0 {
		return paramErrorf("--batch %d; expected at least 1 vertex per task (0: the fabric's)", c.Batch)
	}
	return c.Profile.Validate()
}

// ParamError is a bad engine or algorithm parameter (unknown mode, a
// source that is not a vertex, a pool too small): the user's input, exit
// status 2.
type ParamError struct{ Msg string }

func (e *ParamError) Error() string  { return "rank: " + e.Msg }
func (e *ParamError) BadInput() bool { return true }

func paramErrorf(format string, args ...any) error {
	return &ParamError{Msg: fmt.Sprintf(format, args...)}
}

// taskVertices is Config.Batch's default on net for the store st and a
// CN of the given worker goroutines: a loading batch of the default size
// (dmstore.DefaultBatchVertices), or, where a round trip should bring
// more bytes (verbs.RoundTripBytes: over sockets), as many whole loading
// batches as read that many bytes of the out-layout (its entries and
// lists; a kron:20 vertex's are about 150 B: 7 Ki vertices a task over
// tcp), at most 64 Ki vertices, and few enough that every goroutine has
// 8 tasks of the largest chunk to take and steal.
func taskVertices(net verbs.Network, st *Store, goroutines int) int {
	const base = dmstore.DefaultBatchVertices
	rt := uint64(verbs.RoundTripBytes(net))
	if rt == 0 || st == nil || st.Out == nil || st.N() == 0 {
		return base
	}
	l := st.Out
	var lists uint64
	for _, b := range l.Batches {
		lists += b.EdgeBytes
	}
	per := uint64(l.Codec.Size) + lists/uint64(l.N)
	n := (rt/max(per, 1) + base - 1) / base * base
	var chunk uint64
	for k := range len(l.Config.Bounds) - 1 {
		chunk = max(chunk, uint64(l.Config.Bounds[k+1]-l.Config.Bounds[k]))
	}
	if chunk > 0 {
		n = min(n, chunk/uint64(8*max(1, goroutines))/base*base)
	}
	return int(min(max(n, base), 64<<10))
}

// sparseValRDMin is Config.SparseValRDMin's default on net: every segment
// for another chunk by value where a remote CAS waits for the MN's CPU
// (shm, tcp: kron:20 on cn:2,mn:2 over shm, five interleaved pairs, SSSP
// 1.52 → 1.37 s, BFS 0.294 → 0.227 s, WCC 0.635 → 0.545 s; docs/design.md),
// only hubs' segments of 32 edges and more where a NIC or the memory
// executes it.
func sparseValRDMin(net verbs.Network) uint32 {
	if verbs.AtomicsOnTargetCPU(net) {
		return 1
	}
	return 32
}
