package rank

import (
	"math/bits"
)

// bitmap is a set of the own chunk's vertices, bit v-lo.
type bitmap []uint64

func newBitmap(n uint32) bitmap { return make(bitmap, (n+63)/64) }

func (b bitmap) has(i uint32) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitmap) set(i uint32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitmap) unset(i uint32)    { b[i>>6] &^= 1 << (i & 63) }

// frontier is the active vertices of the own chunk in one of two forms
// (convention 4 of STYLE.md): a bitmap for dense iterations, a sorted list
// of vertex ids for sparse ones. It converts only when the form asked for
// changes.
type frontier struct {
	lo    uint32
	bits  bitmap
	list  []uint32
	dense bool // which form is current
	all   bool // every vertex (AllActive kernels): neither form is kept
}

func newFrontier(lo, n uint32) *frontier {
	return &frontier{lo: lo, bits: newBitmap(n), dense: true}
}

// active reports whether v is in the frontier (dense form).
func (f *frontier) active(v uint32) bool { return f.all || f.bits.has(v-f.lo) }

// asBits makes the bitmap current.
func (f *frontier) asBits() {
	if f.dense || f.all {
		f.dense = true
		return
	}
	clear(f.bits)
	for _, v := range f.list {
		f.bits.set(v - f.lo)
	}
	f.dense = true
}

// asList makes the list current (sorted).
func (f *frontier) asList() {
	if !f.dense {
		return
	}
	f.list = f.list[:0]
	for i, w := range f.bits {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f.list = append(f.list, f.lo+uint32(i*64+t))
			w &= w - 1
		}
	}
	f.dense = false
}
