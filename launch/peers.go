package launch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dmg-hpc/dmg/heartbeat"
)

// Peers on other hosts: a rank cannot ask /proc about them, and before the
// fabric is open no heartbeat in DM covers them. Every launched rank runs
// a UDP beacon (package heartbeat) from the moment the ranks exchange
// where they run to the end of the job. Ranks 0 and 1 beat to, and watch,
// every rank on another host; every other rank beats to and watches ranks
// 0 and 1 (a star of two centres: 2(N-1) datagrams each way per beat, and
// a lost rank 0 is still named, by rank 1). The beacon serves two ends:
//   - with --peer-timeout, a watched peer silent for the timeout ends the
//     job in one line, as the watches of this host (stopped.go) and of DM
//     (job/liveness.go) do;
//   - when the launcher ends the job under the ranks (SIGTERM: it lost a
//     host, or a rank died), the rank that reports it probes the peers
//     it watches and names those gone (their host refused the probe) or
//     unheard (a host cut off, dead, or a frozen process).

// gathered is what each rank tells the others when the job starts.
type gathered struct {
	rankInfo
	Beacon []string `json:"beacon,omitempty"` // heartbeat.Beacon.Addrs
	Token  uint64   `json:"token,omitempty"`  // rank 0's is the job's
}

// beatEvery is the beacon's period: liveness.go's beat.
const beatEvery = 500 * time.Millisecond

// watchedBy lists the ranks that rank me beats to and watches: those on
// other hosts among every rank (me 0 or 1) or ranks 0 and 1.
func watchedBy(me int, all []gathered) []heartbeat.Peer {
	var ps []heartbeat.Peer
	for r, g := range all {
		if r == me || g.Host == all[me].Host || len(g.Beacon) == 0 || (me > 1 && r > 1) {
			continue
		}
		ps = append(ps, heartbeat.Peer{Rank: r, Host: g.Host, Addrs: g.Beacon})
	}
	return ps
}

// startBeacon starts b (nil: none) with the gathered peers.
func (j *Job) startBeacon(b *heartbeat.Beacon, all []gathered) error {
	if b == nil {
		return nil
	}
	me := j.Rank()
	cfg := heartbeat.Config{Self: me, Host: all[me].Host, Token: all[0].Token, Beat: beatEvery}
	if err := b.Start(cfg, nil, watchedBy(me, all)); err != nil {
		b.Close()
		return err
	}
	j.beacon = b
	return nil
}

// newToken is a rank's candidate for the job's token.
func newToken() uint64 { return rand.Uint64() | 1 }

// watchPeers ends the job when a peer on another host is silent for
// timeout: rank 0 says so at once, the others after stallDefer (as
// stalled does).
func (j *Job) watchPeers(timeout time.Duration) {
	j.beacon.Report(timeout, func(s []heartbeat.Silence) {
		names := make([]string, len(s))
		for i, x := range s {
			names[i] = fmt.Sprintf("%s has not been heard from for %s", j.rankName(x.Rank), x.For.Round(100*time.Millisecond))
		}
		j.stalled(fmt.Sprintf("peers stalled: %s, while this rank was %s (--peer-timeout %s)", strings.Join(names, ", "), j.intr.currentPhase(), timeout))
	})
}

// rankName is rank r's name: "rank R (role I on HOST)".
func (j *Job) rankName(r int) string { return j.ranks[r].name() }

// name is "rank R (role I on HOST)", a rank in messages across hosts.
func (p rankInfo) name() string {
	return fmt.Sprintf("rank %d (%s %d on %s)", p.Rank, p.Role, p.Index, p.Host)
}

// probeWait bounds how long a rank that reports the launcher's end of the
// job waits for its peers to answer a probe: within failGrace, while the
// peers the launcher signalled at the same time still answer.
const probeWait = 200 * time.Millisecond

// lostPeers probes the peers b watches and names those gone (dead) and
// those unheard for two beats or more (silent); zeroLost says rank 0 is
// one of them.
func lostPeers(b *heartbeat.Beacon, peers []rankInfo) (dead, silent []string, zeroLost bool) {
	if b.Lagging() > 2*beatEvery {
		// This rank was frozen (stopped, then continued by the launcher
		// to be ended): the peers it finds gone were ended before it.
		return nil, nil, false
	}
	answers := b.Probe(probeWait)
	quiet := map[int]time.Duration{}
	for _, s := range b.Silent(2 * beatEvery) {
		quiet[s.Rank] = s.For
	}
	for r := range peers {
		a, ok := answers[r]
		if !ok {
			continue
		}
		p := peers[r]
		switch {
		case a == heartbeat.Refused:
			dead = append(dead, p.name())
		case a == heartbeat.NoReply && quiet[r] > 0:
			silent = append(silent, fmt.Sprintf("%s has not been heard from for %s (its host cut off or down, or the process frozen)",
				p.name(), quiet[r].Round(100*time.Millisecond)))
		default:
			continue
		}
		zeroLost = zeroLost || r == 0
	}
	return dead, silent, zeroLost
}
