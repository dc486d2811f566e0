package verbs

import (
	"sync/atomic"
)

// Counters is what an endpoint (or a job, summed) has done on the fabric.
// All fields are totals since the endpoint was created; subtract two
// snapshots for a phase or an iteration.
type Counters struct {
	Reads        uint64 `json:"reads"`
	Writes       uint64 `json:"writes"`
	CAS          uint64 `json:"cas"`
	FAA          uint64 `json:"faa"`
	BytesRead    uint64 `json:"bytes_read"`    // READ payload
	BytesWritten uint64 `json:"bytes_written"` // WRITE payload
	// Doorbells counts doorbell batches: one per MN touched by a Flush.
	Doorbells uint64 `json:"doorbells"`
	// RoundTrips counts dependent waits: Flushes that had work.
	RoundTrips uint64 `json:"round_trips"`
}

// Ops is the number of operations of every kind.
func (c Counters) Ops() uint64 { return c.Reads + c.Writes + c.CAS + c.FAA }

// Atomics is CAS + FAA.
func (c Counters) Atomics() uint64 { return c.CAS + c.FAA }

// Bytes is the payload moved, atomics counted as 8 bytes each.
func (c Counters) Bytes() uint64 { return c.BytesRead + c.BytesWritten + 8*c.Atomics() }

// Add adds o to c field by field.
func (c *Counters) Add(o Counters) {
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.CAS += o.CAS
	c.FAA += o.FAA
	c.BytesRead += o.BytesRead
	c.BytesWritten += o.BytesWritten
	c.Doorbells += o.Doorbells
	c.RoundTrips += o.RoundTrips
}

// Sub returns c - o field by field (for deltas between two snapshots).
func (c Counters) Sub(o Counters) Counters {
	return Counters{
		Reads: c.Reads - o.Reads, Writes: c.Writes - o.Writes, CAS: c.CAS - o.CAS, FAA: c.FAA - o.FAA,
		BytesRead: c.BytesRead - o.BytesRead, BytesWritten: c.BytesWritten - o.BytesWritten,
		Doorbells: c.Doorbells - o.Doorbells, RoundTrips: c.RoundTrips - o.RoundTrips,
	}
}

// NumCounterFields is the length of Int64s, for all-reductions.
const NumCounterFields = 8

// Int64s flattens c for spmd.Comm.AllReduceInt64 (job totals).
func (c Counters) Int64s() []int64 {
	return []int64{int64(c.Reads), int64(c.Writes), int64(c.CAS), int64(c.FAA),
		int64(c.BytesRead), int64(c.BytesWritten), int64(c.Doorbells), int64(c.RoundTrips)}
}

// CountersFromInt64s is the inverse of Int64s; it reads the first
// NumCounterFields values of v (missing ones are zero).
func CountersFromInt64s(v []int64) Counters {
	var f [NumCounterFields]uint64
	for i := range f {
		if i < len(v) {
			f[i] = uint64(v[i])
		}
	}
	return Counters{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]}
}

// Tally accumulates Counters for one endpoint, split by MN. The owner
// goroutine adds a whole batch with AddBatch; any goroutine may read. It is
// for backends; engines use Endpoint.Counters.
type Tally struct {
	perMN []tallyMN
	rt    atomic.Uint64 // flushes with work
}

type tallyMN struct {
	f [NumCounterFields]atomic.Uint64
	_ [64 - (NumCounterFields*8)%64]byte
}

// NewTally makes a Tally for numMN memory nodes.
func NewTally(numMN int) *Tally { return &Tally{perMN: make([]tallyMN, numMN)} }

// AddBatch adds one flushed batch: batch[mn] holds its operations per MN
// (Doorbells and RoundTrips in batch are ignored); every MN with at least
// one operation gets one doorbell and one round trip. batch is left as is.
func (t *Tally) AddBatch(batch []Counters) {
	touched := false
	for mn := range batch {
		b := &batch[mn]
		if b.Ops() == 0 {
			continue
		}
		p := &t.perMN[mn].f
		add := func(i int, v uint64) {
			if v != 0 {
				p[i].Add(v)
			}
		}
		add(0, b.Reads)
		add(1, b.Writes)
		add(2, b.CAS)
		add(3, b.FAA)
		add(4, b.BytesRead)
		add(5, b.BytesWritten)
		p[6].Add(1)
		p[7].Add(1)
		touched = true
	}
	if touched {
		t.rt.Add(1)
	}
}

// ByMN returns the counts per MN.
func (t *Tally) ByMN() []Counters {
	out := make([]Counters, len(t.perMN))
	t.Into(out)
	return out
}

// Total returns the totals; a flush touching several MNs is one round trip.
func (t *Tally) Total() Counters { return t.Into(nil) }

// Into writes the counts per MN into perMN (as many as it holds, nil for
// none) and returns the totals, without allocating.
func (t *Tally) Into(perMN []Counters) Counters {
	var total Counters
	for mn := range t.perMN {
		p := &t.perMN[mn].f
		c := Counters{p[0].Load(), p[1].Load(), p[2].Load(), p[3].Load(), p[4].Load(), p[5].Load(), p[6].Load(), p[7].Load()}
		if mn < len(perMN) {
			perMN[mn] = c
		}
		total.Add(c)
	}
	total.RoundTrips = t.rt.Load()
	return total
}

// CountersInto is an optional ability of an Endpoint: its counts per MN
// written into perMN and its totals, without allocating (the engine reads
// them at every iteration boundary).
type CountersInto interface {
	CountersInto(perMN []Counters) Counters
}

// ReadCounters is ep's totals and, in perMN, its counts per MN; it
// allocates only for endpoints without CountersInto.
func ReadCounters(ep Endpoint, perMN []Counters) Counters {
	if ci, ok := ep.(CountersInto); ok {
		return ci.CountersInto(perMN)
	}
	copy(perMN, ep.CountersByMN())
	return ep.Counters()
}
