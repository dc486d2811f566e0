package pool

import (
	"encoding/binary"
	"hash/crc64"

	"github.com/pkg/errors"
)

// A checkpoint is what a run on a served pool needs to continue from an
// iteration boundary after its compute nodes die: the values of every
// vertex, laid out by vertex id (so a job of any compute-node count reads
// its own chunk of them), and a header that says which kernel, with which
// parameters, reached which iteration.
//
// Its region holds two headers, two value buffers and two frontier
// buffers (a byte per vertex: 1 if active in the next iteration; unused
// by kernels whose every vertex is active). A checkpoint is
// written into the buffer the current header does not name, and then the
// other header is written with the next epoch: a crash in the middle of
// either write leaves the previous checkpoint whole and current (the
// torn header fails its checksum, or names the older epoch). A header
// carries a version word, a CRC-64 of itself and a checksum of its values, so
// that a region of another build of DMG, or one damaged, is refused,
// never misread.
//
//	region: header A (CkptHeaderBytes) | header B | values 0 (8 B × |V|) | values 1
//	        | frontier 0 (1 B × |V|, rounded up to 8 B) | frontier 1
const (
	// CkptVersion is the record's layout; a header of another version is
	// refused.
	CkptVersion = 0x444d_4743_4b50_0001 // "DMGCKP", 1
	// CkptHeaderBytes is the room of one header.
	CkptHeaderBytes = 256
	// CkptKernelBytes bounds a kernel's name in the header.
	CkptKernelBytes = 32
)

// Byte offsets in a checkpoint header.
const (
	ckVersion  = 0
	ckEpoch    = 8
	ckIter     = 16
	ckVertices = 24
	ckParams   = 32 // a hash of the kernel's parameters
	ckValues   = 40 // ValuesSum of the epoch's value buffer
	ckKernel   = 48 // CkptKernelBytes, zero-padded
	ckSum      = ckKernel + CkptKernelBytes
	ckLen      = ckSum + 8
)

