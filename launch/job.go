package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dmg-hpc/dmg/csr"
	"github.com/dmg-hpc/dmg/heartbeat"
	"github.com/dmg-hpc/dmg/outfile"
	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs/memfab"
	"github.com/pkg/errors"
)

// Exit codes of the dmg binary.
const (
	ExitOK       = 0
	ExitFailure  = 1 // a run-time failure: fabric, peer, verification
	ExitBadInput = 2 // bad flags, roles, input files, parameters
)

// badInput marks an error caused by what the user gave (flags, files,
// parameters): it exits with status 2.
type badInput struct{ error }

func (e badInput) Cause() error  { return e.error }
func (e badInput) Unwrap() error { return e.error }

// BadInput marks err as the user's input being wrong (exit status 2).
func BadInput(err error) error {
	if err == nil {
		return nil
	}
	return badInput{err}
}

// BadInputf formats a bad-input error.
func BadInputf(format string, args ...any) error { return badInput{errors.Errorf(format, args...)} }

// inputError is implemented by errors of other packages that mean "bad
// input" (for example csr's parse errors), so launch need not wrap each.
type inputError interface{ BadInput() bool }

func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var bi badInput
	if errors.As(err, &bi) {
		return ExitBadInput
	}
	var ie inputError
	if errors.As(err, &ie) && ie.BadInput() {
		return ExitBadInput
	}
	if csr.IsInputError(err) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return ExitBadInput
	}
	var jf *jobFailed
	if errors.As(err, &jf) {
		return jf.code
	}
	return ExitFailure
}

// jobFailed is what every rank returns once the job has agreed that some
// rank failed; the failing rank has already printed the message.
type jobFailed struct {
	code int
	rank int
}

func (e *jobFailed) Error() string {
	return fmt.Sprintf("job failed on rank %d (exit %d)", e.rank, e.code)
}

// Job is one rank's context: its world, where it writes, its options.
type Job struct {
	*spmd.World
	Opts  *Options
	Out   io.Writer // rank 0's text report: stdout (stderr with --json -); io.Discard elsewhere
	Err   io.Writer // stderr, for the one error message and -v logs
	json  io.Writer // where --json - writes: rank 0's stdout
	errMu *sync.Mutex
	Start time.Time
	// cluster is the in-process fabric shared by the ranks of a --local job.
	cluster *memfab.Cluster
	// intr ends the process on SIGINT/SIGTERM and says in which phase.
	intr *interrupt
	// scratch is Sync's all-reduce buffer (one rank's goroutine uses it).
	scratch []float64
	// ranks is where every rank runs, gathered once when the job starts.
	ranks []rankInfo
	// watch is the liveness watch before the fabric is up (nil: none);
	// stallOnce lets one watch, this or the heartbeats', end the job.
	watch     *stoppedWatch
	stallOnce sync.Once
	// beacon hears the ranks on other hosts (peers.go; nil: in-process).
	beacon *heartbeat.Beacon
}

// HostCNs is the number of compute nodes that share this rank's machine:
// its cores (the workers' default), its memory (--cn-mem's check) and
// its disks.
func (j *Job) HostCNs() int { return j.onHost(spmd.CN) }

// HostMNs is the number of memory nodes on this rank's machine (at least 1).
func (j *Job) HostMNs() int { return j.onHost(spmd.MN) }

// onHost counts the ranks of role on this rank's machine (at least 1):
// those of the same Machine, which hosts emulated as namespaces, or
// containers, on one node share although their host names differ.
func (j *Job) onHost(role spmd.Role) int {
	me := j.ranks[j.Rank()].Machine
	n := 0
	for _, r := range j.ranks {
		if r.Role == role.String() && r.Machine == me {
			n++
		}
	}
	return max(1, n)
}

// Logf prints a progress line on stderr, tagged with the rank and role:
// with -v from rank 0, with -vv from every rank; none for a while after a
// SIGCONT (interrupt.continued).
func (j *Job) Logf(format string, args ...any) {
	if j.Opts.Verbose == 0 || (j.Opts.Verbose == 1 && j.Rank() != 0) || j.intr.quiet() {
		return
	}
	j.errMu.Lock()
	defer j.errMu.Unlock()
	fmt.Fprintf(j.Err, "[%6.2fs rank %d %s%d] %s\n", time.Since(j.Start).Seconds(), j.Rank(), j.Role, j.Index, fmt.Sprintf(format, args...))
}

