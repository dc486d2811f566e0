package pool

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/verbs"
)

const (
	// MaxMN is how many MNs a pool may have; a slot keeps one extent per
	// MN.
	MaxMN = 32

	// Magic is header word 0 of every MN's pool: "DMGPOOL1" read as a
	// little-endian uint64.
	Magic uint64 = 'D' | 'M'<<8 | 'G'<<16 | 'P'<<24 | 'O'<<32 | 'O'<<40 | 'L'<<48 | '1'<<56

	// HeaderBytes is the size of the header at the start of every MN's
	// pool.
	HeaderBytes = 4096

	// Byte offsets of the header words.
	HdrMagic = 0 * 8 // Magic
	HdrToken = 1 * 8 // the pool's token (File.Token)
	HdrMN    = 2 * 8 // this MN's index
	HdrNumMN = 3 * 8 // how many MNs the pool has
	HdrStop  = 4 * 8 // nonzero: the serve job is asked to end
	HdrBeat  = 5 * 8 // the serving MN's clock, Unix ms, rewritten every BeatEvery
	HdrSize  = 6 * 8 // the bytes this MN registered (its pool's real bound)
	hdrWords = 7

	// BeatEvery is how often a serving MN rewrites its beat word, and how
	// often KeepAlive renews a lease by default.
	BeatEvery = 250 * time.Millisecond

	// StaleAfter is the age past which a catalogue lock or a lease is
	// taken to belong to a dead holder.
	StaleAfter = 10 * time.Second

	// CatalogueOff is where the catalogue starts on MN 0: the lock word,
	// the lock time word, then (from SlotsOff) the slots.
	CatalogueOff = HeaderBytes
	// LockOff is the catalogue lock word: the holder's id, 0 when free.
	LockOff = CatalogueOff
	// LockTimeOff is the Unix ms at which the lock was taken.
	LockTimeOff = CatalogueOff + 8
	// SlotsOff is the offset of slot 0 on MN 0 (a cache line past the lock).
	SlotsOff = CatalogueOff + 64

	// MaxSlots is the number of catalogue slots.
	MaxSlots = 64
	// SlotBytes is the encoded size of one slot (a multiple of 64).
	SlotBytes = 1024
	// CatalogueBytes is the size of the slots array.
	CatalogueBytes = MaxSlots * SlotBytes

	// MaxName is the longest graph name a slot holds, in bytes.
	MaxName = 64

	// DataStart is the first offset ever allocated on any MN; bytes below
	// it hold the header (and, on MN 0, the catalogue).
	DataStart = 1 << 20

	// Align is the alignment (and length granularity) of allocated
	// extents.
	Align = 4096
)

// Byte offsets of a slot's words; State, Lease and Beat are each an
// 8-byte-aligned word of its own (the lease is taken with CAS64).
const (
	OffState    = 0 * 8
	OffLease    = 1 * 8
	OffBeat     = 2 * 8
	offCreated  = 3 * 8
	offGraph    = 4 * 8
	offCNs      = 5 * 8
	offVertices = 6 * 8
	offEdges    = 7 * 8
	offNameLen  = 8 * 8
	offName     = 9 * 8              // MaxName bytes
	offAux      = offName + MaxName  // MN, Off, Len
	offExtCount = offAux + 3*8       // number of Ext entries
	offExt      = offExtCount + 8    // MaxMN × (MN, Off, Len)
	offKernLen  = offExt + MaxMN*3*8 // Checkpoint slots: the kernel's name,
	offKernel   = offKernLen + 8     // CkptKernelBytes
	offParams   = offKernel + CkptKernelBytes
	OffDone     = offParams + 8              // iterations the current checkpoint completed
	slotUsed    = OffDone + 8                // bytes of a slot in use
	_           = uint(SlotBytes - slotUsed) // compile-time: the fields fit
	_           = uint(DataStart - (SlotsOff + CatalogueBytes))
)

// State is a catalogue slot's state.
type State uint64

const (
	// Free: the slot and its extents are unused.
	Free State = iota
	// Loading: a job is writing the graph; its lease is held.
	Loading
	// Ready: the graph is complete and may be used.
	Ready
	// Job: a job's private regions (scratch beside a graph), held by its
	// lease.
	Job
	// Checkpoint: a run's kept state (checkpoint.go), in its Aux extent.
	// It outlives the run: its lease names the run's holder id, and the
	// run is running while a live Job slot has that lease; otherwise it
	// is unfinished, for a later run to resume. A run that finishes
	// frees it; a drop of its graph frees it.
	Checkpoint
)

func (s State) String() string {
	switch s {
	case Free:
		return "free"
	case Loading:
		return "loading"
	case Ready:
		return "ready"
	case Job:
		return "job"
	case Checkpoint:
		return "checkpoint"
	}
	return fmt.Sprintf("state(%d)", uint64(s))
}

