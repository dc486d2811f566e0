package verbs

import (
	"time"

	"github.com/pkg/errors"
)

// Endpoint is one queue-pair set from a CN worker to every MN: the data path
// of one worker goroutine. Operations are queued by Read and Write (and, on
// backends that have them, by the Atomics methods) and executed by Flush,
// which rings one doorbell per MN touched and waits once for every
// completion — one dependent round trip.
//
// Rules shared by every backend (checked by package verbstest):
//
//   - An Endpoint is used by one goroutine at a time; Counters may be called
//     from any goroutine.
//   - Every operation's address range is checked when it is queued: an
//     unknown MN or offset+len past that MN's pool returns a *RangeError and
//     queues nothing. Atomics need an 8-byte-aligned address (*RangeError
//     otherwise, too).
//   - Write copies src when it is called; src may be reused at once.
//   - Read's dst and the atomics' prev must stay valid, and must not be read
//     or written by the caller, until Flush returns; they hold the results
//     once Flush returns nil.
//   - Operations of one batch may execute in any order and concurrently;
//     a batch that reads what it writes, or writes one location twice, has
//     an undefined outcome. Separate dependent operations by a Flush.
//   - Zero-length reads and writes are checked like any other but neither
//     posted nor counted.
//   - Flush with nothing queued returns nil at once and counts nothing.
//   - If Flush fails, the batch is gone: some of its operations may have
//     executed, and results in dst/prev are undefined.
type Endpoint interface {
	// Read queues a READ of len(dst) bytes at src into dst.
	Read(dst []byte, src Addr) error
	// Write queues a WRITE of src to len(src) bytes at dst.
	Write(dst Addr, src []byte) error
	// Flush posts every queued operation (one doorbell per MN: FI_MORE on
	// all but the last operation to that MN), waits for all completions
	// and returns the first error. It fails, naming the MN's rank, when a
	// completion does not arrive within Config.Timeout.
	Flush() error
	// Pending is the number of operations queued since the last Flush.
	Pending() int
	// Counters returns what this endpoint has done so far (totals).
	Counters() Counters
	// CountersByMN returns the same counts split by MN (index = MN id);
	// RoundTrips there counts the flushes that touched that MN.
	CountersByMN() []Counters
	// Close releases the endpoint. Queued operations are discarded.
	Close() error
}

// Atomics are the 8-byte remote atomics. Every backend of this module
// implements them on its Endpoint; find them with a type assertion
// (ep.(verbs.Atomics)) so a backend without atomics remains an Endpoint.
//
// Both are queued like Read and Write and complete at Flush, when *prev
// holds the word's value before the operation. They are atomic with respect
// to every other atomic on the same word from any endpoint; a[:8] must be
// 8-byte aligned within the pool.
type Atomics interface {
	// CAS64 queues a compare-and-swap: if the word at a equals old it
	// becomes new. *prev receives the previous value (success iff
	// *prev == old).
	CAS64(a Addr, old, new uint64, prev *uint64) error
	// FAA64 queues a fetch-and-add of delta (wrapping) to the word at a.
	// *prev receives the previous value; prev may be nil.
	FAA64(a Addr, delta uint64, prev *uint64) error
}

// Halter is an optional ability of a Network: a process about to end
// stops its traffic for good, so that what outlives it (a served pool)
// is left in a state others can use.
type Halter interface {
	// Halt makes every endpoint but keep fail its next operations, and
	// returns once none of them is inside the provider; a later Halt
	// with fewer kept stops those too.
	Halt(keep ...Endpoint)
}

// BufferAllocator is an optional ability of an Endpoint: buffers that the
// backend can use for Read and Write without staging copies (registered
// memory on the fabric backend). They are ordinary []byte to the caller and
// stay valid until FreeBuffer or until the Endpoint is closed. A Write
// from such a buffer reads it at Flush, not when it is queued: the caller
// must leave it alone until then, as a Read's dst.
type BufferAllocator interface {
	AllocBuffer(n int) ([]byte, error)
	FreeBuffer(b []byte) error
}

// Network is one rank's handle on the job's data path, opened collectively
// by every rank of an *spmd.World (memfab.Open, fabric.Open).
//
// On an MN it holds the rank's registered pool and keeps the fabric
// progressing until Close; Pool exposes the pool for local access (MNs apply
// some updates themselves). On a CN it creates endpoints, one per worker.
// Every rank knows every MN's pool size.
type Network interface {
	// NumMN is the number of memory nodes; MN ids are 0..NumMN-1.
	NumMN() int
	// PoolSize is the size in bytes of MN mn's pool (0 if mn is unknown).
	PoolSize(mn int) uint64
	// Check returns a *RangeError unless [a, a+n) lies in a pool.
	Check(a Addr, n int) error
	// Pool is this MN's own pool memory (nil on a CN). Local accesses that
	// race with remote operations on the same bytes are the caller's
	// responsibility: separate them with barriers.
	Pool() []byte
	// NewEndpoint creates an endpoint to every MN (CN only; an error on an
	// MN). Endpoints are closed by Close if the caller has not.
	NewEndpoint() (Endpoint, error)
	// Provider names the backend and provider ("memfab", "fabric/shm", ...).
	Provider() string
	// Close tears the network down. It is collective over the world: an MN
	// keeps serving until every CN has closed.
	Close() error
}