// CkptHeader is one header of a checkpoint region.
type CkptHeader struct {
	Epoch     uint64 // 1 for the first checkpoint; 0: none written
	Iteration uint64 // the boundary the values are at
	Vertices  uint64
	Params    uint64 // a hash of the kernel's parameters
	Values    uint64 // ValuesSum of the value buffer this epoch wrote
	Kernel    string
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// ValuesSum is the checksum a header carries for its value buffer, over
// the values of vertices [lo, lo+len(values)): a sum, modulo 2^64, of a
// mix of each vertex's id and value. A sum does not depend on how the
// vertices are split: each CN sums its chunk and one all-reduce adds
// them, for any compute-node count, where a CRC would need the chunks in
// order on one rank.
// The frontier's bytes (active, nil for none) enter it with the values.
func ValuesSum(lo uint64, values []uint64, active []byte) uint64 {
	var s uint64
	for i, v := range values {
		s += mix(lo+uint64(i), v)
		if active != nil && active[i] != 0 {
			s += mix(^(lo + uint64(i)), uint64(active[i]))
		}
	}
	return s
}

// mix is SplitMix64's finaliser over a vertex's id and value.
func mix(v, x uint64) uint64 {
	z := x ^ (v * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Buffer is the value buffer epoch e writes: they alternate, so that the
// current one is never written over.
func (h CkptHeader) Buffer() int { return int(h.Epoch % 2) }

// CkptRegionBytes is the size of a checkpoint region for n vertices.
func CkptRegionBytes(n uint64) uint64 { return 2*CkptHeaderBytes + 2*8*n + 2*frontBytes(n) }

// frontBytes is one frontier buffer's room: a byte per vertex, rounded
// up to a word.
func frontBytes(n uint64) uint64 { return (n + 7) &^ 7 }

// CkptFrontOff is the offset of frontier buffer b in a checkpoint region
// for n vertices.
func CkptFrontOff(n uint64, b int) uint64 {
	return 2*CkptHeaderBytes + 2*8*n + uint64(b)*frontBytes(n)
}

// CkptHeaderOff is the offset of header h (0: A, 1: B) in a region.
func CkptHeaderOff(h int) uint64 { return uint64(h) * CkptHeaderBytes }

// CkptValuesOff is the offset of value buffer b in a checkpoint region for
// n vertices.
func CkptValuesOff(n uint64, b int) uint64 { return 2*CkptHeaderBytes + uint64(b)*8*n }

// Encode writes h into a CkptHeaderBytes buffer, with its checksum.
func (h CkptHeader) Encode() ([]byte, error) {
	if len(h.Kernel) == 0 || len(h.Kernel) > CkptKernelBytes {
		return nil, errors.Errorf("pool: checkpoint kernel name %q; expected 1 to %d bytes", h.Kernel, CkptKernelBytes)
	}
	b := make([]byte, CkptHeaderBytes)
	le := binary.LittleEndian
	le.PutUint64(b[ckVersion:], CkptVersion)
	le.PutUint64(b[ckEpoch:], h.Epoch)
	le.PutUint64(b[ckIter:], h.Iteration)
	le.PutUint64(b[ckVertices:], h.Vertices)
	le.PutUint64(b[ckParams:], h.Params)
	le.PutUint64(b[ckValues:], h.Values)
	copy(b[ckKernel:ckKernel+CkptKernelBytes], h.Kernel)
	le.PutUint64(b[ckSum:], crc64.Checksum(b[:ckSum], crcTable))
	return b, nil
}

// DecodeCkptHeader reads a header; ok is false for one never written (all
// zero). A header of another version, or whose checksum fails (torn by a
// crash mid-write, or damaged), is an error that says which.
func DecodeCkptHeader(b []byte) (h CkptHeader, ok bool, err error) {
	if len(b) < ckLen {
		return h, false, errors.Errorf("pool: checkpoint header of %d bytes; expected %d", len(b), CkptHeaderBytes)
	}
	zero := true
	for _, c := range b[:ckLen] {
		zero = zero && c == 0
	}
	if zero {
		return h, false, nil
	}
	le := binary.LittleEndian
	if v := le.Uint64(b[ckVersion:]); v != CkptVersion {
		return h, false, errors.Errorf("pool: checkpoint header version %#x; this dmg reads %#x (written by another build of dmg?)", v, uint64(CkptVersion))
	}
	if sum, want := le.Uint64(b[ckSum:]), crc64.Checksum(b[:ckSum], crcTable); sum != want {
		return h, false, errors.Errorf("pool: checkpoint header checksum %#x; its bytes give %#x (torn or damaged)", sum, want)
	}
	k := b[ckKernel : ckKernel+CkptKernelBytes]
	n := 0
	for n < len(k) && k[n] != 0 {
		n++
	}
	h = CkptHeader{Epoch: le.Uint64(b[ckEpoch:]), Iteration: le.Uint64(b[ckIter:]), Vertices: le.Uint64(b[ckVertices:]),
		Params: le.Uint64(b[ckParams:]), Values: le.Uint64(b[ckValues:]), Kernel: string(k[:n])}
	if h.Epoch == 0 || n == 0 {
		return CkptHeader{}, false, errors.Errorf("pool: checkpoint header with epoch %d and kernel %q; expected both set", h.Epoch, h.Kernel)
	}
	return h, true, nil
}

// CurrentCkpt picks the current checkpoint from a region's two headers:
// the valid one of the higher epoch. A header that fails to decode is
// passed over when the other is valid (a crash tore it mid-write: the
// other is the checkpoint before); ok is false when neither was ever
// written, and an error is returned when neither is valid but one was
// written (damage, or another build's region).
func CurrentCkpt(a, b []byte) (h CkptHeader, ok bool, err error) {
	ha, oka, erra := DecodeCkptHeader(a)
	hb, okb, errb := DecodeCkptHeader(b)
	switch {
	case oka && okb:
		if hb.Epoch > ha.Epoch {
			return hb, true, nil
		}
		return ha, true, nil
	case oka:
		return ha, true, nil
	case okb:
		return hb, true, nil
	case erra != nil:
		return h, false, erra
	case errb != nil:
		return h, false, errb
	}
	return h, false, nil
}

// NextCkpt is the header slot (0: A, 1: B) and epoch the next checkpoint
// writes after cur (ok: a checkpoint exists): the header cur is not in,
// so that cur stays whole until the new one is.
// Epoch e goes into header e mod 2 and value buffer e mod 2.
func NextCkpt(cur CkptHeader, ok bool) (slot int, epoch uint64) {
	epoch = 1
	if ok {
		epoch = cur.Epoch + 1
	}
	return int(epoch % 2), epoch
}
