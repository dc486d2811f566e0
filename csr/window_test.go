package csr

import (
	"slices"
	"testing"
)

// TestWindowsWidth: windows are cut at the bytes of their rows, and at
// so.width vertices when it is set, a share wider than that being
// windowed even when its rows fit.
func TestWindowsWidth(t *testing.T) {
	deg := make([]uint32, 20)
	for i := range deg {
		deg[i] = 1
	}
	for _, c := range []struct {
		name string
		so   ShareOptions
		want []uint32
	}{
		{"fits", ShareOptions{RowBytes: 1 << 20, Align: 4}, nil},
		{"no budget", ShareOptions{Align: 4}, nil},
		{"fits, narrow", ShareOptions{RowBytes: 1 << 20, Align: 4, width: 8}, []uint32{100, 108, 116, 120}},
		{"no budget, narrow", ShareOptions{Align: 4, width: 10}, []uint32{100, 108, 116, 120}},
		{"as wide as the share", ShareOptions{RowBytes: 1 << 20, Align: 4, width: 20}, nil},
		{"bytes first", ShareOptions{RowBytes: 4 * 36, Align: 4, width: 8}, []uint32{100, 104, 108, 112, 116, 120}},
		{"width first", ShareOptions{RowBytes: 12 * 36, Align: 4, width: 8}, []uint32{100, 108, 116, 120}},
	} {
		if got := windows(deg, nil, 100, 120, false, c.so); !slices.Equal(got, c.want) {
			t.Errorf("%s: windows %v, want %v", c.name, got, c.want)
		}
	}
}
