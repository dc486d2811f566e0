package fabric

// #include <stdlib.h>
// #include "dmgfab.h"
import "C"

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// Taking an shm MN's lock back from a dead client. libfabric 1.17's shm
// provider queues every operation on an MN under a spin lock in the MN's
// own region, and copies a READ or WRITE there on its fast path: a client
// process killed inside (kill -9 of a computing job: 1 in 10 here) leaves
// the lock taken, and the MN's progress and every later client spin on it
// for ever, so that no job, dmg ls nor dmg stop could reach the pool
// again. The lock records no owner, but the MN can tell that case from any
// other: its progress has been inside one provider call, or its own try
// of the lock has spun, for lockStuckAfter, where a call or a try
// otherwise lasts microseconds; the lock is
// taken; and a process that had reached the MN is dead (its region is
// still mapped here). The MN then frees the lock, as pthread_spin_unlock
// would (dmgfab.c, struct smr_head), and says so.
//
// What the dead holder left half done stays so: killed in its copy, or
// before it committed a command, it left the queue as it was; killed
// between the command's commit and its count, one credit of the queue's
// 1024. A live client frozen (SIGSTOP) in the lock is not a dead one: the
// lock stays taken until its job ends and kills it.
const lockStuckAfter = time.Second

// unlockNeeded is the decision: progress has been inside one provider
// call for inside, the region's lock is locked (1; 0 free, -1 unknown),
// and dead clients are mapped.
func unlockNeeded(inside time.Duration, locked, dead int) bool {
	return inside >= lockStuckAfter && locked == 1 && dead > 0
}

// progressStuck tells whether an MN's progress is inside a call long
// enough to suspect a lock: its departed clients are then kept mapped, as
// the evidence of a dead holder.
func progressStuck(inside time.Duration) bool { return inside >= lockStuckAfter/2 }

// unlockDead frees this MN's region lock if unlockNeeded says so, given
// how long its progress has been inside one call and the clients it maps.
// The progress takes the lock only when it has work, so a holder killed
// in the lock with the queue empty blocks the clients alone: when a dead
// client is mapped and the lock is taken, the MN tries the lock itself
// for lockStuckAfter, as its progress would, and that try is the
// evidence instead.
func (n *Network) unlockDead(inside time.Duration, cs []client) {
	var dead []string // their pids
	for _, c := range cs {
		pid, _, _, _ := verbs.ParseRuntimeName(c.name)
		if p := strconv.Itoa(pid); c.dead && !slices.Contains(dead, p) {
			dead = append(dead, p)
		}
	}
	locked := int(C.dmg_mn_locked(n.mn))
	if len(dead) == 0 || locked != 1 {
		return
	}
	if !progressStuck(inside) {
		inside = max(inside, time.Duration(C.dmg_mn_lock_wait(n.mn, C.int64_t(lockStuckAfter))))
	}
	if !unlockNeeded(inside, int(C.dmg_mn_locked(n.mn)), len(dead)) {
		return
	}
	C.dmg_mn_unlock(n.mn)
	if n.cfg.Note != nil {
		n.cfg.Note(fmt.Sprintf("MN %d took its shm queue lock back from a client that died in an operation (pid %s), after %v",
			n.w.Index, strings.Join(dead, " or "), inside.Round(time.Millisecond)))
	}
}

// ShmRegionLocked tells whether the queue lock of the shm endpoint region
// name (in verbs.ShmDir; a pool file's MN address) is taken. An error if
// the region is missing or not laid out as libfabric 1.17's.
func ShmRegionLocked(name string) (bool, error) {
	cs := C.CString(strings.TrimRight(name, "\x00"))
	defer C.free(unsafe.Pointer(cs))
	switch C.dmg_shm_region_locked(cs) {
	case 1:
		return true, nil
	case 0:
		return false, nil
	}
	return false, errors.Errorf("verbs: %s is not a libfabric 1.17 shm region", name)
}
