package launch

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/dmstore"
	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/outfile"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/sizes"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/update"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/cxl"
	"github.com/dmg-hpc/dmg/verbs/fabric"
	"github.com/dmg-hpc/dmg/verbs/memfab"
	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultGraph is the built-in graph of `make demo` and of a run without
// --graph: a Graph500 Kronecker graph with 2^16 vertices and 2^20 edges.
const DefaultGraph = "kron:16"

// runFlags are the flags of a run.
type runFlags struct {
	algo        string
	graph       string
	out         string
	verify      bool
	source      string
	iterations  int
	damping     float64
	workers     int
	mnMem       string
	loadMem     string
	stageMem    string
	cnMem       string
	fabric      string
	cxlDir      string
	cxlDev      string
	timeout     time.Duration
	peerTimeout time.Duration
	seed        uint64
	undirected  bool
	weighted    bool
	alpha       float64
	nic         string
	noInPlace   bool
	compress    bool
	mergeGap    string
	entrySize   int
	noStage     bool
	poolFile    string
	name        string
	wait        time.Duration
	ckpt        job.Checkpointing
	fs          *pflag.FlagSet
	// engine holds the engine's knobs and ablation switches
	// (rank.AllAblations), bound to their flags with rank.Defaults' values.
	engine rank.Config
}

func (r *runFlags) register(fs *pflag.FlagSet) {
	d := rank.Defaults()
	r.fs = fs
	fs.StringVar(&r.algo, "algo", "", "algorithm: "+strings.Join(algo.Names(), ", "))
	fs.StringVar(&r.graph, "graph", DefaultGraph, "graph: a file (.properties of LDBC Graphalytics, SNAP .txt, .el, .wel, .mtx, binary; .gz read transparently) or a generator kron:SCALE[:EF], uniform:N:M")
	fs.StringVar(&r.out, "out", "", "write the vertex results to `FILE` in Graphalytics format (id value)")
	fs.BoolVar(&r.verify, "verify", false, "check the result on rank 0: with the serial verifier, or by a sample of the run read from DM where the whole graph is past --cn-mem; a mismatch fails the run")
	fs.StringVar(&r.source, "source", "", "BFS/SSSP/BC source vertex: its external `ID`, any 64-bit unsigned integer; BC takes several, comma-separated (default: the Graphalytics properties' BFS source, else the vertex with the most out-edges)")
	fs.IntVar(&r.iterations, "iterations", 0, "iterations of PageRank (default: the properties, else 20) and CDLP (the properties, else 10)")
	fs.Float64Var(&r.damping, "damping", 0, "PageRank damping factor (default: the properties, else 0.85)")
	fs.IntVar(&r.workers, "workers", 0, "worker goroutines per compute node (default: its machine's cores shared among the compute nodes on the machine: one kernel and its CPUs, whatever host names its containers or namespaces have)")
	fs.IntVar(&r.engine.Inflight, "inflight", d.Inflight, "goroutines per worker, each with its own endpoint, keeping several batches in flight (raise it on fabrics with µs latency)")
	fs.IntVar(&r.engine.Batch, "batch", d.Batch, "vertices per task claimed by a worker, whole loading batches of 1024 when more (default: the fabric's: 1024; over tcp enough to read about 1 MiB a task, 7 Ki vertices on kron:20, as a round trip there costs tens of µs of CPU)")
	fs.StringVar(&r.mnMem, "mn-mem", "", "pool size of each memory node, e.g. 8GiB (default: what the graph and mailboxes need plus 64 KiB)")
	fs.StringVar(&r.cnMem, "cn-mem", "1GiB", "a compute node's memory budget (`SIZE`) for the graph: its chunk's vertex state (28 B a vertex) must fit it; loading takes half (--load-mem) and the value pull's word per vertex of the graph is taken only while it fits the other half; the report gives the CNs' peak RSS beside it")
	fs.StringVar(&r.stageMem, "stage-mem", "", "the edges a staged read (of a generator or a text edge list, 2 or more CNs) holds on the memory nodes at once (`SIZE`; 6 B an edge with up to 2^27 vertices, else 8, 16 weighted; twice with in-rows or undirected): past it they meet their owners in rounds, at most 64, each generating or reading the CN's part of the input again in both sweeps of the windows (default: 30% of this host's memory; 0: no bound)")
	fs.StringVar(&r.loadMem, "load-mem", "", "a compute node's loading memory, part of --cn-mem (default: half of it): it keeps up to `SIZE` of a generated graph's, a text edge list's or Graphalytics graph's parsed edges (8 B per edge, 16 with weights) from its first pass for the later ones, which otherwise parse the input again, or in a staged read of a text edge list read them from the memory nodes, where the CN spills them (0 keeps nothing), and builds its share's rows (4 B per edge, 12 with weights) whole if they fit SIZE (at least 1MiB), else window by window, each window costing two more passes over the input")
	fs.BoolVar(&r.noStage, "no-stage", false, "every compute node parses the whole text edge list (or generates the whole graph), instead of each its byte range (its blocks) with the edges meeting their owners in staging memory on the memory nodes (with 2 or more compute nodes)")
	fs.StringVar(&r.fabric, "fabric", "", fabricUsage)
	fs.StringVar(&r.cxlDir, "cxl-dir", "", cxlDirUsage)
	fs.StringVar(&r.cxlDev, "cxl-dev", "", cxlDevUsage)
	fs.DurationVar(&r.timeout, "timeout", verbs.DefaultTimeout, "how long to wait for a fabric completion before failing")
	fs.DurationVar(&r.peerTimeout, "peer-timeout", 30*time.Second, "a peer whose heartbeat in DM has not moved for this long (frozen, not slow; before the fabric is open, a peer on this host stopped this long or one on another host unheard this long) ends the job, naming it; at least 2s, or 0 to turn the watch off")
	fs.Uint64Var(&r.seed, "seed", 1, "seed of the generators and synthetic weights")
	fs.BoolVar(&r.undirected, "undirected", false, "treat the input as undirected (store every edge both ways)")
	fs.BoolVar(&r.weighted, "weighted", false, "load edge weights (inputs without weights get deterministic synthetic weights in (0,1]); SSSP implies it")
	fs.Float64Var(&r.engine.DenseDivisor, "dense-threshold", d.DenseDivisor, "an iteration is dense when its active edges exceed |E|/`D`")
	fs.Float64Var(&r.engine.PullDivisor, "pull-threshold", d.PullDivisor, "a dense iteration gathers its local candidates at the destination (pull) when its active edges exceed |E|/`P`, else pushes them")
	fs.StringVar(&r.nic, "nic-profile", verbs.DefaultProfile.Name, "cost model that projects the counted operations to the hardware: a profile name (cx5-100g, an RDMA NIC; cxl-x16, a CXL pool) or lat=2us,iops=35M,qpiops=10M,bw=12.5GB/s")
	fs.StringVar(&r.engine.Mode, "mode", d.Mode, "engine: dmg (the design), naive (plain CSR on DM, per-vertex reads, remote atomics) or famgraph (whole index and attributes on every CN)")
	fs.BoolVar(&r.noInPlace, "no-inplace", false, "ablation: store every edge list out of place")
	fs.BoolVar(&r.compress, "compress", false, "pack the edge lists on DM: lists of up to 65,536 edges in about 2 bytes per edge instead of 4, decoded by the CNs (a pool holds more graph; compute is slower on this machine, docs/design.md)")
	for _, a := range rank.AllAblations() {
		fs.BoolVar(a.Field(&r.engine), a.Flag, false, a.Usage)
	}
	fs.Uint32Var(&r.engine.RefRDMin, "refrd-min", d.RefRDMin, "RefRD: segments of at least `T` edges for another CN are sent by reference")
	fs.Uint32Var(&r.engine.SparseValRDMin, "sparse-valrd-min", 0, "sparse iterations: segments of at least `T` edges for another CN are sent by value (ValRD pairs) instead of by remote CAS (default: 1 on shm and tcp, whose memory nodes' CPUs execute remote atomics; 32 on RDMA NICs and cxl)")
	fs.BoolVar(&r.engine.RemotePull, "remote-pull", false, "dense iterations with most edges active: every CN also pulls for the other CNs' vertices (Gemini's dense mode) instead of sending its segments for them by RefRD/ValRD")
	fs.Float64Var(&r.engine.ValuePullDivisor, "value-pull-threshold", d.ValuePullDivisor, "a dense iteration takes the value pull when its active edges exceed |E|/`V`")
	fs.StringVar(&r.mergeGap, "merge-gap", "auto", "reads at most `SIZE` apart are merged into one (auto: the fabric's break-even, 16KiB on shm, 64KiB on tcp, 2KiB on RDMA NICs)")
	fs.BoolVar(&r.engine.RefRDPuller, "refrd-puller", false, "RefRD: a goroutine per CN drains its mailbox while the push runs (pays when a CN has a core to spare)")
	fs.StringVar(&r.engine.ValRDApply, "valrd-apply", d.ValRDApply, "who applies ValRD pairs: cn (the owner CN), mn (the MN holding the mailbox) or auto (try both, keep the faster per pair)")
	fs.Uint64Var(&r.engine.HubDegree, "hub-degree", 0, "vertices with more out-edges are split into edge-range tasks of at most `D` edges (default: max(1024, chunk edges/(16·goroutines)))")
	fs.IntVar(&r.entrySize, "entry-size", 32, "index entry bytes: 16, 32 or 64")
	fs.StringVar(&r.poolFile, "pool-file", "", "work on the pool a `dmg serve` job serves (its pool file `PATH`): load stores the graph there under --name, run computes on the graph of that name without reading it; the job then holds compute nodes alone (--roles cn:C)")
	fs.StringVar(&r.name, "name", "", "with --pool-file: the graph's `NAME` in the pool")
	fs.DurationVar(&r.wait, "wait", 0, "with --pool-file: wait up to this long while a drop holds the graph (runs read a graph together; default: fail at once, naming the holder)")
	fs.BoolVar(&r.ckpt.Resume, "resume", false, "with --pool-file: continue the newest unfinished run of this graph, kernel and parameters from its last checkpoint, on any number of compute nodes (a killed run's is resumable once its hold expires, about 10s after its last heartbeat; the run waits that long)")
	fs.BoolVar(&r.ckpt.Off, "no-checkpoint", false, "with --pool-file: keep no checkpoint of the run in the pool (a run keeps one by default, to be resumed with --resume if it dies)")
	fs.IntVar(&r.ckpt.Every, "checkpoint-every", 0, "with --pool-file: keep a checkpoint every `N` iterations (default 0: whenever the run has moved 40 times a checkpoint's bytes, which keeps its cost near 2.5%)")
	fs.Float64Var(&r.alpha, "alpha", 0, "vertex weight α of stage-1 partitioning, α·|V_i|+|E_i| (default 8·(CNs−1))")
}

