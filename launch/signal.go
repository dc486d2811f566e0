package launch

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dmg-hpc/dmg/algo"
	"github.com/dmg-hpc/dmg/heartbeat"
	"github.com/dmg-hpc/dmg/verbs"
)

// interrupt ends a job on SIGINT or SIGTERM: rank 0 says in one line which
// signal came in which phase, every rank removes the temporaries of its
// outputs, and the process exits with 128 + the signal's number (130,
// 143). Open MPI's mpirun forwards the signal to every rank.
type interrupt struct {
	stderr io.Writer
	mu     *sync.Mutex
	start  time.Time
	print  bool // this process says it (world rank 0)
	sigs   chan os.Signal
	// thawed is when (Unix nanoseconds) this process last woke from a
	// freeze: a sleep of freezeTick that took over freezeGap.
	thawed atomic.Int64
	// continued is when (Unix nanoseconds) the last SIGCONT came: Open
	// MPI's mpirun sends one to every rank it is about to end, then
	// sleeps in its event loop, which forwards the ranks' output, for a
	// second before the SIGTERM, and a second more before the SIGKILL.
	// Only what fits in the pipe meanwhile gets out: progress lines stop
	// for contQuiet, so that the line saying why the job ends does.
	continued atomic.Int64
	conts     chan os.Signal
	quit      chan struct{}
	// claimed is set by the first of this process's ways to say why the
	// job ends (the launcher's signal, a stall, an agreed failure): the
	// others then say nothing.
	claimed atomic.Bool

	state   sync.Mutex
	phase   string
	outputs []string
	written bool
	ending  int // the agreed failure's exit code, once the ranks know it
	// said is closed once this rank has printed the agreed failure, when
	// it is the rank that prints it (nil otherwise).
	said chan struct{}
	// to, when set (takeOver), receives the signal instead: the job ends
	// itself (dmg serve).
	to    chan os.Signal
	peers []rankInfo // where every rank runs, once the world is up
	host  string
	rank  int               // this process's world rank, once the world is up
	hb    *heartbeat.Beacon // hears the ranks on other hosts (peers.go)
	// undos give back what the job holds outside itself (a pool's lease)
	// when a signal ends it (onSignal); halts then stop its traffic to
	// what outlives it (onHalt).
	undos []undo
	halts []func()
	// handling is set once a signal ends the job: the job's own end
	// then waits for the handler's (stop).
	handling atomic.Bool
}

// undo is something the job holds outside itself, and how to give it back.
type undo struct {
	what string
	fn   func() error
}

// undoGrace bounds the undos: Open MPI kills a rank 1 s after the SIGTERM
// it forwards (odls_base_sigkill_timeout).
const undoGrace = 700 * time.Millisecond

// signalLinger is how long after the signal a rank that does not say why
// the job ends stays: Open MPI kills the job's other ranks as soon as one
// exits, and the one that says it needs up to undoGrace, then a moment.
const signalLinger = undoGrace + 150*time.Millisecond

// sayerWait bounds how long, after signalLinger, a rank that does not say
// why the job ends waits for the rank that says it (world rank 0, or rank
// 1 when rank 0 is gone) to exit, when it runs on the same host: the
// launcher kills the job's other ranks at the first exit, and on a loaded
// host the sayer may take longer than signalLinger to say it.
const sayerWait = 3 * time.Second

// waitSayer returns once the rank that says why the job ends (rank 0,
// or rank 1 when rank 0's process is gone) has exited, when it runs on
// host and is not me, or after limit.
func waitSayer(me int, host string, peers []rankInfo, limit time.Duration) {
	sayer := 0
	if rankGone(host, peers, 0) {
		sayer = 1
	}
	pid := localPID(host, peers, sayer)
	if sayer == me || pid == 0 {
		return
	}
	for end := time.Now().Add(limit); !gone(pid) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
}

func newInterrupt(stderr io.Writer, mu *sync.Mutex, start time.Time, print bool) *interrupt {
	in := &interrupt{stderr: stderr, mu: mu, start: start, print: print, phase: "starting", sigs: make(chan os.Signal, 1), conts: make(chan os.Signal, 1), quit: make(chan struct{})}
	signal.Notify(in.sigs, syscall.SIGINT, syscall.SIGTERM)
	signal.Notify(in.conts, syscall.SIGCONT)
	go in.watchFreeze()
	go in.watchCont()
	go in.wait()
	return in
}