// Extent is a region of one MN's pool.
type Extent struct {
	MN       int
	Off, Len uint64
}

func (e Extent) String() string {
	return fmt.Sprintf("mn%d[%#x,+%s)", e.MN, e.Off, fmtBytes(e.Len))
}

// End is the offset just past e.
func (e Extent) End() uint64 { return e.Off + e.Len }

// Addr is the global address of the extent's first byte.
func (e Extent) Addr() (verbs.Addr, error) { return verbs.MakeAddr(e.MN, e.Off) }

// Slot is one catalogue entry, as decoded from its SlotBytes on MN 0.
type Slot struct {
	State    State
	Lease    uint64 // holder id, 0 = none
	Beat     uint64 // holder's last heartbeat, Unix ms
	Created  uint64 // Unix ms
	Name     string // at most MaxName bytes; for Job slots the graph's name
	Graph    int    // Job slots: the index of their graph's slot (else -1)
	CNs      int    // compute nodes of the job that loaded it
	Vertices uint64
	Edges    uint64
	Aux      Extent   // the graph's descriptor area (one MN); a checkpoint's region
	Ext      []Extent // one per MN: the region on that MN (Len 0: nothing there)
	// Checkpoint slots: the run's kernel and a hash of its parameters,
	// and the iterations its current checkpoint completed (0: none yet).
	Kernel string
	Params uint64
	Done   uint64
}

// SlotAddr is the address of slot i on MN 0.
func SlotAddr(i int) verbs.Addr { return verbs.Addr(uint64(SlotsOff) + uint64(i)*SlotBytes) }

// Encode writes s into b (at least SlotBytes long) little-endian.
func (s *Slot) Encode(b []byte) error {
	if len(b) < SlotBytes {
		return errors.Errorf("pool: encoding a slot into %d bytes; expected %d", len(b), SlotBytes)
	}
	if len(s.Name) > MaxName {
		return errors.Errorf("pool: graph name %q is %d bytes; at most %d fit in the catalogue", s.Name, len(s.Name), MaxName)
	}
	if len(s.Ext) > MaxMN {
		return errors.Errorf("pool: slot with %d extents; at most %d (one per MN)", len(s.Ext), MaxMN)
	}
	if s.State > Checkpoint {
		return errors.Errorf("pool: slot state %d unknown", uint64(s.State))
	}
	if len(s.Kernel) > CkptKernelBytes {
		return errors.Errorf("pool: kernel name %q is %d bytes; at most %d fit in the catalogue", s.Kernel, len(s.Kernel), CkptKernelBytes)
	}
	b = b[:SlotBytes]
	clear(b)
	le := binary.LittleEndian
	le.PutUint64(b[OffState:], uint64(s.State))
	le.PutUint64(b[OffLease:], s.Lease)
	le.PutUint64(b[OffBeat:], s.Beat)
	le.PutUint64(b[offCreated:], s.Created)
	le.PutUint64(b[offGraph:], uint64(int64(s.Graph)))
	le.PutUint64(b[offCNs:], uint64(int64(s.CNs)))
	le.PutUint64(b[offVertices:], s.Vertices)
	le.PutUint64(b[offEdges:], s.Edges)
	le.PutUint64(b[offNameLen:], uint64(len(s.Name)))
	copy(b[offName:offName+MaxName], s.Name)
	putExtent(b[offAux:], s.Aux)
	le.PutUint64(b[offExtCount:], uint64(len(s.Ext)))
	for i, e := range s.Ext {
		putExtent(b[offExt+i*24:], e)
	}
	le.PutUint64(b[offKernLen:], uint64(len(s.Kernel)))
	copy(b[offKernel:offKernel+CkptKernelBytes], s.Kernel)
	le.PutUint64(b[offParams:], s.Params)
	le.PutUint64(b[OffDone:], s.Done)
	return nil
}