func runCmd(opts *Options, run func(body) int) *cobra.Command {
	rf := &runFlags{}
	c := &cobra.Command{
		Use:   "run",
		Short: "run an algorithm (" + strings.Join(algo.Names(), ", ") + ") on a graph stored on the memory nodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rf.setRoles(opts); err != nil {
				return err
			}
			return codeErr(run(func(j *Job) error { return runJobBody(j, rf) }))
		},
	}
	rf.register(c.Flags())
	return c
}

func (r *runFlags) jobConfig(j *Job) (job.Config, error) {
	workers := r.workers
	if workers == 0 {
		// A CN's share of its machine's cores: compute nodes that share
		// a machine (one host, containers or namespaces on one node, or
		// --local) would otherwise each start as many workers as it has
		// cores.
		workers = max(1, runtime.NumCPU()/j.HostCNs())
	}
	if err := r.check(); err != nil {
		return job.Config{}, err
	}
	// Each worker goroutine holds an endpoint and its buffers, on every
	// compute node of this host.
	senders := sizes.Product(uint64(workers), uint64(r.engine.Inflight), uint64(j.HostCNs()))
	if err := sizes.This().Check(fmt.Sprintf("--workers %d × --inflight %d on %d compute node(s) of this host (%d goroutines with an endpoint each)", workers, r.engine.Inflight, j.HostCNs(), senders), senders, sizes.BytesPerSender); err != nil {
		return job.Config{}, BadInput(err)
	}
	sources, err := r.sourceIDs()
	if err != nil {
		return job.Config{}, err
	}
	cfg := job.Config{
		Algo: r.algo, Graph: r.graph, KeepGraph: r.verify,
		Csr:        csr.Options{Seed: r.seed, Undirected: r.undirected, Weighted: r.weighted},
		Sources:    sources,
		Iterations: r.iterations, Damping: r.damping, Alpha: r.alpha,
		Engine: r.engine,
		Layout: dmstore.LayoutConfig{EntrySize: r.entrySize, NoInPlace: r.noInPlace},
	}
	cfg.Engine.Workers, cfg.Engine.Sync, cfg.Engine.Logf = workers, j.Sync, j.Logf
	cfg.Packed = r.compress
	if r.engine.Mode != rank.ModeDMG && r.noInPlace {
		return cfg, BadInputf("launch: --no-inplace applies to --mode dmg only")
	}
	if r.entrySize != 16 && r.entrySize != 32 && r.entrySize != 64 {
		return cfg, BadInputf("launch: --entry-size %d; expected 16, 32 or 64", r.entrySize)
	}
	cfg.LoadProgress, cfg.ReadProgress = loadProgress(j), readProgress(j, r.graph)
	if !j.Opts.Local && r.peerTimeout > 0 { // in one process a peer cannot freeze alone
		cfg.PeerTimeout, cfg.Stalled, cfg.RankName = r.peerTimeout, j.stalled, j.rankName
		j.watch = j.watchStopped(r.peerTimeout)
		j.watchPeers(r.peerTimeout)
	}
	cfg.Phase = func(name string) {
		j.watch.setPhase(name)
		j.Logf("%s", name)
		if j.World.Rank() == 0 || j.cluster == nil { // every launched rank may be the one to report
			j.intr.setPhase(name)
		}
	}
	if r.algo == "" {
		return cfg, BadInputf("launch: --algo is required; one of %s", strings.Join(algo.Names(), ", "))
	}
	if r.mnMem != "" {
		b, err := sizeFlag("mn-mem", r.mnMem, "8GiB", verbs.MaxOffset+1)
		if err == nil && b == 0 {
			err = BadInputf("launch: --mn-mem %s; expected a size above 0 (leave it out for what the graph needs)", r.mnMem)
		}
		if err != nil {
			return cfg, err
		}
		cfg.MNMem = b
	}
	b, err := r.budgets(j, &cfg)
	if err != nil {
		return cfg, err
	}
	cfg.Csr.KeepBytes = int64(b)
	cfg.Csr.HostReaders = j.HostCNs()
	cfg.NoStage = r.noStage
	cfg.RowBytes = max(int64(b), job.MinRowBytes)
	cfg.WindowBytes = job.WindowBytes
	if !j.Opts.Local {
		cfg.ComputeGCPercent = computeGCPercent
	}
	if cfg.StageBytes, err = r.stageBytes(); err != nil {
		return cfg, err
	}
	if b == 0 {
		cfg.Csr.KeepBytes = -1 // keep nothing
	}
	if r.mergeGap != "auto" {
		b, err := sizeFlag("merge-gap", r.mergeGap, "32KiB or auto", 1<<30)
		if err != nil {
			return cfg, err
		}
		cfg.Engine.MergeGap = max(1, int(b))
	}
	prof, err := verbs.ParseProfile(r.nic)
	if err != nil {
		return cfg, BadInput(err)
	}
	cfg.Engine.Profile = prof
	cfg.PreCheck = func() error { // before the graph is read
		if r.out != "" {
			if err := checkWritable("--out", r.out); err != nil {
				return err
			}
		}
		if js := j.Opts.JSON; js != "" {
			return checkWritable("--json", js)
		}
		return nil
	}
	if r.cxlDev != "" {
		// The devices are the MNs' only memory: a staging network
		// would map the same bytes as the store's.
		cfg.NoStage = true
	}
	cfg.Open = func(c verbs.Config) (verbs.Network, error) {
		c.Timeout, c.Provider = r.timeout, r.fabric
		if !j.Opts.Local {
			c.Stuck = j.stalled
		}
		if err := poolPlace(&c, r.cxlDir, r.cxlDev); err != nil {
			return nil, err
		}
		// Every rank is here: agree on whether each host holds its
		// memory nodes' pools before any is allocated.
		if err := j.checkPools(c); err != nil {
			return nil, err
		}
		return j.openNetwork(c)
	}
	return cfg, nil
}