// note tells the operator, from whichever rank, what it did on its own
// (a serve job's MN that took its lock back from a dead client): a line
// on stderr, whatever the verbosity.
func (j *Job) note(msg string) {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	fmt.Fprintf(j.Err, "dmg: %s\n", msg)
}

// stalled ends the job for a peer that has stopped moving (job.Config.
// Stalled): one line, then every rank is aborted. The watchers of several
// ranks may see it at once: rank 0 prints at once, the others only after
// stallDefer (plus a tenth of a second per rank, lowest first), by which
// time rank 0's abort has normally taken them. A second per rank was too
// short on a loaded machine: CI saw rank 1's line as well as rank 0's.
func (j *Job) stalled(msg string) {
	var delay time.Duration
	if r := j.Rank(); r > 0 {
		delay = stallDefer + time.Duration(r)*100*time.Millisecond
	}
	j.endStalled(msg, delay)
}

// stallDefer is how long a rank other than 0 leaves rank 0 to report a
// stall and abort the job before it reports it itself.
const stallDefer = 3 * time.Second

// endStalled prints msg after delay and aborts the job, once per process
// whichever watch calls it.
func (j *Job) endStalled(msg string, delay time.Duration) {
	j.stallOnce.Do(func() {
		time.Sleep(delay)
		if j.intr.claim() { // not if the launcher's signal is being reported
			said := j.intr.saying()
			j.intr.end(ExitFailure) // the launcher's signal then waits for this line
			printErr(j.Err, j.errMu, j.Rank(), errors.New(msg))
			said()
		}
		j.World.Runtime.Abort(ExitFailure)
	})
}

// gatherRanks learns where every rank runs (rank, role, host, pid, cores),
// for HostCNs, `dmg info` and the interrupt handler.
func (j *Job) gatherRanks() error {
	me := gathered{rankInfo: rankInfo{Rank: j.Rank(), Role: j.Role.String(), Index: j.Index, Host: hostname(), PID: os.Getpid(), Cores: runtime.NumCPU(), Machine: machine()}}
	var b *heartbeat.Beacon
	if j.cluster == nil { // under a launcher: hear the ranks on other hosts
		var err error
		if b, err = heartbeat.Listen(); err != nil {
			return err
		}
		me.Beacon, me.Token = b.Addrs(), newToken()
	}
	blob, err := json.Marshal(me)
	if err != nil {
		return errors.Wrap(err, "launch: encoding rank info")
	}
	all, err := j.Comm.AllGather(blob)
	if err != nil {
		return errors.Wrap(err, "launch: exchanging hosts and pids")
	}
	gs := make([]gathered, len(all))
	j.ranks = make([]rankInfo, len(all))
	for r, blob := range all {
		if err := json.Unmarshal(blob, &gs[r]); err != nil {
			return errors.Wrapf(err, "launch: decoding rank %d's info", r)
		}
		j.ranks[r] = gs[r].rankInfo
	}
	if err := j.startBeacon(b, gs); err != nil {
		return err
	}
	if j.cluster == nil { // under a launcher: for a signal's message
		j.intr.setPeers(me.Host, j.ranks, j.Rank(), j.beacon)
	}
	return nil
}

// IsRoot tells whether this rank writes the report.
func (j *Job) IsRoot() bool { return j.Rank() == 0 }

// agreeTimeout bounds how long a failed rank waits for the others to reach
// the agreement point before it aborts the whole job itself.
const agreeTimeout = 10 * time.Second

// Agree is a phase boundary: every rank passes its phase's error (nil when
// it succeeded), and either all ranks continue (nil) or all stop with a
// *jobFailed. The lowest failing rank prints its error once. A failing rank
// whose peers do not arrive within agreeTimeout (they may be stuck in the
// phase) aborts the job, so no rank hangs.
func (j *Job) Agree(err error) error { return j.Sync(err, nil) }

// Sync is Agree that also sums vec element-wise over the world, in the
// same all-reduce (the engine's iteration boundary: rank.Config.Sync).
func (j *Job) Sync(err error, vec []float64) error {
	return agree(j.World.Runtime, j.Comm, j.Err, j.errMu, &j.scratch, err, vec, j.intr)
}

