package csr

import (
	"encoding/json"
	"slices"

	"github.com/pkg/errors"
)

// A staged read whose routed records outgrow ShareOptions.StageBytes
// routes them in rounds through one region of that size, reused: each
// chunk is cut into R ranges of its vertices (cutRounds, about equal
// records each), and round k carries the records of range k of every
// chunk. The share is windowed, its windows cut within the rounds'
// ranges (roundWindows), and Share.Windows routes each round anew when
// its windows come to be built: every CN takes every round of a sweep of
// the windows together (Stage.Round), generating or reading its range of
// the input once per round. Round 0 is routed by OpenStaged itself, and a
// sweep starts with the round the region holds: sweeps go up and down the
// rounds in turn (0 to R−1, R−1 to 0), so that each routes R−1 of them.

// stageRounds is one CN's rounds: every chunk's ranges, where every CN's
// records for every chunk go in a round's region, and the rounds of the
// sweep under way.
type stageRounds struct {
	s      *staged
	st     Stage
	r      int
	bounds [][]uint32 // chunk o's round k is [bounds[o][k], bounds[o][k+1])
	cur    int        // the round the region holds
	seq    []int      // this sweep's rounds in order, cur first
	next   int        // seq[next] is the next round to route
}

// roundLayout places every CN's records for every chunk in a round's
// region: round k's region holds, chunk by chunk and in each CN by CN,
// rooms[c][o·r+k] records from CN c for chunk o. One round (r = 1) is
// the whole staged read's region.
type roundLayout struct {
	r     int
	rooms [][]uint64 // rooms[c][o·r+k]
	at    [][]uint64 // at[c][o·r+k]: the first of those records
	recs  uint64     // the records of the largest round
}

// layRounds lays out r rounds from every CN's rooms.
func layRounds(rooms [][]uint64, r int) *roundLayout {
	cns := len(rooms)
	l := &roundLayout{r: r, rooms: rooms, at: make([][]uint64, cns)}
	for c := range l.at {
		l.at[c] = make([]uint64, cns*r)
	}
	for k := range r {
		var off uint64
		for o := range cns {
			for c := range cns {
				l.at[c][o*r+k] = off
				off += rooms[c][o*r+k]
			}
		}
		l.recs = max(l.recs, off)
	}
	return l
}

// cutRounds cuts the chunk [lo, hi) into r ranges of about equal
// records (deg per vertex, plus in when not nil), each bound but the
// last a whole number of align vertices from lo: r+1 bounds, lo first
// and hi last (a range may be empty).
func cutRounds(deg, in []uint32, lo, hi uint32, r int, align uint32) []uint32 {
	recs := func(i uint64) uint64 {
		if in != nil {
			return uint64(deg[i]) + uint64(in[i])
		}
		return uint64(deg[i])
	}
	var total uint64
	for i := range deg {
		total += recs(uint64(i))
	}
	bounds := []uint32{lo}
	var sum uint64
	for a := uint64(lo); a < uint64(hi) && len(bounds) < r; {
		b := min(a+uint64(max(align, 1)), uint64(hi))
		for i := a - uint64(lo); i < b-uint64(lo); i++ {
			sum += recs(i)
		}
		a = b
		for len(bounds) < r && a < uint64(hi) && sum*uint64(r) >= total*uint64(len(bounds)) {
			bounds = append(bounds, uint32(a))
		}
	}
	for len(bounds) < r+1 {
		bounds = append(bounds, hi)
	}
	return bounds
}

// roundOf is the round of vertex v of a chunk whose rounds are bounds:
// the last k < r with bounds[k] <= v (the one that holds v, empty
// rounds before it passed over), as owners finds a chunk.
func roundOf(bounds []uint32, v uint64) int { return owners(bounds).of(v) }

// parts is every chunk's rounds in one table, as owners: entry o·r+k is
// chunk o's round k (chunks and their rounds are consecutive ranges).
func (x *stageRounds) parts() owners {
	t := make(owners, 0, len(x.bounds)*x.r+1)
	for _, b := range x.bounds {
		t = append(t, b[:x.r]...)
	}
	return append(t, x.bounds[len(x.bounds)-1][x.r])
}

// roundWindows cuts the share's rounds (bounds, from the share's Lo)
// into windows of so.RowBytes (windows), a round that fits being one
// window: at least one window, empty if the share is.
func roundWindows(deg, in []uint32, bounds []uint32, weighted bool, so ShareOptions) []uint32 {
	lo := bounds[0]
	wins := []uint32{lo}
	for k := range len(bounds) - 1 {
		a, b := bounds[k], bounds[k+1]
		if a == b {
			continue
		}
		var inK []uint32
		if in != nil {
			inK = in[a-lo : b-lo]
		}
		if w := windows(deg[a-lo:b-lo], inK, a, b, weighted, so); w != nil {
			wins = append(wins, w[1:]...)
		} else {
			wins = append(wins, b)
		}
	}
	if len(wins) == 1 {
		wins = append(wins, lo)
	}
	return wins
}

// begin starts a sweep of the windows: its rounds go up from round 0 or
// down from the last, whichever the region holds (the first sweep: up,
// from OpenStaged's), so the sweep routes all but that one again.
func (x *stageRounds) begin() {
	x.seq, x.next = x.seq[:0], 1
	for k := range x.r {
		x.seq = append(x.seq, k)
	}
	if x.cur != 0 {
		slices.Reverse(x.seq)
	}
}

// down reports whether the sweep under way goes down the rounds: its
// windows come in that order.
func (x *stageRounds) down() bool { return x.r > 1 && x.seq[0] != 0 }

// at makes the window [lo, hi) of this CN's chunk readable: it routes
// the sweep's rounds up to the window's, with the other CNs.
func (x *stageRounds) at(lo, hi uint32) error {
	if lo == hi {
		return nil
	}
	want := roundOf(x.bounds[x.s.cn], uint64(lo))
	for x.cur != want {
		if x.next == len(x.seq) {
			return errors.Errorf("csr: %s: round %d of the staged read is not in this sweep", x.s.spec, want)
		}
		if err := x.route(); err != nil {
			return err
		}
	}
	return nil
}

// end ends a sweep: with err nil, it routes the rounds this CN's windows
// did not need, which the others may; else it hands err to the others
// at their next round, if they have one, and returns it.
func (x *stageRounds) end(err error) error {
	if err != nil {
		if x.next < len(x.seq) {
			x.next = len(x.seq)
			_, _ = x.st.Round(err, nil)
		}
		return err
	}
	for x.next < len(x.seq) {
		if err := x.route(); err != nil {
			return err
		}
	}
	return nil
}

// route routes the sweep's next round, once every CN is done reading
// the last. A failure of any CN's is every CN's, and ends the sweep.
func (x *stageRounds) route() error {
	k := x.seq[x.next]
	x.next++
	x.cur = k
	fail := func(err error) error {
		x.next = len(x.seq)
		return err
	}
	if _, err := x.st.Round(nil, nil); err != nil {
		return fail(err)
	}
	sent, err := x.s.route(k)
	var payload []byte
	if err == nil {
		payload, err = json.Marshal(sent)
	}
	all, err := x.st.Round(err, payload)
	if err == nil {
		err = x.s.received(all, k)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}