// poolRef is the served pool's graph a run worked on: its name, and
// whether the attach cut a view of it for the job's compute nodes.
type poolRef struct {
	Name  string `json:"name"`
	Recut bool   `json:"recut"`
	// ResumedAt is the iteration a resumed run began with (0: from the
	// start); Checkpoints counts the checkpoints it kept, which took
	// CheckpointS seconds of its compute.
	ResumedAt   int     `json:"resumed_at"`
	Checkpoints int     `json:"checkpoints"`
	CheckpointS float64 `json:"checkpoint_s"`
}

// setRoles says which roles the job holds: compute nodes alone when it
// attaches to a served pool, which it does under a launcher only.
func (r *runFlags) setRoles(opts *Options) error {
	opts.need = spmd.Both
	opts.stdoutData = r.out == outfile.Stdout
	prof := ""
	if opts.CPUProfile != "" {
		prof = opts.CPUProfile + ".rank0.pprof"
	}
	if err := outfile.Distinct([2]string{"--out", r.out}, [2]string{"--json", opts.JSON}, [2]string{"--cpuprofile", prof}); err != nil {
		return BadInput(err)
	}
	if r.poolFile == "" {
		return nil
	}
	if opts.Local {
		return BadInputf("launch: --pool-file attaches to a served pool over libfabric, under mpirun or srun (mpirun -np 1 for one compute node), not --local")
	}
	opts.need = spmd.CNOnly
	return nil
}

