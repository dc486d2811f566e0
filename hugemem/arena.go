package hugemem

import "unsafe"

// Arena holds large arrays for one owner and one phase: a CN's per-vertex
// arrays (values, accumulators, contributions, the value pull's words)
// for a job, a share reader's kept edges for a load. On Linux they are
// anonymous mappings, advised for transparent huge pages where Advised
// says that pays (arena_linux.go): the first touch of each 2 MiB then
// costs one fault instead of 512, which on a fresh virtual machine was
// most of what a first iteration paid (about 12 µs per 4 KiB page measured
// here), and the gathers' random reads miss the TLB far less. Small arrays, and any mapping the system refuses, come from
// the Go heap. Free releases the mappings; nothing may use the arrays
// after it. The zero Arena is ready to use; it is not safe for concurrent
// use.
type Arena struct {
	maps [][]byte
}

// hugeMin is the smallest array the arena maps itself.
const hugeMin = 2 << 20

// Words returns n zeroed words.
func (a *Arena) Words(n int) []uint64 { return alloc[uint64](a, n) }

// Uint32s returns n zeroed 32-bit words.
func (a *Arena) Uint32s(n int) []uint32 { return alloc[uint32](a, n) }

// Float64s returns n zeroed float64s.
func (a *Arena) Float64s(n int) []float64 { return alloc[float64](a, n) }

// alloc returns n zeroed elements of a's.
func alloc[T uint32 | uint64 | float64](a *Arena, n int) []T {
	var z T
	if b := a.mapBytes(int(unsafe.Sizeof(z)) * n); b != nil {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	return make([]T, n)
}

// Bytes returns n zeroed bytes.
func (a *Arena) Bytes(n int) []byte {
	if b := a.mapBytes(n); b != nil {
		return b
	}
	return make([]byte, n)
}

// Free unmaps every array of the arena.
func (a *Arena) Free() {
	for _, m := range a.maps {
		unmap(m)
	}
	a.maps = nil
}

// mapBytes returns n zeroed bytes, 2 MiB-aligned, from a mapping of their
// own, or nil when n is small or the mapping fails.
func (a *Arena) mapBytes(n int) []byte {
	if n < hugeMin {
		return nil
	}
	m := mapHuge(n + hugeMin) // room to align the start
	if m == nil {
		return nil
	}
	a.maps = append(a.maps, m)
	skip := (hugeMin - int(uintptr(unsafe.Pointer(unsafe.SliceData(m)))%hugeMin)) % hugeMin
	return m[skip : skip+n : skip+n]
}
