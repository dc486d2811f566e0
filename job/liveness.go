package job

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
)

// Liveness: while a job runs, every rank says it is alive in DM, and every
// rank watches the others, so a rank that waits at a phase boundary for a
// peer that is frozen (stopped, swapped out, wedged) learns it within
// PeerTimeout instead of waiting for ever. A slow peer is not a stalled
// one: the heartbeat is a goroutine of its own, which beats as long as the
// process runs, whatever its phase.
//
// The table is one 8-byte word per world rank at the end of every MN's
// pool (heartbeatBytes). A word holds the phase the rank is in (high byte)
// and a count that grows by one per beat. A CN writes its word into every
// MN's table with one WRITE each (no atomics: a WRITE needs no progress
// from the MN), an MN stores its own word in its own pool. A CN watches
// every CN (in MN 0's table) and every MN (each in its own table); an MN
// watches the CNs in its own table. A word that has not changed for
// PeerTimeout names its rank as stalled.

// beat is how often a rank beats and a watcher looks.
const beat = 500 * time.Millisecond

// quietGrace is how much longer than PeerTimeout an MN's table may stay
// silent before it is named. Over shm a CN stopped while it copies into an
// MN's pool holds that pool's lock, and the table stops answering with it:
// the grace lets the stopped CN's own word, which stopped first, be named
// alongside.
const quietGrace = 4 * beat

// lateAfter is how long an MN's table may go unread before its own word
// stops counting: a word that was not read again has not been seen not
// to move (the table of an MN whose pool a stopped CN holds stops
// answering, and the word last read there may be a beat older than the
// stopped CN's own, which must be the one named). A table silent for
// longer than PeerTimeout plus quietGrace names its MN (quiet).
const lateAfter = 3 * beat

// heartbeatBytes is the table's size at the end of each MN pool.
func heartbeatBytes(ranks int) uint64 { return (uint64(8*ranks) + 63) &^ 63 }

// usableBytes is what a pool of size bytes leaves to the store.
func usableBytes(size uint64, ranks int) uint64 { return size - min(size, heartbeatBytes(ranks)) }

// liveness runs one rank's heartbeat and watcher.
type liveness struct {
	w       *spmd.World
	net     verbs.Network
	eps     []verbs.Endpoint // CN: one per MN, so a stalled MN holds up only its own
	timeout time.Duration
	stalled func(msg string)
	name    func(rank int) string // "rank R (role I on HOST)"
	phases  []string              // names by phase index
	phase   atomic.Uint32
	stop    chan struct{}
	once    sync.Once
	done    sync.WaitGroup

	mu    sync.Mutex
	words []uint64    // CN: the newest word of each rank seen in any table
	reply []time.Time // CN: when each MN's table last answered
}

// startLiveness starts the heartbeat and the watcher (timeout > 0). A CN
// passes one endpoint per MN.
func startLiveness(w *spmd.World, net verbs.Network, eps []verbs.Endpoint, timeout time.Duration, phases []string, stalled func(string), name func(int) string) *liveness {
	if name == nil {
		name = func(r int) string {
			role, idx := w.Roles.Of(r)
			return fmt.Sprintf("rank %d (%s %d)", r, role, idx)
		}
	}
	l := &liveness{w: w, net: net, eps: eps, timeout: timeout, stalled: stalled, name: name, phases: phases, stop: make(chan struct{}),
		words: make([]uint64, w.Roles.Size()), reply: make([]time.Time, w.Roles.MN)}
	now := time.Now()
	for m := range l.reply {
		l.reply[m] = now
	}
	if w.Role == spmd.CN {
		for m := range w.Roles.MN {
			l.done.Add(1)
			go l.beatMN(m)
		}
	}
	l.done.Add(1)
	go l.run()
	return l
}

// setPhase records the phase this rank enters (its index in phases).
func (l *liveness) setPhase(i int) {
	if l != nil {
		l.phase.Store(uint32(i))
	}
}

// close stops it all (the job is past its last boundary) and closes the
// endpoints; it may be called more than once.
func (l *liveness) close() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		close(l.stop)
		l.done.Wait()
		for _, ep := range l.eps {
			ep.Close()
		}
	})
}

// table is MN mn's heartbeat table.
func (l *liveness) table(mn int) verbs.Addr {
	size := l.net.PoolSize(mn)
	a, _ := verbs.MakeAddr(mn, size-heartbeatBytes(l.w.Roles.Size()))
	return a
}

// local is this MN's own table, as words.
func (l *liveness) local() []uint64 {
	p := l.net.Pool()
	t := p[uint64(len(p))-heartbeatBytes(l.w.Roles.Size()):]
	return unsafe.Slice((*uint64)(unsafe.Pointer(&t[0])), l.w.Roles.Size())
}