// sourceIDs are --source's vertex ids, comma-separated (none when not
// given).
func (r *runFlags) sourceIDs() ([]uint64, error) {
	if !r.fs.Changed("source") {
		return nil, nil
	}
	var ids []uint64
	for _, f := range strings.Split(r.source, ",") {
		id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil && f == r.source {
			return nil, BadInputf("launch: --source %q is not a vertex id; expected an integer from 0 to %d (several, comma-separated, for bc)", r.source, uint64(math.MaxUint64))
		}
		if err != nil {
			return nil, BadInputf("launch: --source %q: %q is not a vertex id; expected integers from 0 to %d, comma-separated", r.source, f, uint64(math.MaxUint64))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// keptEntries says, for the memory line, what the CNs keep of the index
// beside their cache (the entry cache, within --cn-mem): its bytes, and
// how many vertices' entries when not all.
func keptEntries(kept, vertices, bytes uint64) string {
	switch {
	case kept == 0 || bytes == 0:
		return ""
	case kept >= vertices:
		return fmt.Sprintf(", and %s of index entries", hb(bytes))
	}
	return fmt.Sprintf(", and %s of index entries (%s of %s vertices')", hb(bytes), humanize.Comma(int64(kept)), humanize.Comma(int64(vertices)))
}

// minCNMem is the least --cn-mem: a process with a few windows' rows.
const minCNMem = 4 << 20

// budgets reads --cn-mem into cfg (its value pull's part too) and
// returns the loading memory: --load-mem, at most the budget it is part
// of, or half of the budget. A budget set above what the CNs on this
// host can have together is refused.
func (r *runFlags) budgets(j *Job, cfg *job.Config) (uint64, error) {
	cn, err := sizeFlag("cn-mem", r.cnMem, "1GiB", 1<<62)
	if err != nil {
		return 0, err
	}
	if cn < minCNMem {
		return 0, BadInputf("launch: --cn-mem %s; expected at least %s", r.cnMem, hb(minCNMem))
	}
	if r.fs.Changed("cn-mem") { // (on every rank: the hosts agree)
		err := sizes.This().Check(fmt.Sprintf("--cn-mem %s for each of the %d CN(s) on this host", r.cnMem, j.HostCNs()), uint64(j.HostCNs()), cn)
		if err != nil {
			err = BadInput(err)
		}
		if err := j.Agree(err); err != nil {
			return 0, err
		}
	}
	cfg.CNMem, cfg.Engine.ValuePullMax, cfg.Engine.CNMem = cn, cn/2, cn
	if r.loadMem == "" {
		return cn / 2, nil
	}
	load, err := sizeFlag("load-mem", r.loadMem, "1GiB or 0", 1<<62)
	if err == nil && load > cn {
		err = BadInputf("launch: --load-mem %s is more than --cn-mem %s; expected at most the budget it is part of", r.loadMem, r.cnMem)
	}
	return load, err
}

// stageBytes is --stage-mem's bound on the edges staged at once.
func (r *runFlags) stageBytes() (int64, error) {
	if r.stageMem == "" {
		return int64(sizes.This().Memory / 10 * 3), nil
	}
	b, err := sizeFlag("stage-mem", r.stageMem, "4GiB or 0", 1<<62)
	return int64(b), err
}

// check checks every numeric flag on its own, so the message names the one
// that is wrong: NaN and ±Inf are refused wherever a float is taken.
func (r *runFlags) check() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	set := r.fs.Changed
	for _, c := range []struct {
		bad  bool
		flag string
		val  any
		want string
	}{
		{r.engine.Batch < 1 && set("batch"), "--batch", r.engine.Batch, "at least 1 vertex per task"},
		{r.workers < 0, "--workers", r.workers, "0 (the host's cores) or more"},
		{r.engine.Inflight < 1, "--inflight", r.engine.Inflight, "at least 1"},
		{r.timeout <= 0, "--timeout", r.timeout, "a positive duration such as 10s"},
		{r.peerTimeout < 0 || r.peerTimeout > 0 && r.peerTimeout < minPeerTimeout, "--peer-timeout", r.peerTimeout, "0 (no watch) or at least " + minPeerTimeout.String() + " (peers beat every 500 ms)"},
		{set("iterations") && r.iterations < 1, "--iterations", r.iterations, "at least 1 (leave it out for the properties' count, else 20 for PageRank, 10 for CDLP)"},
		{!finite(r.damping) || set("damping") && (r.damping < 0 || r.damping > 1), "--damping", r.damping, "a number from 0 to 1"},
		{!finite(r.alpha) || r.alpha < 0 || r.alpha > maxAlpha, "--alpha", r.alpha, "a number from 0 to 1e9 (0: 8·(CNs−1))"},
		{!finite(r.engine.DenseDivisor) || r.engine.DenseDivisor <= 0, "--dense-threshold", r.engine.DenseDivisor, "a finite number > 0"},
		{!finite(r.engine.PullDivisor) || r.engine.PullDivisor <= 0, "--pull-threshold", r.engine.PullDivisor, "a finite number > 0"},
		{!finite(r.engine.ValuePullDivisor) || r.engine.ValuePullDivisor <= 0, "--value-pull-threshold", r.engine.ValuePullDivisor, "a finite number > 0"},
		{set("wait") && r.poolFile == "", "--wait", r.wait, "--pool-file too (--wait is how long to wait while a drop holds a served graph)"},
		{r.ckpt.Every < 0, "--checkpoint-every", r.ckpt.Every, "0 (chosen by the traffic) or more iterations"},
		{set("checkpoint-every") && r.ckpt.Off, "--checkpoint-every", r.ckpt.Every, "no --no-checkpoint beside it"},
	} {
		if c.bad {
			return BadInputf("launch: %s %v; expected %s", c.flag, c.val, c.want)
		}
	}
	for _, f := range []string{"resume", "no-checkpoint", "checkpoint-every"} {
		if set(f) && r.poolFile == "" {
			return BadInputf("launch: --%s needs --pool-file and --name: a run keeps its checkpoints in a served pool, beside its graph", f)
		}
	}
	if a, err := algo.Lookup(r.algo); err == nil && set("source") && !a.Source {
		return BadInputf("launch: --source %s; %s has no source vertex (bfs, sssp and bc have one)", r.source, a.Name)
	}
	return checkCxlDir(r.cxlDir)
}

// checkPools refuses pools that a host cannot hold: every rank learns
// every memory node's pool size and checks the memory nodes of its own
// host (so rank 0 finds it, and prints it, on one host). A cxl pool in
// another directory than /dev/shm, or on a device, is checked for space
// by the cxl backend instead. It is collective.
func (j *Job) checkPools(c verbs.Config) error {
	sizesOf := make([]float64, len(j.ranks))
	inMemory := len(c.PoolDevices) == 0 && (c.Provider != cxlProvider || c.PoolDir == "" || c.PoolDir == verbs.ShmDir)
	if j.Role == spmd.MN && inMemory {
		sizesOf[j.Rank()] = float64(c.PoolBytes)
	}
	if err := j.Sync(nil, sizesOf); err != nil {
		return err
	}
	me := j.ranks[j.Rank()].Host
	var need uint64
	n := 0
	for r, b := range sizesOf {
		if b > 0 && j.ranks[r].Host == me {
			need, n = sizes.Product(1, need+uint64(b)), n+1
		}
	}
	var err error
	if n > 0 {
		if err = sizes.This().CheckTotal(fmt.Sprintf("the pools of the %d memory node(s) on this host (--mn-mem, or what the graph needs)", n), need); err != nil {
			err = BadInput(err)
		}
	}
	return j.Agree(err)
}

// checkCxlDir refuses a --cxl-dir that is not an existing directory.
func checkCxlDir(dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return BadInputf("launch: --cxl-dir %s is not an existing directory; expected the directory where each memory node creates its cxl pool file (default %s)", dir, verbs.ShmDir)
	}
	return nil
}

// minPeerTimeout is the shortest --peer-timeout: four of the heartbeats'
// 500 ms periods and two of the stopped-rank watch's 1 s samples. A
// shorter one takes a peer that is merely scheduled out, or a beat not
// yet written, for a stall (--peer-timeout 1ns ended healthy jobs).
const minPeerTimeout = 2 * time.Second

// maxAlpha bounds --alpha: a vertex weighs at most a billion edges, so
// that α·|V| + |E| (|V| < 2^32) stays finite and exact enough to cut by.
const maxAlpha = 1e9

// The flags that choose the data path, shared by run, load and bench verbs.
const (
	fabricUsage = "data path: a libfabric provider (shm, tcp, verbs, efa, cxi, ...) or cxl, memory every rank maps (a CXL pool, or a shared-memory file on one host) (default: shm on one host, else tcp)"
	cxlDirUsage = "cxl: the `DIR` where each MN creates its pool as a file (default /dev/shm)"
	cxlDevUsage = "cxl: the devices or existing files to map as pools, one per MN, comma-separated (`/dev/dax0.0,...`)"
)

// poolPlace sets where the cxl backend's pools live.
func poolPlace(c *verbs.Config, dir, devs string) error {
	if (dir != "" || devs != "") && c.Provider != cxlProvider {
		return BadInputf("launch: --cxl-dir and --cxl-dev need --fabric cxl")
	}
	if dir != "" && devs != "" {
		return BadInputf("launch: --cxl-dir and --cxl-dev exclude each other: files in a directory, or devices")
	}
	if err := checkCxlDir(dir); err != nil {
		return err
	}
	c.PoolDir = dir
	if devs != "" {
		c.PoolDevices = strings.Split(devs, ",")
	}
	return nil
}

const cxlProvider = "cxl"

// openNetwork opens the job's data path: the cxl backend with --fabric
// cxl (its files or devices, with --local too), the in-process fabric
// with --local, libfabric otherwise. It is collective.
func (j *Job) openNetwork(c verbs.Config) (verbs.Network, error) {
	switch {
	case c.Provider == cxlProvider:
		return cxl.Open(j.World, c)
	case j.Opts.Local && c.Provider != "":
		return nil, BadInputf("launch: --fabric %s with --local: an in-process job moves its data in memory (--fabric cxl maps pool files); leave --fabric out, or launch with mpirun or srun", c.Provider)
	case j.Opts.Local:
		return memfab.Open(j.cluster, j.World, c)
	}
	return fabric.Open(j.World, c)
}

// checkWritable fails unless the output flag's path could be written
// (outfile.Check): a bad output is bad input, found before the work.
func checkWritable(flag, path string) error {
	if err := outfile.Check(path); err != nil {
		return BadInput(errors.WithMessage(err, "launch: "+flag))
	}
	return nil
}

// computeGCPercent is a CN process's garbage collector percent while it
// computes (job.Config.ComputeGCPercent): at kron:26 the heap's garbage
// took a CN 150 MB past its vertex state with the default 100.
const computeGCPercent = 20

func runJobBody(j *Job, rf *runFlags) error {
	cfg, err := rf.jobConfig(j)
	if err != nil {
		return err
	}
	a, err := rf.jobPool(j, &cfg)
	if err != nil {
		return err
	}
	out, err := job.Execute(j.World, cfg)
	// Whether the job succeeded or not (agreed: every rank is here), its
	// endpoints leave the pool's MNs in order.
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var rep *runReport
	var verr error
	if j.IsRoot() { // the report, the output and the verifier are rank 0's
		rep = newRunReport(j, out)
		rep.Parameters.Seed = rf.seed
		// Read from the words in place: an Output would cost rank 0 a
		// table of external ids and a decoded copy (a GiB at kron:26).
		if s, err := out.Algorithm.SummarizeResult(out.Graph, out.Result.Values); err == nil {
			rep.Summary = s
		}
		j.intr.writing(rf.out, j.Opts.JSON)
		if rf.out != "" {
			verr = writeValues(rf.out, out)
		}
		if verr == nil && rf.verify {
			rep.VerifiedBySample, verr = verifyOutcome(out)
			rep.Verified = verr == nil
		}
	}
	if err := j.Agree(verr); err != nil {
		return err
	}
	if !j.IsRoot() {
		return nil
	}
	rep.print(j)
	err = writeJSON(j, rep)
	j.intr.done()
	return err
}

func writeValues(path string, out *job.Outcome) error {
	return errors.Wrapf(out.Algorithm.WriteResult(path, out.Graph, out.Result.Values), "launch: writing --out %s", path)
}

// verifyOutcome checks the result with the serial verifier, or by a
// sample of the run (job.Outcome.Sample), whose check it describes.
func verifyOutcome(out *job.Outcome) (string, error) {
	if out.Sample != nil {
		what, err := out.Algorithm.Sampled(out.Params, out.Sample)
		return what, errors.Wrap(err, "launch: --verify (by a sample: the whole graph is past --cn-mem) failed")
	}
	return "", errors.Wrap(out.Algorithm.VerifyResult(out.Graph, out.Params, out.Result.Values), "launch: --verify failed")
}

// runReport is the report of a run, human and --json.
type runReport struct {
	Version string `json:"version"`
	// LoadWindows is how many windows CN 0 built its share in (--load-mem;
	// 1: whole).
	LoadWindows int `json:"load_windows"`
	// LoadStagedBytes is the most staging memory in DM at once through
	// which the CNs, each parsing its byte range of a text edge list or
	// generating its blocks, sent the edges to their owners (0: every CN
	// read the whole input), in LoadStagedRounds rounds (--stage-mem).
	LoadStagedBytes  uint64 `json:"load_staged_bytes"`
	LoadStagedRounds int    `json:"load_staged_rounds,omitempty"`
	Command          string `json:"command"`
	Algo             string `json:"algo"`
	Graph            struct {
		Name     string `json:"name"`
		Vertices uint64 `json:"vertices"`
		Edges    uint64 `json:"edges"`
	} `json:"graph"`
	Roles struct {
		CN int `json:"cn"`
		MN int `json:"mn"`
	} `json:"roles"`
	Mode       string     `json:"mode"`
	Ablations  []string   `json:"ablations"`
	Parameters parameters `json:"parameters"`
	Fabric     string     `json:"fabric"`
	Workers    int        `json:"workers"`
	Times      struct {
		Load      float64 `json:"load_s"`
		Partition float64 `json:"partition_s"`
		Compute   float64 `json:"compute_s"`
		// Setup is the part of Compute before the first iteration.
		Setup float64 `json:"setup_s"`
		Total float64 `json:"total_s"`
	} `json:"times"`
	// Pool is the served pool's graph the job ran on (--pool-file);
	// Times.Load is then the attach.
	Pool    *poolRef `json:"pool,omitempty"`
	Balance struct {
		Imbalance float64 `json:"imbalance"`
		TailRatio float64 `json:"tail_ratio"`
		Steals    uint64  `json:"steals"`
		HubDegree uint64  `json:"hub_degree"`
		// TaskVertices is the vertices a task holds (--batch, or the
		// fabric's).
		TaskVertices int `json:"task_vertices"`
	} `json:"balance"`
	Iterations      []rank.IterStats `json:"iterations"`
	Verbs           verbsReport      `json:"verbs"`
	EdgesPerSecond  float64          `json:"edges_per_s"`
	RemoteOpsPerE   float64          `json:"remote_ops_per_edge"`
	CNCacheBytesMax uint64           `json:"cn_cache_bytes_max"`
	// KeptEntries is the vertices whose index entries their CN keeps
	// once read (the entry cache; all of them unless --cn-mem is short),
	// KeptBytesMax the largest CN's room for them, beside its cache.
	KeptEntries     uint64       `json:"cn_kept_entries"`
	KeptBytesMax    uint64       `json:"cn_kept_entry_bytes_max"`
	MNPoolBytes     []uint64     `json:"mn_pool_bytes"`
	MNUsedBytes     []uint64     `json:"mn_used_bytes"`
	ModeledFabricS  float64      `json:"modeled_fabric_s"`
	AtomicsPerEdge  float64      `json:"remote_atomics_per_edge"`
	CPUNanosPerEdge float64      `json:"cn_cpu_ns_per_edge"`
	CNCPUSeconds    float64      `json:"cn_cpu_s"`
	MNCPUSeconds    float64      `json:"mn_cpu_s"`
	MNNice          int          `json:"mn_nice"` // --mn-nice (0 under --local: one process)
	ReverseBytes    []uint64     `json:"reverse_adjacency_bytes"`
	Symmetric       bool         `json:"symmetric"`
	Updates         update.Stats `json:"updates"`
	ValRDApply      string       `json:"valrd_apply"`
	InPlaceShare    float64      `json:"in_place_share"`
	// The graph on DM, both layouts: index entries and out-of-place
	// lists; Packed: lists packed (--compress; else records of a 4-byte
	// id and the weight); DMWeights: the weights' code on DM (float32,
	// uint16 or uint8: the narrowest that holds every weight exactly).
	DMIndexBytes uint64 `json:"dm_index_bytes"`
	DMListBytes  uint64 `json:"dm_list_bytes"`
	Packed       bool   `json:"packed"`
	DMWeights    string `json:"dm_weights,omitempty"`
	DMRecord     int    `json:"dm_record_bytes"`
	NICProfile   string `json:"nic_profile"`
	Verified     bool   `json:"verified"`
	// VerifiedBySample says what a sampled check checked, where the whole
	// graph was past --cn-mem (empty: the serial verifier, whole).
	VerifiedBySample string       `json:"verified_by_sample,omitempty"`
	Summary          algo.Summary `json:"summary"`

	// The largest peak resident set of a CN and of an MN process, from
	// start to the end of compute, rank 0's after it gathers the values
	// (getrusage); MN absent on a served
	// pool. Under --local every rank is one process: its peak is
	// ProcessPeakRSSBytes instead.
	CNPeakRSSBytes      uint64 `json:"cn_peak_rss_bytes,omitempty"`
	MNPeakRSSBytes      uint64 `json:"mn_peak_rss_bytes,omitempty"`
	ProcessPeakRSSBytes uint64 `json:"process_peak_rss_bytes,omitempty"`
	// CNMemBytes is each CN's budget (--cn-mem).
	CNMemBytes uint64 `json:"cn_mem_bytes"`
}

type verbsReport struct {
	Reads        uint64 `json:"reads"`
	Writes       uint64 `json:"writes"`
	Atomics      uint64 `json:"atomics"`
	BytesRead    uint64 `json:"bytes_read"`
	BytesWritten uint64 `json:"bytes_written"`
	Doorbells    uint64 `json:"doorbells"`
	RoundTrips   uint64 `json:"round_trips"`
}

// parameters are the algorithm's parameters in effect.
type parameters struct {
	Source     *uint64  `json:"source,omitempty"`  // external id
	Sources    []uint64 `json:"sources,omitempty"` // every source's, when there are several
	SourceFrom string   `json:"source_from,omitempty"`
	Iterations int      `json:"iterations,omitempty"`
	Damping    float64  `json:"damping,omitempty"`
	Seed       uint64   `json:"seed"` // of the generators and synthetic weights
}

// String is the parameters for humans.
func (p parameters) String() string {
	var b []string
	switch {
	case len(p.Sources) > 1:
		b = append(b, fmt.Sprintf("%d sources from %d (%s)", len(p.Sources), *p.Source, p.SourceFrom))
	case p.Source != nil:
		b = append(b, fmt.Sprintf("source %d (%s)", *p.Source, p.SourceFrom))
	}
	if p.Iterations > 0 {
		b = append(b, fmt.Sprintf("%d iterations, damping %g", p.Iterations, p.Damping))
	}
	return strings.Join(append(b, fmt.Sprintf("seed %d", p.Seed)), ", ")
}

func newRunReport(j *Job, out *job.Outcome) *runReport {
	r := &runReport{Version: version(), Command: j.Opts.command, Algo: out.Algorithm.Name, Mode: out.Mode, Ablations: out.Ablations, Fabric: out.Provider}
	if out.Algorithm.Source {
		id := out.SourceID
		r.Parameters.Source, r.Parameters.Sources, r.Parameters.SourceFrom = &id, out.SourceIDs, out.SourceFrom
	}
	r.Parameters.Iterations, r.Parameters.Damping = out.Params.Iterations, out.Params.Damping
	r.CPUNanosPerEdge, r.CNCPUSeconds, r.MNCPUSeconds = out.Result.CPUNanosPerEdge, out.Result.CNCPUSeconds, out.Result.MNCPUSeconds
	r.ReverseBytes, r.Symmetric = out.InBytes, out.Symmetric
	r.Graph.Vertices, r.Graph.Edges = out.Vertices, out.Edges
	if out.Meta != nil { // the CNs read the graph, the MNs only learn its shape
		r.Graph.Name = out.Meta.Name
	}
	r.Roles.CN, r.Roles.MN = j.Roles.CN, len(out.MNPool)
	r.Workers = out.Workers
	r.Times.Load, r.Times.Partition, r.Times.Compute = out.LoadS, out.PartS, out.ComputeS
	if out.Result != nil {
		r.Times.Setup = out.Result.SetupSeconds
	}
	if out.Pooled != "" {
		r.Pool = &poolRef{Name: out.Pooled, Recut: out.Recut, ResumedAt: out.Result.StartedAt,
			Checkpoints: out.Result.Checkpoints, CheckpointS: out.Result.CheckpointSeconds}
	}
	r.Times.Total = time.Since(j.Start).Seconds()
	if out.Load != nil {
		r.LoadWindows = out.Load.Windows
	}
	r.LoadStagedBytes, r.LoadStagedRounds = out.StagedBytes, out.StagedRounds
	r.Balance.Imbalance = out.Imbalance
	r.Balance.TailRatio, r.Balance.Steals, r.Balance.HubDegree = out.Result.TailRatio, out.Result.Steals, out.Result.HubDegree
	r.Balance.TaskVertices = out.Result.TaskVertices
	r.Iterations = out.Result.Iterations
	c := out.Result.Verbs
	r.Verbs = verbsReport{c.Reads, c.Writes, c.Atomics(), c.BytesRead, c.BytesWritten, c.Doorbells, c.RoundTrips}
	var edges uint64
	for _, it := range r.Iterations {
		edges += it.ActiveEdges
	}
	if out.ComputeS > 0 {
		r.EdgesPerSecond = float64(edges) / out.ComputeS
	}
	if edges > 0 {
		r.RemoteOpsPerE = float64(c.Ops()) / float64(edges)
		r.AtomicsPerEdge = float64(c.Atomics()) / float64(edges)
	}
	r.Updates, r.ValRDApply, r.InPlaceShare = out.Result.Updates, out.Result.ValRDApply, out.InPlaceShare
	r.DMIndexBytes, r.DMListBytes, r.Packed, r.DMWeights = out.IndexBytes, out.ListBytes, out.Packed, out.Weights
	r.DMRecord = out.RecordBytes
	r.CNCacheBytesMax, r.KeptEntries, r.KeptBytesMax = out.Result.MaxCacheBytes, out.Result.KeptEntries, out.Result.MaxKeptBytes
	r.CNPeakRSSBytes, r.MNPeakRSSBytes = out.Result.PeakRSSCN, out.Result.PeakRSSMN
	r.CNMemBytes = out.CNMem
	if j.Opts.Local {
		r.ProcessPeakRSSBytes = max(r.CNPeakRSSBytes, r.MNPeakRSSBytes)
		r.CNPeakRSSBytes, r.MNPeakRSSBytes = 0, 0
	}
	r.MNPoolBytes, r.MNUsedBytes = out.MNPool, out.MNUsed
	r.ModeledFabricS, r.NICProfile = out.Result.ModeledSeconds, out.NICProfile
	if !j.Opts.Local {
		r.MNNice = j.Opts.MNNice
	}
	return r
}

// sizeFlag parses the value v of the size flag --name (8GiB, 32KiB, 0),
// which may be at most limit; the error shows an example of a good one.
func sizeFlag(name, v, example string, limit uint64) (uint64, error) {
	b, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, BadInputf("launch: --%s %q is not a size like %s", name, v, example)
	}
	if b > limit {
		return 0, BadInputf("launch: --%s %s is above %s; expected at most that", name, v, humanize.IBytes(limit))
	}
	return b, nil
}

