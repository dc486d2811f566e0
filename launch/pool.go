package launch

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
	"github.com/spf13/cobra"

	"github.com/dmg-hpc/dmg/job"
	"github.com/dmg-hpc/dmg/outfile"
	"github.com/dmg-hpc/dmg/pool"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/fabric"
)

// serveFlags are the flags of `dmg serve`.
type serveFlags struct {
	poolFile string
	mnMem    string
	fabric   string
}

func serveCmd(opts *Options, run func(body) int) *cobra.Command {
	sf := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "memory nodes alone: register pools that outlive compute jobs, which attach with --pool-file",
		Long: `serve runs memory nodes alone (--roles mn:M). Each registers a pool; rank 0
writes the pool file (mode 0600: it holds the pools' keys) and prints one
line when the pool is ready. Compute jobs then load graphs into it and run
on them (--pool-file, --name); dmg ls lists them. serve ends on SIGTERM,
SIGINT or dmg stop --pool-file PATH, and removes the pool file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.need = spmd.MNOnly
			return codeErr(run(func(j *Job) error { return serveBody(j, sf) }))
		},
	}
	c.Flags().StringVar(&sf.poolFile, "pool-file", "", "where to write the pool file (`PATH`; required)")
	c.Flags().StringVar(&sf.mnMem, "mn-mem", "1GiB", "pool size of each memory node (`SIZE`, e.g. 8GiB)")
	c.Flags().StringVar(&sf.fabric, "fabric", "", "libfabric provider (shm, tcp, verbs, efa, cxi); default shm when the serve job is on one host, else tcp. Only jobs on the pool's host attach to a shm pool; on libfabric 1.17 a shm pool does not survive a compute process killed in mid-operation (its queue lock stays held), and over tcp a job that connects while another computes can stall the running job's connections (docs/design.md)")
	return c
}

// serveBody registers the pools, publishes them and serves until told
// to stop.
func serveBody(j *Job, sf *serveFlags) error {
	if j.Opts.Local {
		return BadInputf("launch: dmg serve runs under mpirun or srun: its pool outlives the process only as its own job (--local has no fabric to attach to)")
	}
	if sf.poolFile == "" {
		return BadInputf("launch: dmg serve needs --pool-file PATH: where compute jobs find the pool")
	}
	if sf.fabric == cxlProvider {
		return BadInputf("launch: dmg serve serves its pools over libfabric (shm, tcp, verbs, efa, cxi); --fabric cxl maps pools in one job only")
	}
	if j.Roles.MN > pool.MaxMN {
		return BadInputf("launch: a pool has at most %d memory nodes; --roles asks for %d", pool.MaxMN, j.Roles.MN)
	}
	size, err := sizeFlag("mn-mem", sf.mnMem, "8GiB", verbs.MaxOffset)
	if err == nil && size < 2*pool.DataStart {
		err = BadInputf("launch: --mn-mem %s is too small for a pool; expected at least %s", sf.mnMem, humanize.IBytes(2*pool.DataStart))
	}
	if err == nil && j.IsRoot() {
		sf.poolFile, err = checkPoolFile(sf.poolFile, j.Opts.JSON)
	}
	if err := j.Agree(err); err != nil {
		return err
	}
	sig := j.intr.takeOver()
	rxmAutoProgress()
	net, err := fabric.Open(j.World, verbs.Config{PoolBytes: size, Provider: sf.fabric, Stuck: j.stalled, Note: j.note})
	if err := j.Agree(err); err != nil {
		return err
	}
	defer net.Close()
	var tb []byte
	if j.IsRoot() {
		var t uint64
		t, err = pool.NewToken()
		tb = binary.LittleEndian.AppendUint64(nil, t)
	}
	if err := j.Agree(err); err != nil {
		return err
	}
	if tb, err = j.Comm.Bcast(0, tb); err == nil && len(tb) != 8 {
		err = errors.Errorf("launch: the pool's token came as %d bytes", len(tb))
	}
	if err := j.Agree(err); err != nil {
		return err
	}
	token := binary.LittleEndian.Uint64(tb)
	pool.InitHeader(net.Pool(), token, j.Index, j.Roles.MN)
	if j.Index == 0 {
		pool.InitCatalogue(net.Pool())
	}
	pool.SetBeat(net.Pool(), uint64(time.Now().UnixMilli()))
	if err := j.Agree(nil); err != nil {
		return err
	}
	if j.IsRoot() {
		f := &pool.File{Version: pool.FileVersion, Token: token, Provider: net.ProviderName(), Created: time.Now().UTC()}
		for m, a := range net.Addrs() {
			r := j.ranks[j.Roles.RankOf(spmd.MN, m)]
			f.MNs = append(f.MNs, pool.MN{Host: r.Host, PID: r.PID, Size: a.Size, Base: a.Base, Key: a.Key, Name: a.Name})
		}
		err = pool.WriteFile(sf.poolFile, f)
		if err == nil {
			fmt.Fprintf(j.Out, "dmg serve: pool of %d memory nodes × %s over %s ready; pool file %s (stop: dmg stop --pool-file %s)\n",
				j.Roles.MN, humanize.IBytes(size), net.ProviderName(), sf.poolFile, sf.poolFile)
		}
	}
	if err := j.Agree(err); err != nil {
		return err
	}
	// Serve: the fabric progresses in the background; this rank beats
	// and watches its stop word, and the job's SIGTERM or SIGINT.
	tick := time.NewTicker(pool.BeatEvery)
	defer tick.Stop()
	stop := false
	for !stop {
		select {
		case s := <-sig:
			stop = true
			fmt.Fprintf(j.Out, "dmg serve: %v; the pool ends\n", s)
		case now := <-tick.C:
			pool.SetBeat(net.Pool(), uint64(now.UnixMilli()))
			if stop = pool.StopRequested(net.Pool()); stop {
				fmt.Fprintf(j.Out, "dmg serve: stopped by dmg stop; the pool ends\n")
			}
		}
	}
	// Every MN's stop word is written by dmg stop, and mpirun signals
	// every rank; either way all come here.
	if j.IsRoot() {
		os.Remove(sf.poolFile)
	}
	return nil
}

// checkPoolFile refuses to overwrite the pool file of a serve job that
// still runs on this host (a stale one, of a job that was killed, is
// replaced), and a path that is not a file to replace: compute jobs read
// the pool file, and serve removes it at its end. It returns the path to
// write and remove: a symbolic link's target.
func checkPoolFile(path, json string) (string, error) {
	if err := outfile.Distinct([2]string{"--pool-file", path}, [2]string{"--json", json}); err != nil {
		return "", BadInput(err)
	}
	t, err := outfile.Resolve(path)
	if err == nil && t.How != outfile.Replace {
		err = BadInputf("launch: --pool-file %s is not a regular file; expected a file (or a missing path) that compute jobs can read", path)
	}
	if err != nil {
		return "", BadInput(err)
	}
	if f, err := pool.ReadFile(t.Path); err == nil { // else none, or not a pool file: written over
		host := hostname()
		for _, m := range f.MNs {
			if m.Host == host && m.PID > 0 && !gone(m.PID) {
				return "", BadInputf("launch: --pool-file %s belongs to a pool that is still served (pid %d on %s); stop it first (dmg stop --pool-file %s) or choose another path", path, m.PID, host, path)
			}
		}
	}
	return t.Path, checkWritable("--pool-file", t.Path)
}

// attached is a job's handle on a served pool: its network, and rank 0's
// catalogue client on an endpoint of its own.
type attached struct {
	net   verbs.Network
	ep    verbs.Endpoint
	c     *pool.Client
	watch chan struct{} // closed to stop watchMNs
}

// attach reads the pool file (rank 0, which sends it to the others) and
// opens the job's network onto the pool's MNs; rank 0 checks the pool is
// the file's before anything is written. Collective.
func attach(j *Job, path string, timeout time.Duration) (*attached, error) {
	var blob []byte
	var err error
	if j.IsRoot() {
		blob, err = os.ReadFile(path)
		if err != nil {
			err = BadInputf("launch: --pool-file %s: %v (is `dmg serve --pool-file %s` running?)", path, errors.Cause(err), path)
		}
	}
	if err := j.Agree(err); err != nil {
		return nil, err
	}
	if blob, err = j.Comm.Bcast(0, blob); err != nil {
		return nil, j.Agree(err)
	}
	f, err := pool.Decode(blob)
	if err != nil {
		var fe *pool.FileError
		if errors.As(err, &fe) {
			err = &pool.FileError{Path: path, Msg: fe.Msg}
		}
		return nil, j.Agree(err)
	}
	if err := j.Agree(stale(f, path)); err != nil {
		return nil, err
	}
	// The pool's MNs on this host are watched as the job's ranks are: a
	// failure that follows one's death names it.
	var mns []rankInfo
	for m, mn := range f.MNs {
		mns = append(mns, rankInfo{Rank: -1, Role: spmd.MN.String(), Index: m, Host: mn.Host, PID: mn.PID})
	}
	if j.cluster == nil {
		j.intr.addPeers(mns)
	}
	net, err := fabric.Attach(j.World, f.Provider, f.Addrs(), verbs.Config{Timeout: timeout, Stuck: j.stalled})
	if err := j.Agree(err); err != nil {
		return nil, err
	}
	j.intr.onHalt(func() { net.Halt() }) // a signal must not leave a provider lock held in the pool
	a := &attached{net: net, watch: make(chan struct{})}
	go watchMNs(mns, j.stalled, a.watch)
	if j.IsRoot() {
		err = a.connect(f, path, j.note)
	}
	if err := j.Agree(err); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// connect opens the catalogue client's endpoint and connects it to pool
// f (read from path). An endpoint whose operation times out during the
// catalogue lock is replaced (pool.Client.SetRenew), and say is told so.
func (a *attached) connect(f *pool.File, path string, say func(string)) error {
	var err error
	if a.ep, err = a.net.NewEndpoint(); err == nil {
		a.c, err = pool.Connect(a.ep, f, path)
	}
	if err != nil {
		return err
	}
	a.c.SetRenew(func(cause error) (verbs.Endpoint, error) {
		ep, err := a.net.NewEndpoint()
		if err != nil {
			return nil, err
		}
		a.ep.Close()
		a.ep = ep
		say(fmt.Sprintf("%v; trying again on a new endpoint", cause))
		return ep, nil
	})
	return nil
}

// close ends the job's use of the pool (collective).
func (a *attached) close() error {
	if a == nil {
		return nil
	}
	if a.watch != nil {
		close(a.watch)
	}
	if a.ep != nil {
		a.ep.Close()
	}
	return a.net.Close()
}

// mnWatchEvery is how often an attached job looks for its pool's MN
// processes on its host.
const mnWatchEvery = 250 * time.Millisecond

// watchMNs ends the job, naming the MN (deadPeers), when a process of the
// pool on this host dies: over shm nothing else tells a CN (a dead MN's
// queue just stops answering, and the fabric's wait runs to its timeout),
// and over tcp it names the MN sooner than the socket's error does. MNs on
// other hosts fail the fabric's operations instead.
func watchMNs(mns []rankInfo, stalled func(string), stop <-chan struct{}) {
	host := hostname()
	t := time.NewTicker(mnWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if dead := deadPeers(host, mns); len(dead) > 0 {
			stalled(strings.Join(dead, ", ") + " died; the pool is gone (start dmg serve again)")
			return
		}
	}
}

// jobPool is the served pool a run or load works on, from its flags (nil
// without --pool-file).
func (r *runFlags) jobPool(j *Job, cfg *job.Config) (*attached, error) {
	if r.poolFile == "" {
		return nil, nil
	}
	if r.name == "" {
		return nil, BadInputf("launch: --pool-file needs --name NAME: the graph's name in the pool")
	}
	// What the pool decides, and what a run takes from the stored graph.
	fixed := []string{"mn-mem", "fabric", "cxl-dir", "cxl-dev"}
	if cfg.LoadOnly {
		fixed = append(fixed, "no-stage", "resume", "no-checkpoint", "checkpoint-every")
	} else {
		fixed = append(fixed, "graph", "undirected", "weighted", "load-mem", "no-stage", "seed", "compress")
	}
	for _, f := range fixed {
		if r.fs.Changed(f) {
			return nil, BadInputf("launch: --%s has no effect with --pool-file: %s", f, poolDecides(f))
		}
	}
	if len(r.name) > pool.MaxName {
		return nil, BadInputf("launch: --name %q is %d bytes; expected at most %d", r.name, len(r.name), pool.MaxName)
	}
	a, err := attach(j, r.poolFile, r.timeout)
	if err != nil {
		return nil, err
	}
	cfg.Pool = &job.Pool{Net: a.net, Client: a.c, Name: r.name, Wait: r.wait, OnSignal: j.intr.onSignal, Checkpointing: r.ckpt}
	return a, nil
}

// adminFlags are the flags of dmg ls and dmg stop.
type adminFlags struct {
	poolFile string
	drop     string
	json     bool
	timeout  time.Duration
	// stuck is told of a provider call that never returns (nil: the
	// command says so and exits).
	stuck func(msg string)
}

func lsCmd(stdout io.Writer) *cobra.Command {
	af := &adminFlags{}
	c := &cobra.Command{
		Use:   "ls",
		Short: "list the graphs a served pool holds (--drop NAME frees one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return admin(af, func(a *attached) error { return lsBody(a, af, stdout) })
		},
	}
	af.register(c)
	c.Flags().StringVar(&af.drop, "drop", "", "free the graph `NAME` (refused while a job holds it)")
	c.Flags().BoolVar(&af.json, "json", false, "print the catalogue as JSON")
	return c
}

func (af *adminFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&af.poolFile, "pool-file", "", "the served pool's file (`PATH`; required)")
	c.Flags().DurationVar(&af.timeout, "timeout", 5*time.Second, "how long to wait for the pool's memory nodes")
}

// admin runs fn on a served pool from this process alone (no launcher:
// a world of one compute node in this process).
func admin(af *adminFlags, fn func(a *attached) error) error {
	if af.poolFile == "" {
		return BadInputf("launch: --pool-file PATH is required")
	}
	err := spmd.RunLocal(1, func(rt spmd.Runtime) error {
		w, err := spmd.NewWorld(rt, spmd.Roles{CN: 1})
		if err != nil {
			return err
		}
		j := &Job{World: w, Opts: &Options{}, Out: io.Discard, Err: io.Discard, errMu: nil}
		a, err := attachAlone(j, af.poolFile, af.timeout, af.stuck)
		if err != nil {
			return err
		}
		err = fn(a)
		if cerr := a.close(); err == nil {
			err = cerr
		}
		return err
	})
	var re *spmd.RankError
	if errors.As(err, &re) {
		return re.Err // one process: no rank to name
	}
	return err
}

// attachAlone is attach for a world of one rank, without agreement.
// stuck is told of a provider call that never returns (nil: say it and
// exit).
func attachAlone(j *Job, path string, timeout time.Duration, stuck func(string)) (*attached, error) {
	f, err := readPoolFile(path)
	if err != nil {
		return nil, err
	}
	if stuck == nil {
		stuck = func(msg string) {
			fmt.Fprintf(os.Stderr, "dmg: %s\n", msg)
			os.Exit(ExitFailure)
		}
	}
	net, err := fabric.Attach(j.World, f.Provider, f.Addrs(), verbs.Config{Timeout: timeout, Stuck: stuck})
	if err != nil {
		return nil, err
	}
	a := &attached{net: net}
	if err = a.connect(f, path, j.note); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// readPoolFile reads a pool file that must name a live pool (stale).
func readPoolFile(path string) (*pool.File, error) {
	f, err := pool.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, BadInputf("launch: --pool-file %s does not exist (is `dmg serve --pool-file %s` running?)", path, path)
		}
		return nil, err
	}
	if err := stale(f, path); err != nil {
		return nil, err
	}
	return f, nil
}

// lsEntry is one graph of dmg ls.
type lsEntry struct {
	Name     string  `json:"name"`
	State    string  `json:"state"`
	Vertices uint64  `json:"vertices"`
	Edges    uint64  `json:"edges"`
	Bytes    uint64  `json:"bytes"`
	CNs      int     `json:"cns"`
	AgeS     float64 `json:"age_s"`
	Holder   string  `json:"holder,omitempty"`
	Jobs     int     `json:"jobs"`
}

// lsRun is one checkpointed run of dmg ls: running, or unfinished (its
// run died; --resume continues it).
type lsRun struct {
	Graph  string  `json:"graph"`
	Kernel string  `json:"kernel"`
	Params string  `json:"params"`
	State  string  `json:"state"`
	Done   uint64  `json:"iterations_done"`
	CNs    int     `json:"cns"`
	AgeS   float64 `json:"age_s"`
	KeptS  float64 `json:"checkpoint_age_s"` // since its last checkpoint (since its start if none)
	Holder string  `json:"holder"`
	Bytes  uint64  `json:"bytes"`
	// Region is where its checkpoint lies: an MN, and an offset in its pool.
	Region struct {
		MN  int    `json:"mn"`
		Off uint64 `json:"off"`
	} `json:"region"`
}

// runsOf lists the catalogue's checkpointed runs, newest first.
func runsOf(slots []pool.Slot, now time.Time) []lsRun {
	var out []lsRun
	ago := func(ms uint64) float64 { return now.Sub(time.UnixMilli(int64(ms))).Seconds() }
	for i, s := range slots {
		if s.State != pool.Checkpoint {
			continue
		}
		r := lsRun{Graph: s.Name, Kernel: s.Kernel, Params: fmt.Sprintf("%#x", s.Params), State: "unfinished", Done: s.Done, CNs: s.CNs,
			AgeS: ago(s.Created), KeptS: ago(s.Beat), Holder: fmt.Sprintf("job %#x", s.Lease), Bytes: s.Aux.Len}
		r.Region.MN, r.Region.Off = s.Aux.MN, s.Aux.Off
		if _, alive := pool.Running(slots, i, now); alive {
			r.State = "running"
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].AgeS < out[b].AgeS })
	return out
}

func lsBody(a *attached, af *adminFlags, stdout io.Writer) error {
	c := a.c
	if af.drop != "" {
		if err := dropGraph(c, af.drop); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dmg ls: dropped %q\n", af.drop)
	}
	slots, err := c.Slots()
	if err != nil {
		return err
	}
	now := time.Now()
	var list []lsEntry
	jobs := map[int]int{}
	var used uint64
	for _, s := range slots {
		if s.State == pool.Job && !s.Dead(now) {
			jobs[s.Graph]++
		}
		if s.State != pool.Free {
			used += slotBytes(&s)
		}
	}
	for i, s := range slots {
		if s.State != pool.Ready && s.State != pool.Loading {
			continue
		}
		e := lsEntry{Name: s.Name, State: s.State.String(), Vertices: s.Vertices, Edges: s.Edges, Bytes: slotBytes(&s), CNs: s.CNs,
			AgeS: now.Sub(time.UnixMilli(int64(s.Created))).Seconds(), Jobs: jobs[i]}
		if s.Lease != 0 {
			e.Holder = fmt.Sprintf("job %#x, beat %.1fs ago", s.Lease, now.Sub(time.UnixMilli(int64(s.Beat))).Seconds())
		}
		list = append(list, e)
	}
	var total uint64
	for m := range c.NumMN() {
		total += a.net.PoolSize(m)
	}
	runs := runsOf(slots, now)
	if af.json {
		b, err := json.MarshalIndent(struct {
			Graphs []lsEntry `json:"graphs"`
			Runs   []lsRun   `json:"runs"`
			MNs    int       `json:"mns"`
			Bytes  uint64    `json:"pool_bytes"`
			Used   uint64    `json:"used_bytes"`
		}{list, runs, c.NumMN(), total, used}, "", "  ")
		if err != nil {
			return errors.Wrap(err, "launch: encoding the catalogue")
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(stdout, "pool %s: %d memory nodes, %s of %s used, %d graphs, %d checkpointed runs\n", af.poolFile, c.NumMN(), humanize.IBytes(used), humanize.IBytes(total), len(list), len(runs))
	if len(list) == 0 && len(runs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tVERTICES\tEDGES\tSIZE\tCNS\tAGE\tHELD BY")
	for _, e := range list {
		holder := e.Holder
		switch {
		case holder == "" && e.Jobs > 0:
			holder = fmt.Sprintf("%d run(s)", e.Jobs)
		case holder == "":
			holder = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.Name, e.State, humanize.Comma(int64(e.Vertices)), humanize.Comma(int64(e.Edges)),
			humanize.IBytes(e.Bytes), e.CNs, seconds(e.AgeS), holder)
	}
	if err := tw.Flush(); err != nil || len(runs) == 0 {
		return err
	}
	fmt.Fprintf(stdout, "\nRUNS (checkpointed; --resume continues an unfinished one of the same graph, kernel and parameters)\n")
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GRAPH\tKERNEL\tPARAMS\tSTATE\tITERATIONS DONE\tCNS\tAGE\tLAST CHECKPOINT\tSIZE")
	for _, r := range runs {
		kept := "none yet"
		if r.Done > 0 {
			kept = seconds(r.KeptS).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.Graph, r.Kernel, r.Params, r.State, r.Done, r.CNs, seconds(r.AgeS), kept, humanize.IBytes(r.Bytes))
	}
	return tw.Flush()
}

// seconds is s rounded to a whole second, as a duration.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s)) * time.Second }

// slotBytes is what a slot's extents take.
func slotBytes(s *pool.Slot) uint64 {
	n := s.Aux.Len
	for _, e := range s.Ext {
		n += e.Len
	}
	return n
}

// dropGraph frees a graph and every view of it cut for another
// compute-node count: it takes each one's lease first, so that no run
// starts reading it (pool.Client.Hold), then, under the catalogue lock,
// refuses if a run still reads one (naming the runs) and gives the leases
// back.
func dropGraph(c *pool.Client, name string) error {
	slots, err := c.Named(name)
	if err != nil {
		return err
	}
	if len(slots) == 0 {
		return BadInputf("launch: --drop %q: the pool holds no graph of that name", name)
	}
	var taken []int
	defer func() {
		for _, i := range taken {
			c.ReleaseLease(i) // best effort: an unreleased lease expires
		}
	}()
	for _, i := range slots {
		if err := c.TakeLease(i, 0); err != nil {
			return err
		}
		taken = append(taken, i)
	}
	if err := c.Lock(2 * pool.StaleAfter); err != nil {
		return err
	}
	defer c.Unlock()
	runs, err := c.Readers(slots)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		return &pool.InUseError{Name: name, Runs: runs}
	}
	// Its runs' checkpoints go with it: no run of it is left to resume.
	ckpts, err := c.Checkpoints(name)
	if err != nil {
		return err
	}
	for _, i := range append(slots, ckpts...) {
		if err := c.Drop(i); err != nil {
			return err
		}
	}
	taken = nil
	return nil
}

// poolDecides says why a flag has no say on a served pool's graph.
func poolDecides(flag string) string {
	switch flag {
	case "mn-mem", "fabric", "cxl-dir", "cxl-dev":
		return "the serve job set the pools and the provider"
	case "no-stage":
		return "a load into a pool reads the whole input on every compute node"
	case "resume", "no-checkpoint", "checkpoint-every":
		return "a load keeps no checkpoint; runs do"
	}
	return "the pool holds the graph as its load read it (load it again under another name to change that)"
}

// stale refuses a pool file whose MNs on this host have exited (its serve
// job has ended, or was killed, leaving the file), or that serves over
// shm on another host. MNs on other hosts are found gone when the fabric
// cannot reach them.
func stale(f *pool.File, path string) error {
	host := hostname()
	for m, mn := range f.MNs {
		if f.Provider == "shm" && mn.Host != host {
			return &pool.FileError{Path: path, Msg: fmt.Sprintf("its pool is served over shm on %s (MN %d); a job on %s cannot reach it: run the job there, or serve the pool with --fabric tcp (or verbs, efa, cxi)", mn.Host, m, host)}
		}
		if mn.Host == host && mn.PID > 0 && gone(mn.PID) {
			return &pool.FileError{Path: path, Msg: fmt.Sprintf("its pool is gone: MN %d (pid %d on %s) has exited; start `dmg serve --pool-file %s` again", m, mn.PID, host, path)}
		}
	}
	return nil
}

// rxmAutoProgress sets FI_OFI_RXM_DATA_AUTO_PROGRESS=1 for a serve job's
// MNs on libfabric's rxm utility provider (tcp;ofi_rxm, verbs;ofi_rxm),
// unless the user chose: they take connections from jobs that come and go
// while others compute. On libfabric 1.17 it cured connections from
// short-lived processes stalling a computing job (6 of 9 PageRank runs
// failed with eight dmg ls at their start without it, none of 21 with it),
// not a whole job connecting (docs/design.md). verbs/fabric then asks the
// domain for FI_PROGRESS_AUTO as well (dmgfab.c: asked through the
// environment alone, 1.17's thread can crash the process). Attached jobs
// leave it to the user: a thread per endpoint made a tcp holder slower
// (51–63 s for what took 20–40) and once hung a job. It must be set before
// the process's first libfabric call.
func rxmAutoProgress() {
	const v = "FI_OFI_RXM_DATA_AUTO_PROGRESS"
	if _, set := os.LookupEnv(v); !set {
		os.Setenv(v, "1")
	}
}