// agree runs one all-reduce of vec followed by two slots per rank: the
// exit code of a rank that failed in this phase, and (for a failure agreed
// on before, passed on) the printing rank plus one.
// intr, when not nil, learns the job's failure code as soon as the ranks
// agree on it, before anything is printed, and names the peers that died
// (a failure that follows a death is reported as the death).
func agree(rt spmd.Runtime, comm spmd.Comm, stderr io.Writer, mu *sync.Mutex, scratch *[]float64, err error, vec []float64, intr *interrupt) error {
	// A rank ending on the launcher's signal goes no further: its handler
	// gives back what the job holds and ends the process, and must not
	// find the network torn down under it by a failure this one causes.
	intr.stayIfEnding()
	code := exitCode(err)
	me := comm.Rank()
	// A failure agreed on in an earlier phase has been printed already:
	// pass it on, and keep the rank that printed it as the first.
	var done *jobFailed
	errors.As(err, &done)
	var watchdog *time.Timer
	if err != nil && done == nil {
		watchdog = time.AfterFunc(agreeTimeout, func() {
			printErr(stderr, mu, me, err)
			rt.Abort(code)
		})
	}
	size := comm.Size()
	n := len(vec) + 2*size
	if cap(*scratch) < n {
		*scratch = make([]float64, n)
	}
	v := (*scratch)[:n]
	copy(v, vec)
	clear(v[len(vec):])
	if err != nil {
		v[len(vec)+2*me] = float64(code)
		if done != nil {
			v[len(vec)+2*me+1] = float64(done.rank + 1)
		}
	}
	rerr := comm.AllReduceFloat64(v, spmd.Sum)
	if watchdog != nil && !watchdog.Stop() {
		// The watchdog fired: the message is out and the job is ending.
		return &jobFailed{code: code, rank: me}
	}
	if rerr != nil {
		// Only the in-process runtime returns here: aborted by a peer, or
		// ranks found in different collectives (a bug: said once).
		var mm *spmd.MismatchError
		if errors.As(rerr, &mm) || errors.As(err, &mm) {
			if mm.Report() {
				printErr(stderr, mu, me, errors.Errorf("internal error (a bug in dmg): %v; the job is aborted", mm))
			}
			return &jobFailed{code: ExitFailure, rank: me}
		}
		if err != nil && done == nil {
			printErr(stderr, mu, me, err)
			return &jobFailed{code: code, rank: me}
		}
		if done != nil {
			return done
		}
		return &jobFailed{code: ExitFailure, rank: -1}
	}
	copy(vec, v)
	first, worst, passed := math.MaxInt, 0, false
	for r := range size {
		c := int(v[len(vec)+2*r])
		if c == 0 {
			continue
		}
		worst = max(worst, c)
		at := r
		if by := int(v[len(vec)+2*r+1]); by > 0 {
			at, passed = by-1, true
		}
		first = min(first, at)
	}
	if worst == 0 {
		return nil
	}
	printer := first == me && done == nil
	// A failure that follows a death is reported as the death, by rank 0
	// even when another rank tripped on it first: that rank may not get
	// past this agreement (a dead partner in the all-reduce), and the
	// launcher is about to end them all.
	reporter := me == 0 && !printer && !passed && intr.hasPeers()
	if printer || reporter {
		defer intr.saying()() // before end: a signal then waits for the line
	}
	intr.end(worst)
	if printer || reporter {
		reportFailure(stderr, mu, me, first, err, printer, intr)
	}
	return &jobFailed{code: worst, rank: first}
}

// reportFailure prints an agreed failure once: the printer's error, or
// the peers found dead since (a peer killed a moment ago may still be
// exiting, its memory already gone, which is what a rank tripped on). A
// death is named by rank 0, or by the printer when rank 0 is among the
// dead.
func reportFailure(stderr io.Writer, mu *sync.Mutex, me, first int, err error, printer bool, intr *interrupt) {
	if intr.hasPeers() {
		time.Sleep(200 * time.Millisecond)
	}
	dead := intr.dead()
	zeroDead := slices.ContainsFunc(dead, func(d string) bool { return strings.HasPrefix(d, "rank 0 (") })
	var say error
	switch {
	case len(dead) > 0 && (me == 0 || zeroDead):
		var wp *rank.WorkerPanic
		switch {
		case printer && errors.As(err, &wp):
			// What the worker read was the dead rank's memory going away.
			say = errors.Errorf("%s died; the job ends (then: a worker failed on what it read from it: %v)", strings.Join(dead, ", "), wp.Value)
		case printer:
			say = errors.Errorf("%s died; the job ends (then: %v)", strings.Join(dead, ", "), err)
		default:
			say = errors.Errorf("%s died; the job ends (rank %d failed then)", strings.Join(dead, ", "), first)
		}
	case len(dead) == 0 && printer:
		say = err
	}
	if say != nil && intr.claim() { // not if the launcher's signal or a stall is reported
		printErr(stderr, mu, me, say)
	}
}

