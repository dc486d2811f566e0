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
//
// Records are routed to their window, not only to their chunk and round:
// every CN tells the others its chunk's windows (stageParts) before any
// record moves, and a round's region holds each window's records apart
// (a part each: a window, or a chunk built whole), so that building a
// window reads its own records, not its round's. Before, at kron:26 each
// of a CN's 13 windows read the 2.8 GB of its round, and the filter and
// decoding took an eighth of a CN's CPU, the copies aside (the load went
// 587 → 463 s).

// stageParts is what a CN tells the others of its chunk before its
// edges are routed: the bounds of its rounds, and of its parts, the
// windows its rows are built in (one part when they are built whole),
// each within one round.
type stageParts struct {
	Rounds []uint32 // R+1 bounds, the chunk's first vertex first
	Parts  []uint32 // the parts' bounds, from Rounds[0] to Rounds[R]
}

// partTable numbers every chunk's parts, chunk by chunk: part g is
// [bounds[g], bounds[g+1]) (chunks and their parts are consecutive
// ranges, so bounds is an owners table), chunk chunk[g]'s, and routed in
// round round[g].
type partTable struct {
	bounds owners
	first  []int // chunk o's parts are [first[o], first[o+1])
	chunk  []int
	round  []int
}

// tableOf numbers the parts every CN told (decodeParts checked them).
func tableOf(all []stageParts) partTable {
	t := partTable{first: []int{0}}
	for o, sp := range all {
		for j := range len(sp.Parts) - 1 {
			t.bounds = append(t.bounds, sp.Parts[j])
			t.chunk = append(t.chunk, o)
			t.round = append(t.round, roundOf(sp.Rounds, uint64(sp.Parts[j])))
		}
		t.first = append(t.first, len(t.chunk))
	}
	if len(all) > 0 {
		last := all[len(all)-1].Parts
		t.bounds = append(t.bounds, last[len(last)-1])
	}
	return t
}

// decodeParts decodes every CN's stageParts, each of r rounds, its parts
// within them.
func decodeParts(all [][]byte, r int) ([]stageParts, error) {
	sps, err := decodeAll[stageParts](all, "parts")
	if err != nil {
		return nil, err
	}
	for o, sp := range sps {
		rb, pb := sp.Rounds, sp.Parts
		ok := len(rb) == r+1 && slices.IsSorted(rb) && len(pb) >= 2 && slices.IsSorted(pb) && pb[0] == rb[0] && pb[len(pb)-1] == rb[r]
		for j := 0; ok && j+1 < len(pb); j++ {
			if pb[j] < pb[j+1] { // a part lies within one round
				k := roundOf(rb, uint64(pb[j]))
				ok = pb[j+1] <= rb[k+1]
			}
		}
		if !ok {
			return nil, errors.Errorf("csr: CN %d's parts %v do not cut its %d rounds %v", o, pb, r, rb)
		}
	}
	return sps, nil
}

// stageRounds is one CN's rounds: its chunk's rounds and parts, every
// chunk's parts, where every CN's records for every part go in a
// round's region, and the rounds of the sweep under way.
type stageRounds struct {
	s     *staged
	st    Stage
	r     int
	own   stageParts // this CN's chunk's
	table partTable
	cur   int   // the round the region holds
	seq   []int // this sweep's rounds in order, cur first
	next  int   // seq[next] is the next round to route
}

// roundLayout places every CN's records for every part in a round's
// region: round k's region holds, part by part (chunk by chunk) and in
// each CN by CN, rooms[c][g] records from CN c for part g of round k.
// One round (r = 1) is the whole staged read's region.
type roundLayout struct {
	r     int
	rooms [][]uint64 // rooms[c][g]
	at    [][]uint64 // at[c][g]: the first of those records
	recs  uint64     // the records of the largest round
}

// layRounds lays out r rounds from every CN's rooms, part g being routed
// in round round[g].
func layRounds(rooms [][]uint64, round []int, r int) *roundLayout {
	cns := len(rooms)
	l := &roundLayout{r: r, rooms: rooms, at: make([][]uint64, cns)}
	for c := range l.at {
		l.at[c] = make([]uint64, len(round))
	}
	for k := range r {
		var off uint64
		for g, kg := range round {
			if kg != k {
				continue
			}
			for c := range cns {
				l.at[c][g] = off
				off += rooms[c][g]
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

// roundWindows cuts the share's rounds (bounds, from the share's Lo)
// into windows of so.RowBytes, or so.WindowBytes if smaller (windows), a
// round that fits being one window: at least one window, empty if the
// share is.
func roundWindows(deg, in []uint32, bounds []uint32, weighted bool, so ShareOptions) []uint32 {
	so.RowBytes = so.cut()
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
// the sweep's rounds up to the window's, with the other CNs, and points
// the pass at the window's records.
func (x *stageRounds) at(lo, hi uint32) error {
	if lo == hi {
		x.s.runs = [][2]uint64{} // nothing to read
		return nil
	}
	want := roundOf(x.own.Rounds, uint64(lo))
	for x.cur != want {
		if x.next == len(x.seq) {
			return errors.Errorf("csr: %s: round %d of the staged read is not in this sweep", x.s.spec, want)
		}
		if err := x.route(); err != nil {
			return err
		}
	}
	return x.s.window(lo, hi)
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