// word is this rank's heartbeat word for beat count.
func (l *liveness) word(count uint64) uint64 {
	return uint64(l.phase.Load())<<56 | count&(1<<56-1)
}

// newer keeps the word with the larger count.
func newer(a, b uint64) uint64 {
	if b&(1<<56-1) > a&(1<<56-1) {
		return b
	}
	return a
}

// beatMN is a CN's heartbeat into MN m's table, and its reading of that
// table (the CNs' words as written there, MN m's own word).
func (l *liveness) beatMN(m int) {
	defer l.done.Done()
	n := l.w.Roles.Size()
	ep, me := l.eps[m], l.w.Rank()
	mine, buf := make([]byte, 8), make([]byte, 8*n)
	tick := time.NewTicker(beat)
	defer tick.Stop()
	for count := uint64(1); ; count++ {
		binary.LittleEndian.PutUint64(mine, l.word(count))
		err := ep.Write(l.table(m).Add(uint64(8*me)), mine)
		if err == nil {
			err = ep.Read(buf, l.table(m))
		}
		if err == nil {
			err = ep.Flush()
		}
		if err != nil { // the fabric's timeout: MN m does not answer
			return
		}
		l.mu.Lock()
		l.reply[m] = time.Now()
		for r := range n {
			w := binary.LittleEndian.Uint64(buf[8*r:])
			if role, idx := l.w.Roles.Of(r); role == spmd.CN || idx == m {
				l.words[r] = newer(l.words[r], w)
			}
		}
		l.mu.Unlock()
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
	}
}

// run beats (an MN, into its own table) and watches.
func (l *liveness) run() {
	defer l.done.Done()
	n := l.w.Roles.Size()
	me := l.w.Rank()
	last := make([]uint64, n)
	seen := make([]time.Time, n)
	now := time.Now()
	for r := range seen {
		seen[r] = now
	}
	view := make([]uint64, n)
	late := make([]bool, l.w.Roles.MN) // CN: MNs whose table has not answered the last beats
	tick := time.NewTicker(beat)
	defer tick.Stop()
	prev := now
	for count := uint64(1); ; count++ {
		if gap := time.Since(prev); gap > 4*beat {
			// This rank was frozen itself (stopped, then continued):
			// what it saw is stale, not the others' fault.
			now := time.Now()
			for r := range seen {
				seen[r] = now
			}
			l.mu.Lock()
			for m := range l.reply {
				l.reply[m] = now
			}
			l.mu.Unlock()
		}
		prev = time.Now()
		var quiet []int            // MNs whose table has not answered
		var silent []time.Duration // for how long
		if l.w.Role == spmd.MN {
			t := l.local()
			atomic.StoreUint64(&t[me], l.word(count))
			for r := range view {
				view[r] = atomic.LoadUint64(&t[r])
			}
		} else {
			l.mu.Lock()
			copy(view, l.words)
			for m, at := range l.reply {
				d := time.Since(at)
				if d > l.timeout+quietGrace {
					quiet, silent = append(quiet, m), append(silent, d)
				}
				late[m] = d > lateAfter
			}
			l.mu.Unlock()
		}
		now := time.Now()
		var out []string
		for r, v := range view {
			role, idx := l.w.Roles.Of(r)
			if r == me || !l.watches(r) || (l.w.Role == spmd.CN && role == spmd.MN && (len(quiet) > 0 || late[idx])) {
				continue
			}
			if v != last[r] {
				last[r], seen[r] = v, now
				continue
			}
			if d := now.Sub(seen[r]); d > l.timeout {
				out = append(out, fmt.Sprintf("%s has not moved for %.0fs, last seen %s", l.name(r), d.Seconds(), l.phaseName(v>>56)))
			}
		}
		for i, m := range quiet {
			r := l.w.Roles.RankOf(spmd.MN, m)
			out = append(out, fmt.Sprintf("%s has not answered for %.0fs, last seen %s", l.name(r), silent[i].Seconds(), l.phaseName(view[r]>>56)))
		}
		if len(out) > 0 {
			l.stalled("peers stalled: " + strings.Join(out, "; ") + fmt.Sprintf(" (--peer-timeout %v)", l.timeout))
			return
		}
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
	}
}

// watches says whether this rank can see rank r's word: a CN sees every
// rank, an MN the CNs (their words are in its table).
func (l *liveness) watches(r int) bool {
	if l.w.Role == spmd.CN {
		return true
	}
	role, _ := l.w.Roles.Of(r)
	return role == spmd.CN
}

func (l *liveness) phaseName(i uint64) string {
	if int(i) < len(l.phases) {
		return l.phases[i]
	}
	return "starting"
}
