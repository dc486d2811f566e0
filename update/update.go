package update

import (
	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

// ErrBagOverflow is what a direct update of a Multiset kernel's candidate
// returns: no word holds a multiset, so its candidates for another chunk
// travel only in mailboxes, which the engine sizes to hold them all.
var ErrBagOverflow = errors.New("update: a multiset kernel's candidates overflowed a mailbox, and none can go by direct update")

// Stats counts update candidates by the path they took, and the traffic
// of the redistribution.
type Stats struct {
	Local      uint64 `json:"local"`       // applied to the own chunk's cache (pushed or pulled)
	Direct     uint64 `json:"direct"`      // remote CAS on the destination's inbox word
	ValRD      uint64 `json:"valrd"`       // pairs sent by value (after pre-combining)
	RefRD      uint64 `json:"refrd"`       // edges sent by reference (segments not fetched)
	RefItems   uint64 `json:"refrd_items"` // RefRD items (segments)
	RDBytes    uint64 `json:"rd_bytes"`    // bytes written to mailboxes
	Flushes    uint64 `json:"mailbox_flushes"`
	Spills     uint64 `json:"spills"`       // records that did not fit a mailbox and went direct
	MNApplied  uint64 `json:"mn_applied"`   // ValRD pairs applied by memory nodes
	RefPulled  uint64 `json:"refrd_pulled"` // RefRD edges applied by the owner's puller while the push ran
	Combined   uint64 `json:"combined"`     // candidates merged into an earlier one before sending
	Candidates uint64 `json:"candidates"`   // every candidate produced by an edge
	Pulled     uint64 `json:"pulled"`       // local candidates gathered by the destination's owner (pull)
	Logged     uint64 `json:"logged"`       // first-touched remote vertices written to a touched log
	Pruned     uint64 `json:"pruned"`       // candidates of monotone kernels dropped as not below the current value
}

// NumStats is the number of counters (Put, StatsFrom).
const NumStats = 15

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	a, b := s.fields(), o.fields()
	for i := range a {
		*a[i] += *b[i]
	}
}

func (s *Stats) fields() [NumStats]*uint64 {
	return [NumStats]*uint64{&s.Local, &s.Direct, &s.ValRD, &s.RefRD, &s.RefItems, &s.RDBytes, &s.Flushes,
		&s.Spills, &s.MNApplied, &s.RefPulled, &s.Combined, &s.Candidates, &s.Pulled, &s.Logged, &s.Pruned}
}

// Put writes s into v[:NumStats] as float64 (exact below 2^53), for the
// engine's fused all-reduce.
func (s Stats) Put(v []float64) {
	for i, f := range s.fields() {
		v[i] = float64(*f)
	}
}

// StatsFrom is the inverse of Put.
func StatsFrom(v []float64) Stats {
	var s Stats
	for i, f := range s.fields() {
		*f = uint64(v[i])
	}
	return s
}

// Sub is s − o.
func (s Stats) Sub(o Stats) Stats {
	a, b := s.fields(), o.fields()
	var out Stats
	c := out.fields()
	for i := range a {
		*c[i] = *a[i] - *b[i]
	}
	return out
}

// Targets is how updates find a vertex's place on DM: its chunk and its
// inbox word (package rank's Store).
type Targets interface {
	ChunkOf(v uint32) int
	InboxAddr(v uint32) verbs.Addr
	ValueAddr(v uint32) verbs.Addr
}
