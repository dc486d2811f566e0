package verbs

import (
	"fmt"

	"github.com/pkg/errors"
)

// Addr is a global address in disaggregated memory: a 16-bit MN id in the
// top bits and a 48-bit byte offset into that MN's pool (DESIGN.md §1).
// Every piece of graph data has exactly one Addr.
type Addr uint64

const (
	// OffsetBits is the width of the offset part of an Addr.
	OffsetBits = 48
	// MaxOffset is the largest offset an Addr can carry.
	MaxOffset = 1<<OffsetBits - 1
	// MaxMN is the largest MN id an Addr can carry.
	MaxMN = 1<<(64-OffsetBits) - 1
)

// MakeAddr packs an MN id and an offset, checking that both fit.
func MakeAddr(mn int, off uint64) (Addr, error) {
	if mn < 0 || mn > MaxMN {
		return 0, errors.Errorf("verbs: MN id %d out of range; expected 0..%d", mn, MaxMN)
	}
	if off > MaxOffset {
		return 0, errors.Errorf("verbs: offset %#x exceeds 48 bits; expected at most %#x", off, uint64(MaxOffset))
	}
	return Addr(uint64(mn)<<OffsetBits | off), nil
}

// MN is the memory node id of a.
func (a Addr) MN() int { return int(a >> OffsetBits) }

// Offset is the byte offset of a in its MN's pool.
func (a Addr) Offset() uint64 { return uint64(a) & MaxOffset }

// Add returns a moved n bytes forward within the same MN. An offset that
// overflows 48 bits wraps into the MN bits; such an address fails the range
// check of every operation, so no check is made here.
func (a Addr) Add(n uint64) Addr { return a + Addr(n) }

// String formats a as "mn3+0x1f40".
func (a Addr) String() string { return fmt.Sprintf("mn%d+%#x", a.MN(), a.Offset()) }

// RangeError reports an operation whose address range does not lie within
// one MN's pool, or an atomic on a misaligned word.
type RangeError struct {
	Addr     Addr
	Len      int
	NumMN    int    // MNs in the job
	PoolSize uint64 // the MN's pool size, when the MN exists
	Reason   string // what was expected
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("verbs: %d bytes at %v: %s", e.Len, e.Addr, e.Reason)
}

// CheckRange checks [a, a+n) against pool sizes indexed by MN id; it
// returns a *RangeError or nil. Backends call it before queueing anything.
func CheckRange(sizes []uint64, a Addr, n int) error {
	mn := a.MN()
	switch {
	case n < 0:
		return &RangeError{Addr: a, Len: n, NumMN: len(sizes), Reason: "negative length"}
	case mn >= len(sizes):
		return &RangeError{Addr: a, Len: n, NumMN: len(sizes),
			Reason: fmt.Sprintf("unknown MN %d; expected an MN id below %d", mn, len(sizes))}
	}
	size, off := sizes[mn], a.Offset()
	if off > size || uint64(n) > size-off {
		return &RangeError{Addr: a, Len: n, NumMN: len(sizes), PoolSize: size,
			Reason: fmt.Sprintf("past the end of MN %d's %d-byte pool; expected offset+len <= %d", mn, size, size)}
	}
	return nil
}

// CheckAtomic is CheckRange for an 8-byte atomic, which must also be
// 8-byte aligned.
func CheckAtomic(sizes []uint64, a Addr) error {
	if err := CheckRange(sizes, a, 8); err != nil {
		return err
	}
	if a.Offset()%8 != 0 {
		return &RangeError{Addr: a, Len: 8, NumMN: len(sizes), PoolSize: sizes[a.MN()],
			Reason: "atomic on a misaligned word; expected an 8-byte-aligned offset"}
	}
	return nil
}

func errorf(format string, args ...any) error { return errors.Errorf(format, args...) }