// localPID is world rank r's pid if it runs on host, else 0.
func localPID(host string, peers []rankInfo, r int) int {
	for _, p := range peers {
		if p.Rank == r && p.Host == host && p.PID > 0 {
			return p.PID
		}
	}
	return 0
}

// rankGone says whether world rank r runs on host and its process is gone.
func rankGone(host string, peers []rankInfo, r int) bool {
	pid := localPID(host, peers, r)
	return pid > 0 && gone(pid)
}

// deadPeers names the ranks on this host whose process is gone.
func deadPeers(host string, peers []rankInfo) []string {
	var dead []string
	for _, p := range peers {
		if p.Host == host && p.PID > 0 && gone(p.PID) {
			if p.Rank < 0 { // a served pool's MN, not a rank of this job
				dead = append(dead, fmt.Sprintf("%s %d of the pool (pid %d on %s)", p.Role, p.Index, p.PID, p.Host))
				continue
			}
			dead = append(dead, fmt.Sprintf("rank %d (%s %d, pid %d on %s)", p.Rank, p.Role, p.Index, p.PID, p.Host))
		}
	}
	return dead
}

// gone says a process has exited: no such pid, or a zombie its parent has
// not reaped yet.
func gone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	st, err := verbs.ReadProcStat(pid)
	return err == nil && st.Exited()
}

// hasPeers says whether the ranks' processes are known (under a launcher).
func (in *interrupt) hasPeers() bool {
	if in == nil {
		return false
	}
	in.state.Lock()
	defer in.state.Unlock()
	return len(in.peers) > 0
}

// dead is deadPeers of the job, and the ranks on other hosts whose host
// refused a probe just now (nil receiver: none known).
func (in *interrupt) dead() []string {
	if in == nil {
		return nil
	}
	in.state.Lock()
	host, peers, hb := in.host, in.peers, in.hb
	in.state.Unlock()
	gone, _, _ := lostPeers(hb, jobRanks(peers))
	return append(deadPeers(host, peers), gone...)
}

// jobRanks is the job's own ranks among peers (a served pool's MNs,
// added after them, are not).
func jobRanks(peers []rankInfo) []rankInfo {
	for i, p := range peers {
		if p.Rank < 0 {
			return peers[:i]
		}
	}
	return peers
}

// currentPhase is the phase this rank is in.
func (in *interrupt) currentPhase() string {
	in.state.Lock()
	defer in.state.Unlock()
	return in.phase
}

// end records that the ranks agreed on a failure with this exit code (nil
// receiver: no handler).
func (in *interrupt) end(code int) {
	if in == nil {
		return
	}
	in.state.Lock()
	in.ending = code
	in.state.Unlock()
}

// claim takes the right to print why the job ends, once per process
// (nil receiver: always granted).
func (in *interrupt) claim() bool {
	return in == nil || in.claimed.CompareAndSwap(false, true)
}

// saying records that this rank is about to print the agreed failure
// (naming the dead takes a probe of the peers); the returned function
// says it is out. A signal meanwhile waits for it (sayGrace at most).
func (in *interrupt) saying() func() {
	if in == nil {
		return func() {}
	}
	c := make(chan struct{})
	in.state.Lock()
	in.said = c
	in.state.Unlock()
	return func() { close(c) }
}

// sayGrace bounds how long the launcher's signal waits for the failure's
// line: within the second Open MPI leaves between SIGTERM and SIGKILL.
const sayGrace = 700 * time.Millisecond

// addPeers adds processes outside the job whose death ends it (a served
// pool's MNs, with Rank -1).
func (in *interrupt) addPeers(peers []rankInfo) {
	in.state.Lock()
	in.peers = append(in.peers, peers...)
	in.state.Unlock()
}

// setPeers records where every rank runs, this rank and its beacon (the
// reporting rank asks them on a signal).
func (in *interrupt) setPeers(host string, peers []rankInfo, rank int, hb *heartbeat.Beacon) {
	in.state.Lock()
	in.host, in.peers, in.rank, in.hb = host, peers, rank, hb
	in.state.Unlock()
}

