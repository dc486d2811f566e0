package launch

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dmg-hpc/dmg/algo"
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

	state   sync.Mutex
	phase   string
	outputs []string
	written bool
	ending  int // the agreed failure's exit code, once the ranks know it
	// to, when set (takeOver), receives the signal instead: the job ends
	// itself (dmg serve).
	to    chan os.Signal
	peers []rankInfo // where every rank runs, once the world is up
	host  string
}

func newInterrupt(stderr io.Writer, mu *sync.Mutex, start time.Time, print bool) *interrupt {
	in := &interrupt{stderr: stderr, mu: mu, start: start, print: print, phase: "starting", sigs: make(chan os.Signal, 1)}
	signal.Notify(in.sigs, syscall.SIGINT, syscall.SIGTERM)
	go in.wait()
	return in
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
	s, ok := procState(pid)
	return ok && (s == 'Z' || s == 'X')
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

// dead is deadPeers of the job (nil receiver: none known).
func (in *interrupt) dead() []string {
	if in == nil {
		return nil
	}
	in.state.Lock()
	host, peers := in.host, in.peers
	in.state.Unlock()
	return deadPeers(host, peers)
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

// addPeers adds processes outside the job whose death ends it (a served
// pool's MNs, with Rank -1).
func (in *interrupt) addPeers(peers []rankInfo) {
	in.state.Lock()
	in.peers = append(in.peers, peers...)
	in.state.Unlock()
}

// setPeers records where every rank runs (world rank 0 asks on a signal).
func (in *interrupt) setPeers(host string, peers []rankInfo) {
	in.state.Lock()
	in.host, in.peers = host, peers
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

// stop stops listening (the job is over).
func (in *interrupt) stop() {
	signal.Stop(in.sigs)
	close(in.sigs)
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
	phase, outs, written, peers, host, ending := in.phase, in.outputs, in.written, in.peers, in.host, in.ending
	in.state.Unlock()
	if ending != 0 {
		// The job has failed and says so: the launcher is tearing it down
		// after another rank's exit. Let the message out, say nothing more.
		time.Sleep(failGrace)
		in.mu.Lock()
		os.Exit(ending)
	}
	if !in.print {
		// The launcher signals every rank at once: the others linger, so
		// that rank 0 finds them alive and does not take their exit for a
		// death, and their memory stays up while its workers finish.
		time.Sleep(failGrace)
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
	if in.print {
		what := "no output written"
		if written {
			what = "the outputs were written"
		}
		// The launcher also sends SIGTERM when a rank has died: name it
		// when it ran on this host (where its pid can be asked about).
		dead := deadPeers(host, peers)
		in.mu.Lock()
		if len(dead) > 0 {
			fmt.Fprintf(in.stderr, "dmg: %s died after %.1fs, while %s; the job ends (%s from the launcher); %s\n",
				strings.Join(dead, ", "), time.Since(in.start).Seconds(), phase, signalName(sig), what)
		} else {
			fmt.Fprintf(in.stderr, "dmg: interrupted by %s after %.1fs, while %s; %s\n", signalName(sig), time.Since(in.start).Seconds(), phase, what)
		}
		in.mu.Unlock()
	}
	os.Exit(128 + int(sig))
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