// PoolAddr is what a CN needs to reach one MN's pool: its size, the
// remote address of its offset 0 as the provider expects it (0 unless the
// provider addresses pools virtually), its memory key and its endpoint's
// fabric address. A serve job publishes one per MN (package pool).
type PoolAddr struct {
	Size, Base, Key uint64
	Name            []byte
}

// DefaultTimeout is how long Flush waits for completions by default.
const DefaultTimeout = 10 * time.Second

// Config configures a Network; the zero value plus PoolBytes on MNs works.
type Config struct {
	// PoolBytes is the size of this MN's pool (ignored on CNs). It is
	// rounded up to a multiple of 8. Zero is allowed (a pool nothing can
	// address).
	PoolBytes uint64
	// Timeout bounds every wait for completions and for collective set-up
	// steps that involve a peer; 0 means DefaultTimeout.
	Timeout time.Duration
	// Provider is the libfabric provider for the fabric backend ("shm",
	// "tcp", "verbs", ...); "" picks shm when every rank shares a host and
	// tcp otherwise. Ignored by memfab.
	Provider string
	// PoolDir is where the cxl backend creates its pools as files mapped
	// shared ("" is ShmDir); PoolDevices, when set, are the devices or
	// existing files it maps instead, one per MN by MN id (/dev/dax0.0,
	// ...). Ignored by the other backends.
	PoolDir     string
	PoolDevices []string
	// Stuck, if set, is told once when an operation has been inside the
	// provider (not waiting for a completion: inside a call that does not
	// return) for Timeout plus a few seconds; the caller ends the job.
	// The fabric backend watches for it; the others cannot get stuck so.
	Stuck func(msg string)
	// Note, if set, is told what an MN did on its own that the operator
	// should know of (a lock taken back from a dead client); nil says
	// nothing.
	Note func(msg string)
}

// EnsureDefaults fills in zero fields with defaults.
func (c *Config) EnsureDefaults() {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Timeout < 0 {
		return errorf("verbs: timeout %v is negative; expected a positive duration", c.Timeout)
	}
	if c.PoolBytes > MaxOffset+1 {
		return errorf("verbs: pool of %d bytes exceeds the 48-bit offset space (%d bytes)", c.PoolBytes, uint64(MaxOffset)+1)
	}
	return nil
}

// GapCost is an optional ability of a Network: how many bytes a READ may
// read past what it needs before one more READ would have cost less, so
// that a read merger joins requests across gaps up to that size. One-sided
// operations on an RDMA NIC cost about as much as a kilobyte or two of
// transfer; a libfabric shm operation is a system call, worth tens of
// kilobytes of copying.
type GapCost interface {
	GapBytes() int
}

// MergeGap is net's GapBytes, or 2 KiB for a network that does not say.
func MergeGap(net Network) int {
	if g, ok := net.(GapCost); ok {
		return g.GapBytes()
	}
	return 2 << 10
}

// RoundTripCost is an optional ability of a Network: how many bytes a
// round trip should bring for its fixed cost to be small beside them. A
// compute node's task costs two dependent round trips (its index
// entries, then its lists), so the engine sizes its tasks to read at
// least that much. Where a round trip is one batch of operations on a NIC
// or a system call (RDMA, shm), the engine's default tasks are enough and
// a network need not say; over sockets every round trip passes through
// both peers' kernels and wakes the MN's progress thread.
type RoundTripCost interface {
	RoundTripBytes() int
}

// RoundTripBytes is net's RoundTripBytes, or 0 for a network that does
// not say.
func RoundTripBytes(net Network) int {
	if c, ok := net.(RoundTripCost); ok {
		return c.RoundTripBytes()
	}
	return 0
}

// TargetAtomics is an optional ability of a Network: whether a remote
// atomic is executed by the memory node's CPU (libfabric's shm and
// tcp;ofi_rxm emulate them in the MN's progress thread, which must be
// scheduled for every round of CASes) rather than by a NIC or by the
// memory itself (an RDMA NIC's atomic unit, a CXL pool's cache line).
type TargetAtomics interface {
	AtomicsOnTargetCPU() bool
}

// AtomicsOnTargetCPU is net's AtomicsOnTargetCPU, or false for a network
// that does not say.
func AtomicsOnTargetCPU(net Network) bool {
	t, ok := net.(TargetAtomics)
	return ok && t.AtomicsOnTargetCPU()
}

// PostMode is an optional ability of an Endpoint, used by Bench: post each
// operation of a batch with its own call into the provider instead of the
// whole batch in one call (the doorbell batching stays the same).
type PostMode interface {
	SetPostPerOp(on bool)
}

// TimeoutError is a Flush whose completions did not all arrive within
// Config.Timeout. The peer may be dead, frozen or slow, or have lost an
// operation; an operation not completed may still be applied later. The
// endpoint cannot be used again.
type TimeoutError struct{ Msg string }

func (e *TimeoutError) Error() string { return e.Msg }

// IsTimeout tells whether err is, or wraps, a TimeoutError.
func IsTimeout(err error) bool {
	var t *TimeoutError
	return errors.As(err, &t)
}

// ProviderError is a fabric provider that is unknown, unavailable or
// refused here: the user's choice, not a run-time failure.
type ProviderError struct{ Msg string }

func (e *ProviderError) Error() string { return e.Msg }

// BadInput marks the error as the user's input (exit status 2).
func (e *ProviderError) BadInput() bool { return true }