// takeOver hands the first SIGINT or SIGTERM to the job, which ends
// itself, instead of ending the process.
func (in *interrupt) takeOver() <-chan os.Signal {
	in.state.Lock()
	defer in.state.Unlock()
	in.to = make(chan os.Signal, 1)
	return in.to
}

// stop stops listening (the job is over). While a signal is being
// handled it never returns: the handler ends the process, after its
// undos and its line.
func (in *interrupt) stop() {
	in.stayIfEnding()
	signal.Stop(in.sigs)
	signal.Stop(in.conts)
	close(in.quit)
	close(in.sigs)
}

// stayIfEnding never returns once a signal is being handled (nil
// receiver: returns): the handler ends the process.
func (in *interrupt) stayIfEnding() {
	if in != nil && in.handling.Load() {
		select {}
	}
}

// setPhase records the phase that starts (job.Config.Phase).
func (in *interrupt) setPhase(name string) {
	in.state.Lock()
	in.phase = name
	in.state.Unlock()
}

// writing records the outputs about to be written; done that they are.
func (in *interrupt) writing(paths ...string) {
	in.state.Lock()
	in.phase, in.outputs = "writing the results", append(in.outputs, paths...)
	in.state.Unlock()
}

func (in *interrupt) done() {
	in.state.Lock()
	in.written = true
	in.state.Unlock()
}

func (in *interrupt) wait() {
	s, ok := <-in.sigs
	if !ok {
		return
	}
	sig, _ := s.(syscall.Signal)
	in.state.Lock()
	if in.to != nil {
		in.to <- s
		in.state.Unlock()
		return
	}
	in.handling.Store(true)
	phase, outs, written, peers, host, ending, rank, hb, said := in.phase, in.outputs, in.written, in.peers, in.host, in.ending, in.rank, in.hb, in.said
	in.state.Unlock()
	got := time.Now()
	if ending != 0 {
		// The job has failed and says so: the launcher is tearing it down
		// after another rank's exit. Let the message out, say nothing more,
		// and stay for failGrace: the peers ending now probe this rank,
		// and must not take it for dead.
		in.halt()
		if said != nil {
			select {
			case <-said:
			case <-time.After(sayGrace):
			}
		}
		time.Sleep(failGrace - time.Since(got))
		in.mu.Lock()
		os.Exit(ending)
	}
	// From here on the job's own errors (its operations fail once halted)
	// are not said: the signal is.
	claimed := in.claim()
	// Give back what the job holds, then stop its traffic, while the
	// peers are probed.
	undone := in.runUndos()
	halted := make(chan string, 1)
	go func() {
		tail := undone()
		in.halt()
		halted <- tail
	}()
	// The launcher ends the job under every rank: rank 0 says why, or rank
	// 1 when rank 0 is the one lost. Probing the peers on other hosts
	// takes up to probeWait; the others linger for signalLinger, so that
	// the reporting rank finds them alive and does not take their exit
	// for a death, their memory stays up while its workers finish, and
	// the launcher does not kill it for their exit before it has spoken.
	var gone, silent []string
	print := in.print
	if ending == 0 && (print || rank == 1) {
		var zeroLost bool
		gone, silent, zeroLost = lostPeers(hb, jobRanks(peers))
		// The heartbeats watch other hosts; on this one rank 0's
		// process tells.
		print = print || zeroLost || rank == 1 && rankGone(host, peers, 0)
	}
	time.Sleep(2 * freezeTick) // a thaw, if any, is noted by now
	if time.Since(time.Unix(0, in.thawed.Load())) < thawRecent {
		// This rank was stopped, and the launcher continued it to end
		// it: the job was reported while it was frozen, by the others.
		print = false
	}
	tail := <-halted
	if !print {
		time.Sleep(signalLinger - time.Since(got))
		waitSayer(rank, host, peers, sayerWait)
	}
	for _, p := range outs {
		if p == "" || p == "-" {
			continue
		}
		tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(p), algo.TempPattern(filepath.Base(p))))
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	if print && claimed {
		what := "no output written"
		if written {
			what = "the outputs were written"
		}
		// The launcher also sends SIGTERM when a rank has died, or when it
		// lost a host: name the rank, by its pid on this host, by its
		// host's refusal of the probe, or by its silence.
		dead := append(deadPeers(host, peers), gone...)
		in.mu.Lock()
		if len(dead) == 0 && len(silent) > 0 {
			fmt.Fprintf(in.stderr, "dmg: %s; the job ends (%s from the launcher) after %.1fs, while %s; %s%s\n",
				strings.Join(silent, ", "), signalName(sig), time.Since(in.start).Seconds(), phase, what, tail)
		} else if len(dead) > 0 {
			fmt.Fprintf(in.stderr, "dmg: %s died after %.1fs, while %s; the job ends (%s from the launcher); %s%s\n",
				strings.Join(dead, ", "), time.Since(in.start).Seconds(), phase, signalName(sig), what, tail)
		} else {
			fmt.Fprintf(in.stderr, "dmg: interrupted by %s after %.1fs, while %s; %s%s\n", signalName(sig), time.Since(in.start).Seconds(), phase, what, tail)
		}
		in.mu.Unlock()
	}
	os.Exit(128 + int(sig))
}

