package fabric

// #include <stdlib.h>
// #include "dmgfab.h"
import "C"

import (
	"fmt"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/dmg-hpc/dmg/verbs"
)

// Reclaiming departed clients on an shm MN. libfabric 1.17's shm provider
// gives every endpoint that ever sent to an MN a slot in the MN's peer
// map, and maps that endpoint's region (16 MiB of address space, its
// touched pages kept alive), for as long as the MN lives: a slot is freed
// only by fi_av_remove, and an MN never inserted its clients. A serve
// job's MNs live for many jobs, each of whose endpoints takes a slot.
// Past 256 (SMR_MAX_PEERS; about 36 jobs of two CNs) the provider gives
// every newcomer an occupied slot: reads still complete (the CN copies
// them itself), but an atomic's answer goes to another endpoint, and the
// new job's lease CAS never completes. The dead clients' regions also
// held a gigabyte of /dev/shm after 60 jobs.
//
// So an shm MN looks, every reclaimEvery, at the client regions it maps
// (/proc/self/maps): a region whose file was unlinked (its endpoint
// closed) or whose process is gone (verbs.Dead) is forgotten once it has
// been found so on two looks in a row, which leaves its last commands
// time to drain: the MN inserts its name, which returns the slot the
// provider gave it, and removes that address, which frees the slot and
// unmaps the region, between two of its progress's calls.
const reclaimEvery = time.Second

// startReclaim starts the look on an shm MN.
func (n *Network) startReclaim() {
	if n.mn == nil || !strings.HasPrefix(n.provider, "shm") {
		return
	}
	n.unreclaim = make(chan struct{})
	n.reclaimed = make(chan struct{})
	go n.reclaimLoop(n.unreclaim, n.reclaimed)
}

// stopReclaim ends the look and waits for it: before the MN closes.
func (n *Network) stopReclaim() {
	if n.unreclaim == nil {
		return
	}
	close(n.unreclaim)
	<-n.reclaimed
	n.unreclaim = nil
}

func (n *Network) reclaimLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(reclaimEvery)
	defer t.Stop()
	var seen map[string]bool // departed at the last look
	var queue queueWatch
	own := n.ownName()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			continue
		}
		cs := clients(maps, os.Getpid(), verbs.Dead)
		inside := time.Duration(C.dmg_mn_inside(n.mn))
		n.watchQueue(&queue, own, inside)
		n.unlockDead(cs) // unlock.go
		if keepDeparted(inside, int(C.dmg_mn_locked(n.mn))) {
			continue // keep the dead mapped: they tell a dead holder of the lock
		}
		now := map[string]bool{}
		for _, c := range cs {
			if !c.gone && !c.dead {
				continue
			}
			if !seen[c.name] {
				now[c.name] = true
				continue
			}
			cs := C.CString(c.name)
			if C.dmg_mn_forget(n.mn, cs) != 0 {
				now[c.name] = true // the slot stays taken: again at the next look
			}
			C.free(unsafe.Pointer(cs))
		}
		seen = now
	}
}

// keepDeparted says whether a look leaves departed clients mapped: while
// the MN's progress is stuck in a call, or its queue lock (locked: 1
// taken, 0 free, -1 unknown) is taken at the look. A client killed in
// the lock may be forgotten before the MN's progress gets stuck behind
// it (the progress takes the lock only when it has work); forgotten, it
// no longer tells that the lock's holder is dead, and the lock is never
// taken back (TestPoolLeases/holder_killed/shm, 1 run in 4 once a
// killed client was known dead at once, zombie or not). A lock held
// for the microseconds of a live operation postpones the reclaim by a
// look.
func keepDeparted(inside time.Duration, locked int) bool {
	return progressStuck(inside) || locked == 1
}

// client is another process's shm endpoint region that an MN maps.
type client struct {
	name string
	gone bool // its file was deleted: the endpoint closed
	dead bool // its process is gone
}

// clients lists the shm endpoint regions in maps (the text of
// /proc/self/maps) that belong to other processes than self, each once,
// in order of appearance; dead tells whether a region's process is gone.
// Those gone or dead have departed.
func clients(maps []byte, self int, dead func(name string) bool) []client {
	var out []client
	seen := map[string]bool{}
	for _, m := range verbs.MappedRuntime(maps) {
		if m.PID == self || !strings.HasPrefix(m.Rest, "ep") || seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		out = append(out, client{name: m.Name, gone: m.Deleted, dead: dead(m.Name)})
	}
	return out
}

// watchQueue takes one look at this MN's own queue (shmstate.go) and
// says, as a note, when commands wait in it untaken, and when it moves
// again.
func (n *Network) watchQueue(w *queueWatch, own string, inside time.Duration) {
	s, ok := readShmState(own, 0)
	if !ok || n.cfg.Note == nil {
		return
	}
	msg := w.look(s, time.Now())
	if msg == "" {
		return
	}
	where := "between provider calls"
	if inside > 0 {
		where = fmt.Sprintf("inside one provider call for %v", inside.Round(time.Millisecond))
	}
	n.cfg.Note(fmt.Sprintf("MN %d: %s (its progress is %s)", n.w.Index, msg, where))
}