func hb(n uint64) string { return humanize.IBytes(n) }
func hn(n uint64) string { return strings.TrimSpace(humanize.SIWithDigits(float64(n), 1, "")) }

func (r *runReport) print(j *Job) {
	w := j.Out
	mode := r.Mode
	if len(r.Ablations) > 0 {
		mode += " " + strings.Join(r.Ablations, " ")
	}
	fmt.Fprintf(w, "DMG %s on %s: %s vertices, %s edges; cn:%d,mn:%d over %s; mode %s\n",
		r.Algo, r.Graph.Name, humanize.Comma(int64(r.Graph.Vertices)), humanize.Comma(int64(r.Graph.Edges)), r.Roles.CN, r.Roles.MN, r.Fabric, mode)
	fmt.Fprintf(w, "parameters: %s; dmg %s: %s\n", r.Parameters, r.Version, r.Command)
	win := ""
	if r.LoadWindows > 1 {
		win = fmt.Sprintf(", CN 0 in %d windows", r.LoadWindows)
	}
	if r.LoadStagedBytes > 0 {
		win += ", staged through " + humanize.IBytes(r.LoadStagedBytes) + " of DM"
		if r.LoadStagedRounds > 1 {
			win += fmt.Sprintf(" in %d rounds", r.LoadStagedRounds)
		}
	}
	if r.Pool != nil {
		how := "in the pool"
		if r.Pool.Recut {
			how = fmt.Sprintf("in the pool, cut anew for cn:%d", r.Roles.CN)
		}
		fmt.Fprintf(w, "attach %.3fs (graph %q %s)  compute %.3fs (%s edges/s)  total %.3fs\n",
			r.Times.Load, r.Pool.Name, how, r.Times.Compute, hn(uint64(r.EdgesPerSecond)), r.Times.Total)
		if p := r.Pool; p.ResumedAt > 0 || p.Checkpoints > 0 {
			resumed := ""
			if p.ResumedAt > 0 {
				resumed = fmt.Sprintf("resumed at iteration %d; ", p.ResumedAt)
			}
			fmt.Fprintf(w, "%s%d checkpoints kept in %.3fs (%.1f%% of compute)\n",
				resumed, p.Checkpoints, p.CheckpointS, 100*p.CheckpointS/max(r.Times.Compute, 1e-9))
		}
	} else {
		fmt.Fprintf(w, "load %.3fs (%s edges/s%s)  partition %.4fs (imbalance %.3f)  compute %.3fs (%s edges/s)  total %.3fs\n",
			r.Times.Load, hn(uint64(float64(r.Graph.Edges)/max(r.Times.Load, 1e-9))), win, r.Times.Partition, r.Balance.Imbalance,
			r.Times.Compute, hn(uint64(r.EdgesPerSecond)), r.Times.Total)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "iter\tmode\tupdate\tactive V\tactive E\treads\twrites\tatomics\tbytes\tseconds\tmodelled\ttail\t")
	for i, it := range r.Iterations {
		mode := "sparse"
		if it.Dense {
			mode = "dense"
		}
		v := it.Verbs
		if r.Pool != nil {
			i += r.Pool.ResumedAt
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%.6f\t%.2f\t\n", i, mode, it.Update, hn(it.ActiveVertices), hn(it.ActiveEdges),
			hn(v.Reads), hn(v.Writes), hn(v.Atomics()), hb(v.Bytes()), it.Seconds, it.ModeledSeconds, it.TailRatio)
	}
	tw.Flush()
	v := r.Verbs
	fmt.Fprintf(w, "verbs: %s reads, %s writes, %s atomics, %s read, %s written, %s doorbells, %s round trips; %.3f remote ops per edge\n",
		hn(v.Reads), hn(v.Writes), hn(v.Atomics), hb(v.BytesRead), hb(v.BytesWritten), hn(v.Doorbells), hn(v.RoundTrips), r.RemoteOpsPerE)
	pools := make([]string, len(r.MNPoolBytes))
	for i, p := range r.MNPoolBytes {
		pools[i] = fmt.Sprintf("%s/%s", hb(r.MNUsedBytes[i]), hb(p))
	}
	u := r.Updates
	pulled := ""
	if u.RefPulled > 0 {
		pulled = fmt.Sprintf(" (%s applied by the puller during the push)", hn(u.RefPulled))
	}
	fmt.Fprintf(w, "updates: %s candidates: %s local, %s ValRD pairs (%s pre-combined), %s RefRD edges in %s segments%s, %s direct; %s in %s mailbox writes, %s spilled; %.4f remote atomics per edge; ValRD applied by %s\n",
		hn(u.Candidates), hn(u.Local), hn(u.ValRD), hn(u.Combined), hn(u.RefRD), hn(u.RefItems), pulled, hn(u.Direct), hb(u.RDBytes), hn(u.Flushes), hn(u.Spills), r.AtomicsPerEdge, r.ValRDApply)
	fmt.Fprintf(w, "workload: stage-1 imbalance %.3f (max/mean α|V|+|E| of the chunks), stage-2 tail ratio %.2f (max/median worker busy time), %s steals, tasks of %d vertices, hub threshold %d edges\n",
		r.Balance.Imbalance, r.Balance.TailRatio, hn(r.Balance.Steals), r.Balance.TaskVertices, r.Balance.HubDegree)
	fmt.Fprintf(w, "modelled fabric time on %s: %.4fs; CPU during compute: CNs %.2fs (%.1f ns per edge), MNs %.2fs\n", r.NICProfile, r.ModeledFabricS, r.CNCPUSeconds, r.CPUNanosPerEdge, r.MNCPUSeconds)
	rss := ""
	budget := ""
	if r.CNMemBytes > 0 {
		budget = fmt.Sprintf(" (budget %s, --cn-mem)", hb(r.CNMemBytes))
	}
	switch {
	case r.CNPeakRSSBytes > 0 && r.MNPeakRSSBytes > 0:
		rss = fmt.Sprintf("; peak RSS %s per CN%s, %s per MN (the largest)", hb(r.CNPeakRSSBytes), budget, hb(r.MNPeakRSSBytes))
	case r.CNPeakRSSBytes > 0:
		rss = fmt.Sprintf("; peak RSS %s per CN%s (the largest)", hb(r.CNPeakRSSBytes), budget)
	case r.ProcessPeakRSSBytes > 0:
		rss = fmt.Sprintf("; peak RSS %s (every rank in this one process)", hb(r.ProcessPeakRSSBytes))
	}
	fmt.Fprintf(w, "memory: CN cache %s max per CN%s; MN used/pool %s%s\n", hb(r.CNCacheBytesMax), keptEntries(r.KeptEntries, r.Graph.Vertices, r.KeptBytesMax), strings.Join(pools, ", "), rss)
	if r.Graph.Edges > 0 && r.DMIndexBytes > 0 {
		lists := fmt.Sprintf("lists as %d-byte records", r.DMRecord)
		if r.Packed {
			lists = "lists packed, --compress"
		}
		if r.DMWeights != "" {
			lists += ", " + r.DMWeights + " weights"
		}
		e := float64(r.Graph.Edges)
		fmt.Fprintf(w, "store: %.2f B per edge on DM: index %.2f, lists %.2f (%s); %.1f%% of vertices in place\n",
			float64(r.DMIndexBytes+r.DMListBytes)/e, float64(r.DMIndexBytes)/e, float64(r.DMListBytes)/e, lists, 100*r.InPlaceShare)
	}
	if r.Summary.Text != "" {
		fmt.Fprintf(w, "result: %s\n", r.Summary.Text)
	}
	switch {
	case r.Verified && r.VerifiedBySample != "":
		fmt.Fprintf(w, "verified by a sample (the whole graph is past --cn-mem): %s\n", r.VerifiedBySample)
	case r.Verified:
		fmt.Fprintln(w, "verified: the serial verifier accepts the result")
	}
}