func printErr(w io.Writer, mu *sync.Mutex, rank int, err error) {
	mu.Lock()
	defer mu.Unlock()
	if rank == 0 {
		fmt.Fprintf(w, "dmg: %v\n", err)
	} else {
		fmt.Fprintf(w, "dmg: rank %d: %v\n", rank, err)
	}
}

// body is what a command does on every rank of a started job.
type body func(j *Job) error

// runJob starts the job (in-process or under MPI), builds the world, runs
// fn on every rank, agrees on the outcome and returns the exit code. It
// prints at most one error line.
func runJob(opts *Options, stdout, stderr io.Writer, fn body) int {
	mu := &sync.Mutex{}
	start := time.Now()
	_, rank0, _ := spmd.Launched()
	intr := newInterrupt(stderr, mu, start, rank0 == 0)
	defer intr.stop()
	if opts.Local {
		roles, err := opts.roles(0)
		if err != nil {
			printErr(stderr, mu, 0, err)
			return exitCode(err)
		}
		cluster := memfab.NewCluster()
		err = spmd.RunLocal(roles.Size(), func(rt spmd.Runtime) error {
			return rankMain(rt, roles, opts, stdout, stderr, mu, start, cluster, intr, fn)
		})
		var jf *jobFailed
		if errors.As(err, &jf) {
			return jf.code
		}
		if err != nil { // a failure outside any agreement (should not happen)
			printErr(stderr, mu, 0, err)
		}
		return exitCode(err)
	}
	launched, rank, size := spmd.Launched()
	if !launched {
		err := BadInputf("dmg was not started by a parallel launcher; run it as `mpirun -np N dmg ...` or `srun dmg ...`, or add --local to run every rank in this process")
		printErr(stderr, mu, 0, err)
		return ExitBadInput
	}
	// Flag errors are found identically on every rank before MPI starts;
	// print them once.
	if size > 0 {
		if _, err := opts.roles(size); err != nil {
			if rank == 0 {
				printErr(stderr, mu, 0, err)
			}
			return exitBeforeMPI(rank, exitCode(err))
		}
	}
	stuck := startWatch(opts.StartTimeout, rank, stderr, mu)
	rt, err := spmd.StartMPI()
	if err == nil {
		// MPI_Init can return with a rank missing (Slurm's PMIx fences do
		// not always wait for a task that died): a barrier waits for all.
		err = rt.World().Barrier()
	}
	stuck()
	if err != nil {
		if rank == 0 {
			printErr(stderr, mu, 0, err)
		}
		return exitBeforeMPI(rank, ExitFailure)
	}
	roles, err := opts.roles(rt.World().Size())
	if err == nil {
		err = rankMain(rt, roles, opts, stdout, stderr, mu, start, nil, intr, fn)
	} else if rt.World().Rank() == 0 {
		printErr(stderr, mu, 0, err)
	}
	var jf *jobFailed
	errors.As(err, &jf)
	me := rt.World().Rank()
	_ = rt.Finalize()
	if jf == nil {
		return exitCode(err)
	}
	// An agreed failure (its line is out: it was printed before any rank
	// got here) leaves through world rank 0 alone, after the others
	// (docs/design.md, "A failed job leaves through rank 0").
	if me != 0 {
		return ExitOK
	}
	intr.waitPeersExit(me, peersExitWait)
	return jf.code
}

// failGrace is how long a rank that did not print a failure lingers.
const failGrace = 300 * time.Millisecond

