package launch

import (
	"syscall"
	"time"
)

// A failed job under a launcher leaves through world rank 0 alone: the
// other ranks exit 0 once MPI_Finalize has returned, and rank 0 exits
// with the job's code after they are gone. Open MPI's mpirun tears a job
// down at the first non-zero exit: it stops its event loop for a second
// (SIGCONT, then SIGTERM, then SIGKILL of every rank still running), so a
// rank still inside MPI_Finalize's PMIx handshake then waits for an
// answer that never comes and is killed, and mpirun closes that rank's
// socket while its PMIx thread still has a message queued on it, which
// libevent reports as "[warn] Epoll MOD(1) on fd N failed ... Bad file
// descriptor" on the job's stderr (docs/design.md).

// peersExitWait bounds how long rank 0 waits for the other ranks of its
// host to exit before it exits with the job's code.
const peersExitWait = 5 * time.Second

// remoteExitGrace is how long rank 0 leaves ranks on other hosts, whose
// processes it cannot see, to finish MPI_Finalize.
const remoteExitGrace = 500 * time.Millisecond

// waitPeersExit returns once every other rank of the job (not a served
// pool's MN) has exited and been reaped by the launcher, or after limit for those on this host and
// remoteExitGrace for those elsewhere. Nil receiver, or no ranks known:
// it waits failGrace.
func (in *interrupt) waitPeersExit(me int, limit time.Duration) {
	var host string
	var peers []rankInfo
	if in != nil {
		in.state.Lock()
		host, peers = in.host, in.peers
		in.state.Unlock()
	}
	var local []int
	remote := false
	for _, p := range peers {
		switch {
		case p.Rank < 0 || p.Rank == me:
		case p.Host == host && p.PID > 0:
			local = append(local, p.PID)
		default:
			remote = true
		}
	}
	if len(peers) == 0 {
		time.Sleep(failGrace)
		return
	}
	start := time.Now()
	for len(local) > 0 && time.Since(start) < limit {
		live := local[:0]
		for _, pid := range local {
			// Reaped, not merely a zombie: mpirun reaps its ranks in
			// the event loop its teardown would block.
			if syscall.Kill(pid, 0) != syscall.ESRCH {
				live = append(live, pid)
			}
		}
		local = live
		if len(local) > 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if remote {
		time.Sleep(max(0, remoteExitGrace-time.Since(start)))
	}
}