// DecodeSlot reads a slot from b (at least SlotBytes long).
func DecodeSlot(b []byte) (Slot, error) {
	var s Slot
	if len(b) < SlotBytes {
		return s, errors.Errorf("pool: decoding a slot from %d bytes; expected %d", len(b), SlotBytes)
	}
	le := binary.LittleEndian
	s.State = State(le.Uint64(b[OffState:]))
	if s.State > Checkpoint {
		return s, errors.Errorf("pool: slot state %d unknown (a catalogue written by another release of dmg?)", uint64(s.State))
	}
	s.Lease = le.Uint64(b[OffLease:])
	s.Beat = le.Uint64(b[OffBeat:])
	s.Created = le.Uint64(b[offCreated:])
	s.Graph = int(int64(le.Uint64(b[offGraph:])))
	s.CNs = int(int64(le.Uint64(b[offCNs:])))
	s.Vertices = le.Uint64(b[offVertices:])
	s.Edges = le.Uint64(b[offEdges:])
	n := le.Uint64(b[offNameLen:])
	if n > MaxName {
		return s, errors.Errorf("pool: slot name length %d exceeds %d", n, MaxName)
	}
	s.Name = string(b[offName : offName+int(n)])
	s.Aux = getExtent(b[offAux:])
	k := le.Uint64(b[offExtCount:])
	if k > MaxMN {
		return s, errors.Errorf("pool: slot has %d extents; at most %d", k, MaxMN)
	}
	if k > 0 {
		s.Ext = make([]Extent, k)
		for i := range s.Ext {
			s.Ext[i] = getExtent(b[offExt+i*24:])
		}
	}
	kn := le.Uint64(b[offKernLen:])
	if kn > CkptKernelBytes {
		return s, errors.Errorf("pool: slot kernel name length %d exceeds %d", kn, CkptKernelBytes)
	}
	s.Kernel = string(b[offKernel : offKernel+int(kn)])
	s.Params, s.Done = le.Uint64(b[offParams:]), le.Uint64(b[OffDone:])
	return s, nil
}

func putExtent(b []byte, e Extent) {
	binary.LittleEndian.PutUint64(b, uint64(int64(e.MN)))
	binary.LittleEndian.PutUint64(b[8:], e.Off)
	binary.LittleEndian.PutUint64(b[16:], e.Len)
}

func getExtent(b []byte) Extent {
	return Extent{
		MN:  int(int64(binary.LittleEndian.Uint64(b))),
		Off: binary.LittleEndian.Uint64(b[8:]),
		Len: binary.LittleEndian.Uint64(b[16:]),
	}
}

// CheckPool checks that pool can hold a header and a catalogue: at least
// DataStart bytes, 8-byte aligned (the local word accesses are atomic).
func CheckPool(pool []byte) error {
	if len(pool) < DataStart {
		return errors.Errorf("pool: a pool of %d bytes is below the %s minimum", len(pool), fmtBytes(DataStart))
	}
	if uintptr(unsafe.Pointer(&pool[0]))%8 != 0 {
		return errors.Errorf("pool: pool memory at %p is not 8-byte aligned", &pool[0])
	}
	return nil
}

// word is the 8-byte word at byte offset off of pool, or nil when pool
// cannot hold it aligned.
func word(pool []byte, off int) *uint64 {
	if off < 0 || off+8 > len(pool) {
		return nil
	}
	p := unsafe.Pointer(&pool[off])
	if uintptr(p)%8 != 0 {
		return nil
	}
	return (*uint64)(p)
}

func store(pool []byte, off int, v uint64) {
	if w := word(pool, off); w != nil {
		atomic.StoreUint64(w, v)
	}
}

// InitHeader writes an MN's header into its own pool memory: the serving
// MN calls it on its pool (exactly the memory it registered, whose length
// becomes the header's size word) before publishing the pool file. A pool
// that fails CheckPool is left untouched.
func InitHeader(pool []byte, token uint64, mn, numMN int) {
	if CheckPool(pool) != nil {
		return
	}
	store(pool, HdrToken, token)
	store(pool, HdrMN, uint64(mn))
	store(pool, HdrNumMN, uint64(numMN))
	store(pool, HdrStop, 0)
	store(pool, HdrBeat, 0)
	store(pool, HdrSize, uint64(len(pool)))
	store(pool, HdrMagic, Magic)
}

// InitCatalogue zeroes the catalogue (lock and slots: every slot Free) in
// MN 0's own pool memory. A pool that fails CheckPool is left untouched.
func InitCatalogue(pool []byte) {
	if CheckPool(pool) != nil {
		return
	}
	for off := CatalogueOff; off < SlotsOff+CatalogueBytes; off += 8 {
		store(pool, off, 0)
	}
}

// StopRequested says whether a compute job asked the serving MN to end
// (Client.Stop).
func StopRequested(pool []byte) bool {
	w := word(pool, HdrStop)
	return w != nil && atomic.LoadUint64(w) != 0
}

// SetBeat writes the serving MN's beat word (its clock, Unix ms).
func SetBeat(pool []byte, unixMS uint64) { store(pool, HdrBeat, unixMS) }

// unixMS is t in Unix milliseconds (0 before 1970).
func unixMS(t time.Time) uint64 {
	if ms := t.UnixMilli(); ms > 0 {
		return uint64(ms)
	}
	return 0
}

// age is how long before now the Unix ms stamp ms was; 0 for a stamp in
// the future (a holder whose clock runs ahead).
func age(now time.Time, ms uint64) time.Duration {
	n := unixMS(now)
	if ms >= n {
		return 0
	}
	return time.Duration(n-ms) * time.Millisecond
}
