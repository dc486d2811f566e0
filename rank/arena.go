package rank

import "unsafe"

// arena holds a CN's large per-vertex arrays (values, accumulators,
// contributions, the value pull's words) for one job. On Linux they are
// anonymous mappings advised for transparent huge pages (arena_linux.go):
// the first touch of each 2 MiB then costs one fault instead of 512, which
// on a virtual machine is most of what a first iteration pays (about 12 µs
// per 4 KiB page measured here), and the gathers' random reads miss the
// TLB far less. Small arrays, and any mapping the system refuses, come from
// the Go heap. free releases the mappings; nothing may use the arrays
// after it.
type arena struct {
	maps [][]byte
}

// hugeMin is the smallest array the arena maps itself.
const hugeMin = 2 << 20

// words returns n zeroed words.
func (a *arena) words(n int) []uint64 {
	if b := a.mapBytes(8 * n); b != nil {
		return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	return make([]uint64, n)
}

// bytes returns n zeroed bytes.
func (a *arena) bytes(n int) []byte {
	if b := a.mapBytes(n); b != nil {
		return b
	}
	return make([]byte, n)
}

// free unmaps every array of the arena.
func (a *arena) free() {
	for _, m := range a.maps {
		unmap(m)
	}
	a.maps = nil
}

// mapBytes returns n zeroed bytes, 2 MiB-aligned, from a mapping of their
// own, or nil when n is small or the mapping fails.
func (a *arena) mapBytes(n int) []byte {
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