func rankMain(rt spmd.Runtime, roles spmd.Roles, opts *Options, stdout, stderr io.Writer, mu *sync.Mutex, start time.Time, cluster *memfab.Cluster, intr *interrupt, fn body) (rerr error) {
	w, err := spmd.NewWorld(rt, roles)
	if err != nil {
		// A layout error is the same on every rank.
		err = BadInput(err)
		if rt.World().Rank() == 0 {
			printErr(stderr, mu, 0, err)
		}
		return &jobFailed{code: ExitBadInput, rank: 0}
	}
	if w.Role == spmd.MN && !opts.Local && opts.MNNice > 0 {
		renice(opts.MNNice)
	}
	out, js := io.Discard, io.Discard
	if w.Rank() == 0 {
		out, js = stdout, stdout
		if opts.JSON == outfile.Stdout || opts.stdoutData { // stdout holds only the JSON or the results, for a parser
			out = stderr
		}
	}
	// A panic is a bug, and this rank is then out of step with the
	// others' collectives: say so once, and end the whole job at once
	// instead of waiting for peers that will never answer.
	defer func() {
		if p := recover(); p != nil {
			printErr(stderr, mu, w.Rank(), errors.Errorf("internal error (a bug in dmg): %v; the job is aborted\n%s", p, debug.Stack()))
			rt.Abort(ExitFailure)                                // MPI: the job ends here
			rerr = &jobFailed{code: ExitFailure, rank: w.Rank()} // in-process: printed
		}
	}()
	j := &Job{World: w, Opts: opts, Out: out, Err: stderr, json: js, errMu: mu, Start: start, cluster: cluster, intr: intr}
	if err := j.gatherRanks(); err != nil {
		return j.Agree(err)
	}
	stop, err := startProfile(opts.CPUProfile, w.Rank(), opts.Local)
	if err == nil {
		err = fn(j)
		j.watch.close()
		stop()
	}
	err = j.Agree(err)
	if err == nil {
		j.beacon.Close() // every rank is past the last boundary
	} else {
		// A rank that ends on the launcher's signal probes the others:
		// this one still answers, not to be taken for dead.
		j.beacon.StopWatching()
	}
	return err
}

// preMPIGrace is how long a rank other than 0 lingers after an error found
// before MPI started. Every rank finds such an error at once, and the
// launcher tears the job down when the first rank exits non-zero; rank 0,
// which prints the message, must get its line out before that happens. A
// lingering rank is normally killed by the launcher as soon as rank 0 has
// exited, so the job still ends at once.
const preMPIGrace = 3 * time.Second

// exitBeforeMPI returns code after giving rank 0 the time to report.
func exitBeforeMPI(rank, code int) int {
	if rank != 0 && code != ExitOK {
		time.Sleep(preMPIGrace)
	}
	return code
}

// startWatch ends this process if MPI has not started within limit (0:
// never): a rank that died while starting holds the others in MPI_Init or
// their first collective for good unless the launcher ends them (srun
// does not by default). Rank 0 says so; the launcher's own output names
// the rank that failed. Call the returned stop once every rank is up.
func startWatch(limit time.Duration, rank int, stderr io.Writer, mu *sync.Mutex) (stop func()) {
	if limit == 0 {
		return func() {}
	}
	t := time.AfterFunc(limit, func() {
		if rank == 0 {
			printErr(stderr, mu, 0, errors.Errorf("rank 0 on %s: MPI did not start within %v (MPI_Init and a first barrier): another rank failed or stopped while starting (the launcher's output names it; under srun, --kill-on-bad-exit=1 ends the step at once; --start-timeout sets this limit)", hostname(), limit))
		}
		os.Exit(ExitFailure)
	})
	return func() { t.Stop() }
}

// machine names the kernel and the cores this process runs on
// (machineOf).
func machine() string {
	id, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	st, _ := os.ReadFile("/proc/self/status")
	return machineOf(id, st, hostname())
}

// machineOf is the machine of a process given the kernel's boot id, the
// process's /proc/self/status and its host name: the boot id and the
// CPUs the process may run on (processes of one kernel with the same CPUs
// share them, whatever host names their namespaces or containers give
// them; cpusets that split a node's cores, as Slurm's, make machines of
// their own). The host name when the boot id is unknown.
func machineOf(bootID, status []byte, host string) string {
	id := strings.TrimSpace(string(bootID))
	if id == "" {
		return "host " + host
	}
	cpus := "?"
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			cpus = strings.TrimSpace(v)
		}
	}
	return id + " cpus " + cpus
}

// hostname is the node name for reports.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "?"
	}
	return h
}

// startProfile starts this rank's CPU profile (--cpuprofile) and returns
// what stops it. In-process jobs profile the process once, from rank 0.
func startProfile(prefix string, rank int, local bool) (func(), error) {
	if prefix == "" || (local && rank != 0) {
		return func() {}, nil
	}
	path := fmt.Sprintf("%s.rank%d.pprof", prefix, rank)
	f, err := outfile.Create(path)
	if err != nil {
		return nil, BadInputf("launch: --cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f.W); err != nil {
		f.Abort()
		return nil, errors.Wrapf(err, "launch: --cpuprofile %s", path)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Commit()
	}, nil
}
