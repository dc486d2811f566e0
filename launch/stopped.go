package launch

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dmg-hpc/dmg/verbs"
)

// stoppedWatch is the liveness watch of the phases before the fabric is
// up, while the graph is read and laid out (job/liveness.go's heartbeats
// in DM take over once the memory nodes' pools are open). Every second it
// reads from /proc the state of the other ranks on this host; one that
// has been stopped (SIGSTOP, a debugger, job control) for the peer timeout
// ends the job with one line naming it, printed by the lowest rank on the
// host that is still running (the others see it too, and leave it to it).
// A rank that deferred to a lower one and then sees it gone (it aborted
// the job, and mpirun has not yet taken this one) waits stallDefer before
// it speaks, as the heartbeats' watchers do. Ranks that are merely slow, as
// they are for minutes while a large graph is read, never trip it. A peer
// on another host, or one that hangs without being stopped, is not seen
// before the fabric is up.
type stoppedWatch struct {
	j       *Job
	timeout time.Duration
	quit    chan struct{}
	once    sync.Once

	mu    sync.Mutex
	phase string
}

// lastWatchedPhase is the phase from which the heartbeats watch.
const lastWatchedPhase = "loading the memory nodes"

// watchStopped starts the watch (under a launcher, with a timeout).
func (j *Job) watchStopped(timeout time.Duration) *stoppedWatch {
	s := &stoppedWatch{j: j, timeout: timeout, quit: make(chan struct{}), phase: "starting"}
	go s.run()
	return s
}

// setPhase records the phase this rank starts (job.Config.Phase); the
// watch ends when the heartbeats have taken over.
func (s *stoppedWatch) setPhase(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.phase = name
	s.mu.Unlock()
	if name == lastWatchedPhase {
		s.close()
	}
}

func (s *stoppedWatch) close() {
	if s != nil {
		s.once.Do(func() { close(s.quit) })
	}
}

func (s *stoppedWatch) run() {
	tick := time.NewTicker(min(time.Second, max(s.timeout/4, 100*time.Millisecond)))
	defer tick.Stop()
	me := s.j.Rank()
	host := s.j.ranks[me].Host
	since := make(map[int]time.Time)
	deferred := false // a lower rank was running when this one saw the stall
	for {
		select {
		case <-s.quit:
			return
		case now := <-tick.C:
			var names []string
			lowest := true // no lower rank on this host is running: this one says it
			for _, p := range s.j.ranks {
				if p.Rank == me || p.Host != host || p.PID <= 0 || !stopped(p.PID) {
					if p.Rank < me && p.Host == host && p.PID > 0 && !gone(p.PID) {
						lowest = false
					}
					delete(since, p.Rank)
					continue
				}
				t0, ok := since[p.Rank]
				if !ok {
					since[p.Rank] = now
					continue
				}
				if d := now.Sub(t0); d >= s.timeout {
					names = append(names, fmt.Sprintf("rank %d (%s %d, pid %d on %s) has been stopped for %s", p.Rank, p.Role, p.Index, p.PID, p.Host, d.Round(time.Second)))
				}
			}
			if len(names) > 0 && !lowest {
				deferred = true
			}
			if len(names) > 0 && lowest {
				s.mu.Lock()
				phase := s.phase
				s.mu.Unlock()
				var delay time.Duration
				if deferred {
					delay = stallDefer + time.Duration(me)*100*time.Millisecond
				}
				s.j.endStalled(fmt.Sprintf("peers stalled: %s, while this rank was %s (--peer-timeout %s)", strings.Join(names, ", "), phase, s.timeout), delay)
				return
			}
		}
	}
}

// stopped says a process is stopped: state T (by a signal) or t (traced)
// in /proc/PID/stat.
func stopped(pid int) bool {
	st, err := verbs.ReadProcStat(pid)
	return err == nil && (st.State == 'T' || st.State == 't')
}
