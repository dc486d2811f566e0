package sizes

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/dustin/go-humanize"
)

// What one unit of each size costs at least.
const (
	// BytesPerVertex: every compute node keeps a few words per vertex of
	// the whole graph (degrees, offsets, values): at least two.
	BytesPerVertex = 16
	// BytesPerSender: a worker goroutine (--workers × --inflight per
	// compute node) holds an endpoint and its batch buffers: 0.8 MiB
	// in-process, about 6 MiB over libfabric shm (kron:10, 256 workers).
	BytesPerSender = 1 << 20
	// BytesPerLocalRank and BytesPerRankPair: an in-process rank, and each
	// compute node's connection to each memory node (kron:10 at
	// cn:48,mn:48 --local: 2 MiB per rank, about 90 KiB per pair).
	BytesPerLocalRank = 1 << 20
	BytesPerRankPair  = 64 << 10
)

// MaxLocalRanks bounds the ranks of an in-process job (--local): they
// are goroutines of one process, for tests and demonstrations, and each
// compute node connects to each memory node (cn:128,mn:128 starts in
// about 10 s on 2 cores; cn:500,mn:500 took minutes).
const MaxLocalRanks = 256

// Error is a size this machine cannot hold: bad input.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Machine is what a process here can use; Memory 0 means unknown (no
// check).
type Machine struct {
	Memory uint64 // bytes
	// Where says where Memory comes from, for messages.
	Where string
}

// This is this machine: physical memory (sysinfo), or the cgroup's
// memory.max when lower.
func This() Machine {
	var m Machine
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		m = Machine{Memory: uint64(si.Totalram) * uint64(si.Unit), Where: "physical memory"}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (m.Memory == 0 || v < m.Memory) {
			m = Machine{Memory: v, Where: "the cgroup's memory.max"}
		}
	}
	return m
}

// Check refuses count units of each bytes (what names the size as the
// user gave it: "--workers 1000000 × --inflight 1", "kron:31's 2147483648
// vertices") when they need more than m's memory.
func (m Machine) Check(what string, count, each uint64) error {
	if m.Memory == 0 {
		return nil
	}
	hi, need := bits.Mul64(count, each)
	if hi != 0 {
		need = ^uint64(0)
	}
	return m.check(what, need, fmt.Sprintf(" (%s each, at least)", humanize.IBytes(each)))
}

// CheckTotal refuses need bytes in all (what names them) when they are
// more than m's memory.
func (m Machine) CheckTotal(what string, need uint64) error {
	return m.check(what, need, "")
}

func (m Machine) check(what string, need uint64, note string) error {
	if m.Memory == 0 || need <= m.Memory {
		return nil
	}
	cost := humanize.IBytes(need)
	if need == ^uint64(0) {
		cost = "more than 16 EiB"
	}
	return &Error{fmt.Sprintf("sizes: %s would need %s%s; this machine has %s (%s); expected a smaller size", what, cost, note, humanize.IBytes(m.Memory), m.Where)}
}

// Max is the largest count of units of each bytes m holds (0: no limit
// known).
func (m Machine) Max(each uint64) uint64 {
	if m.Memory == 0 || each == 0 {
		return 0
	}
	return m.Memory / each
}

// Product is a × b × ..., saturated at the largest uint64 (sizes multiply
// flags, which must not overflow into a small number).
func Product(f ...uint64) uint64 {
	for _, x := range f {
		if x == 0 {
			return 0
		}
	}
	p := uint64(1)
	for _, x := range f {
		hi, lo := bits.Mul64(p, x)
		if hi != 0 {
			return ^uint64(0)
		}
		p = lo
	}
	return p
}

// Ranks checks the roles of an in-process job: at most MaxLocalRanks,
// and their memory (each rank, and each compute node's connection to
// each memory node).
func (m Machine) Ranks(cn, mn int) error {
	if cn < 0 || mn < 0 {
		return &Error{fmt.Sprintf("sizes: roles cn:%d,mn:%d; expected counts ≥ 0", cn, mn)}
	}
	if n := cn + mn; n > MaxLocalRanks {
		return &Error{fmt.Sprintf("sizes: --local with cn:%d,mn:%d is %d ranks in one process; expected at most %d (launch more with mpirun)", cn, mn, n, MaxLocalRanks)}
	}
	need := uint64(cn+mn)*BytesPerLocalRank + uint64(cn)*uint64(mn)*BytesPerRankPair
	return m.check(fmt.Sprintf("--local with cn:%d,mn:%d (%d ranks, %d compute–memory connections)", cn, mn, cn+mn, cn*mn), need, " (at least)")
}
