package fabric

// #include "dmgfab.h"
import "C"

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dmg-hpc/dmg/verbs"
)

// Taking an shm MN's lock back from a dead client. libfabric 1.17's shm
// provider queues every operation on an MN under a spin lock in the MN's
// own region, and copies a READ or WRITE there on its fast path: a client
// process killed inside (kill -9 of a computing job: 1 in 10 here) leaves
// the lock taken, and the MN's progress and every later client spin on it
// for ever, so that no job, dmg ls nor dmg stop could reach the pool
// again. The lock records no owner, so the MN frees it, as
// pthread_spin_unlock would (dmgfab.c, struct smr_head), and says so, only
// when a look (lockLook) finds all of these:
//   - a process that had reached the MN is dead (its region is still
//     mapped here), and the lock is taken;
//   - the MN, trying the lock as its progress would, spun LockSpin of
//     its own CPU without getting it and without seeing it given back;
//   - the MN's progress thread holds no lock of its own: it is between
//     calls, or has spent CPU spinning in the one call it was in
//     throughout the try.
//
// CPU spent, not time passed, is the evidence. Freeing a live holder's
// lock lets two senders into the MN's queue at once, and a command can be
// lost: a CAS that never completes. On two cores shared with busy compute
// nodes, an MN thread at nice 10 may wait for a core for long, holding
// the lock inside its progress call or in the middle of its own try, and
// time passed (the rule until stop 52) then says "stuck" of a lock that
// moves as soon as the thread runs.
//
// What the dead holder left half done stays so: killed in its copy, or
// before it committed a command, it left the queue as it was; killed
// between the command's commit and its count, one credit of the queue's
// 1024. A live client frozen (SIGSTOP) in the lock is not a dead one: the
// lock stays taken until its job ends and kills it, unless a dead client
// is mapped too (it cannot be told apart from the holder).
//
// launch's TestPoolLeases also uses it to tell a lock freed by its live
// owner soon after a kill from a dead holder's given back.
const LockSpin = 500 * time.Millisecond

// lockStuckAfter is how long the MN's progress may be inside one call
// before its departed clients are kept mapped (progressStuck): a call
// otherwise lasts microseconds.
const lockStuckAfter = time.Second

// lockTryFor bounds one try in time passed: a look that did not spin
// LockSpin of CPU by then decides nothing (the next look tries again).
const lockTryFor = 10 * LockSpin

// progressSpinning is the CPU the MN's progress thread must have spent in
// its one call during a try for that call to count as spinning on the
// lock (its own progress shares the cores with the try).
const progressSpinning = LockSpin / 4

// progressAt says where the MN's progress thread was during a try.
type progressAt int

const (
	progressOut   progressAt = iota // between calls at the try's end: it holds no lock
	progressSame                    // in one and the same call throughout the try
	progressMoved                   // in a call it entered during the try
)

// lockLook is what one look at the MN's region lock found.
type lockLook struct {
	locked       int           // at the end of the try: 1 taken, 0 free, -1 unknown
	dead         int           // dead processes among the clients mapped
	spun         time.Duration // CPU the MN's own try spent without the lock
	released     bool          // the try got the lock or saw it given back
	progress     progressAt    // where the progress thread was
	progressSpun time.Duration // CPU it spent in its call during the try (progressSame)
}

// unlockNeeded is the decision: the lock is to be taken back from a dead
// holder.
func unlockNeeded(l lockLook) bool {
	if l.locked != 1 || l.dead == 0 || l.released || l.spun < LockSpin {
		return false
	}
	return l.progress == progressOut || l.progress == progressSame && l.progressSpun >= progressSpinning
}

// progressStuck tells whether an MN's progress is inside a call long
// enough to suspect a lock: its departed clients are then kept mapped, as
// the evidence of a dead holder.
func progressStuck(inside time.Duration) bool { return inside >= lockStuckAfter/2 }

// unlockDead looks at this MN's region lock, given the clients it maps,
// and frees it if unlockNeeded says so. The progress takes the lock only
// when it has work, so a holder killed in the lock with the queue empty
// blocks the clients alone: the MN's own try of the lock is the evidence
// either way.
func (n *Network) unlockDead(cs []client) {
	var dead []string // their pids
	for _, c := range cs {
		pid, _, _, _ := verbs.ParseRuntimeName(c.name)
		if p := strconv.Itoa(pid); c.dead && !slices.Contains(dead, p) {
			dead = append(dead, p)
		}
	}
	if len(dead) == 0 || C.dmg_mn_locked(n.mn) != 1 {
		return
	}
	l := n.lookAtLock()
	l.dead = len(dead)
	if !unlockNeeded(l) {
		return
	}
	C.dmg_mn_unlock(n.mn)
	if n.cfg.Note != nil {
		n.cfg.Note(fmt.Sprintf("MN %d took its shm queue lock back from a client that died in an operation (pid %s), after spinning %v on it",
			n.w.Index, strings.Join(dead, " or "), l.spun.Round(time.Millisecond)))
	}
}

// lookAtLock tries the lock (dmg_mn_lock_wait) and notes where the
// progress thread was meanwhile.
func (n *Network) lookAtLock() lockLook {
	since0, cpu0 := C.dmg_mn_inside_since(n.mn), C.dmg_mn_progress_cpu(n.mn)
	var released C.int
	spun := C.dmg_mn_lock_wait(n.mn, C.int64_t(LockSpin), C.int64_t(lockTryFor), &released)
	since1, cpu1 := C.dmg_mn_inside_since(n.mn), C.dmg_mn_progress_cpu(n.mn)
	l := lockLook{locked: int(C.dmg_mn_locked(n.mn)), spun: time.Duration(spun), released: released != 0, progress: progressMoved}
	switch {
	case since1 == 0:
		l.progress = progressOut
	case since1 == since0:
		l.progress = progressSame
		if cpu0 >= 0 && cpu1 >= cpu0 {
			l.progressSpun = time.Duration(cpu1 - cpu0)
		}
	}
	return l
}
