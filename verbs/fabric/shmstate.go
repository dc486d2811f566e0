package fabric

// #include <stdlib.h>
// #include "dmgfab.h"
import "C"

import (
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/pkg/errors"
)

// What an shm region's head says of its queues, for errors and notes. A
// timed-out operation to an shm MN is one of: behind a lock that does
// not move (the lock taken at every look, commands queued), not taken
// by an MN whose progress is stopped (the lock free, commands queued),
// answered but not read (the MN's queue empty, a response queued to the
// endpoint), or lost (both empty). libfabric 1.17 only (dmgfab.c,
// struct smr_head and smr_tail); read, never taken nor written.
type shmState struct {
	lock, taken, looks int // the lock word; how many of looks found it taken
	signal             int
	credits            uint64 // commands (and inject buffers) senders may still queue
	cmdsTaken          uint64 // commands the owner's progress ever took
	cmds, resps        int64  // queued to the owner: commands, responses (-1: unreadable)
}

// readShmState reads shm region name's state, looking at its lock looks
// times (150 µs apart); false if the region is missing or not laid out
// as libfabric 1.17's.
func readShmState(name string, looks int) (shmState, bool) {
	cs := C.CString(strings.TrimRight(name, "\x00"))
	defer C.free(unsafe.Pointer(cs))
	var s C.dmg_shm_state
	if C.dmg_shm_region_state(cs, C.int(looks), &s) != 0 {
		return shmState{}, false
	}
	return shmState{lock: int(s.lock), taken: int(s.taken), looks: looks, signal: int(s.signal),
		credits: uint64(s.credits), cmdsTaken: uint64(s.cmds_taken), cmds: int64(s.cmds), resps: int64(s.resps)}, true
}

// ShmRegionLocked tells whether the queue lock of the shm endpoint region
// name (in verbs.ShmDir; a pool file's MN address) is taken, by its word
// (glibc: 0 or less). An error if the region is missing or not laid out
// as libfabric 1.17's.
func ShmRegionLocked(name string) (bool, error) {
	s, ok := readShmState(name, 0)
	if !ok {
		return false, errors.Errorf("verbs: %s is not a libfabric 1.17 shm region", name)
	}
	return s.lock <= 0, nil
}

// lockText says whether the lock was taken: at every look, at some, or
// at none.
func (s shmState) lockText() string {
	switch {
	case s.looks == 0 && s.lock <= 0, s.looks > 0 && s.taken == s.looks:
		return fmt.Sprintf("queue lock taken (word %d%s)", s.lock, s.looksText())
	case s.taken > 0:
		return fmt.Sprintf("queue lock busy (word %d%s)", s.lock, s.looksText())
	}
	return fmt.Sprintf("queue lock free (word %d%s)", s.lock, s.looksText())
}

func (s shmState) looksText() string {
	if s.looks == 0 {
		return ""
	}
	return fmt.Sprintf("; taken at %d of %d looks over %d ms", s.taken, s.looks, s.looks*150/1000)
}

// String is the MN side of an error or note: its lock, queue and credits.
func (s shmState) String() string {
	return fmt.Sprintf("%s, %s queued (%d taken so far), %d credits, signal %d",
		s.lockText(), count(s.cmds, "command"), s.cmdsTaken, s.credits, s.signal)
}

// count says "n things", or that n could not be read.
func count(n int64, what string) string {
	switch {
	case n < 0:
		return what + "s unreadable"
	case n == 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// shmStateText says, for an operation to MN mn that timed out on
// endpoint e, what the MN's shm region and e's own show ("" when the
// provider is not shm or a region cannot be read): see shmState.
func (n *Network) shmStateText(mn int, e *endpoint) string {
	if !strings.HasPrefix(n.provider, "shm") || mn < 0 || mn >= len(n.addrs) {
		return ""
	}
	s, ok := readShmState(string(n.addrs[mn].Name), 64)
	if !ok {
		return ""
	}
	out := "; the MN's shm region: " + s.String()
	var name [256]C.char
	if C.dmg_ep_shm_name(e.ep, &name[0], C.size_t(len(name))) == 0 {
		if own, ok := readShmState(C.GoString(&name[0]), 0); ok {
			out += "; this endpoint's: " + count(own.resps, "response") + " unread"
		}
	}
	return out
}

// queueStuckAfter is how long an shm MN's queue may hold commands that
// its progress does not take before the MN says so: a command is taken
// within microseconds of its posting by a progressing MN.
const queueStuckAfter = 3 * time.Second

// queueWatch follows an shm MN's own queue from look to look (the
// reclaim loop's), for its notes: the evidence a timed-out client's
// error cannot give, from the MN's side.
type queueWatch struct {
	taken  uint64    // commands taken at the last look
	since  time.Time // when the queue last moved, or was last empty
	stuck  bool      // said to be stuck, and not since said to move
	primed bool
}

// look takes one look's state at now and returns what to say ("": nothing):
// that commands have waited untaken for queueStuckAfter (once), and that
// the queue moves again after it was said to be stuck.
func (w *queueWatch) look(s shmState, now time.Time) string {
	moved := !w.primed || s.cmdsTaken != w.taken || s.cmds <= 0
	w.taken, w.primed = s.cmdsTaken, true
	if moved {
		was, since := w.stuck, w.since
		w.since, w.stuck = now, false
		if was {
			return fmt.Sprintf("its shm queue moves again after %v", now.Sub(since).Round(time.Millisecond))
		}
		return ""
	}
	if w.stuck || now.Sub(w.since) < queueStuckAfter {
		return ""
	}
	w.stuck = true
	return fmt.Sprintf("%s queued and none taken for %v: %s", count(s.cmds, "command"), now.Sub(w.since).Round(time.Millisecond), s)
}
