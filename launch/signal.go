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
	peers   []peer // every rank's host and pid, once the world is up
	host    string
}

// peer is where a rank runs.
type peer struct {
	rank int
	role string
	host string
	pid  int
}

func newInterrupt(stderr io.Writer, mu *sync.Mutex, start time.Time, print bool) *interrupt {
	in := &interrupt{stderr: stderr, mu: mu, start: start, print: print, phase: "starting", sigs: make(chan os.Signal, 1)}
	signal.Notify(in.sigs, syscall.SIGINT, syscall.SIGTERM)
	go in.wait()
	return in
}

// setPeers records where every rank runs (world rank 0 asks on a signal).
func (in *interrupt) setPeers(host string, peers []peer) {
	in.state.Lock()
	in.host, in.peers = host, peers
	in.state.Unlock()
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
	phase, outs, written, peers, host := in.phase, in.outputs, in.written, in.peers, in.host
	in.state.Unlock()
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
		var dead []string
		for _, p := range peers {
			if p.host == host && p.pid > 0 && syscall.Kill(p.pid, 0) == syscall.ESRCH {
				dead = append(dead, fmt.Sprintf("rank %d (%s, pid %d on %s)", p.rank, p.role, p.pid, p.host))
			}
		}
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