// A freeze is seen as a sleep of freezeTick that lasted over freezeGap;
// a signal within thawRecent of the thaw is taken as the launcher's end
// of a job this rank slept through. (Open MPI sends SIGCONT before
// SIGTERM to every rank it ends, frozen or not: the signal itself does
// not tell.)
const (
	freezeTick = 100 * time.Millisecond
	freezeGap  = 3 * time.Second
	thawRecent = 2 * time.Second
)

// contQuiet is how long progress lines stop after a SIGCONT: past
// Open MPI's two seconds from its SIGCONT to its SIGKILL.
const contQuiet = 3 * time.Second

// watchCont notes when a SIGCONT comes.
func (in *interrupt) watchCont() {
	for {
		select {
		case <-in.quit:
			return
		case <-in.conts:
			in.continued.Store(time.Now().UnixNano())
		}
	}
}

// quiet tells whether progress lines are held back: a SIGCONT came
// within contQuiet (nil receiver: never).
func (in *interrupt) quiet() bool {
	return in != nil && time.Since(time.Unix(0, in.continued.Load())) < contQuiet
}

// watchFreeze notes when this process wakes from a freeze.
func (in *interrupt) watchFreeze() {
	for {
		t := time.Now()
		select {
		case <-in.quit:
			return
		case <-time.After(freezeTick):
		}
		if now := time.Now(); now.Sub(t) > freezeGap {
			in.thawed.Store(now.UnixNano())
		}
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// onSignal registers something the job holds outside itself (a served
// pool's lease), to give back if a signal ends the job.
func (in *interrupt) onSignal(what string, fn func() error) {
	in.state.Lock()
	in.undos = append(in.undos, undo{what, fn})
	in.state.Unlock()
}

// onHalt registers what stops this process's traffic to something that
// outlives the job (a served pool's network), when a signal ends it: run
// after the undos, before the process ends.
func (in *interrupt) onHalt(fn func()) {
	in.state.Lock()
	in.halts = append(in.halts, fn)
	in.state.Unlock()
}

// halt runs the halts.
func (in *interrupt) halt() {
	in.state.Lock()
	halts := in.halts
	in.state.Unlock()
	for _, h := range halts {
		h()
	}
}

// runUndos starts giving back what the job holds, at once, and returns
// what to add to the line that says why the job ended: what was given
// back, or why not, within undoGrace of the start.
func (in *interrupt) runUndos() func() string {
	in.state.Lock()
	undos := in.undos
	in.state.Unlock()
	if len(undos) == 0 {
		return func() string { return "" }
	}
	errs := make([]chan error, len(undos))
	for i, u := range undos {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- u.fn() }()
	}
	deadline := time.After(undoGrace)
	return func() string {
		var b strings.Builder
		for i, u := range undos {
			select {
			case err := <-errs[i]:
				if err != nil {
					fmt.Fprintf(&b, "; %s was not released: %v", u.what, err)
				} else {
					fmt.Fprintf(&b, "; %s was released", u.what)
				}
			case <-deadline:
				fmt.Fprintf(&b, "; %s was not released within %v (it expires when its heartbeat stops)", u.what, undoGrace)
			}
		}
		return b.String()
	}
}
