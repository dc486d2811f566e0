package sizes

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	m := Machine{Memory: 1 << 30, Where: "test"}
	for _, tc := range []struct {
		name        string
		count, each uint64
		want        string // "" : accepted
	}{
		{"fits", 1 << 20, 1 << 10, ""},
		{"exactly", 1 << 20, 1 << 10, ""},
		{"one byte over", 1<<30 + 1, 1, "would need 1.0 GiB"},
		{"vertices", 1 << 31, BytesPerVertex, "2147483648 vertices would need 32 GiB (16 B each, at least); this machine has 1.0 GiB (test)"},
		{"overflow", math.MaxUint64, 2, "more than 16 EiB"},
		{"zero", 0, math.MaxUint64, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			what := "the size"
			if tc.name == "vertices" {
				what = "2147483648 vertices"
			}
			err := m.Check(what, tc.count, tc.each)
			var se *Error
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "sizes: "+what) {
				t.Fatalf("error %v, want one naming %q and containing %q", err, what, tc.want)
			}
		})
	}
	if err := (Machine{}).Check("anything", math.MaxUint64, math.MaxUint64); err != nil {
		t.Errorf("unknown memory refused: %v", err)
	}
}

func TestRanks(t *testing.T) {
	m := Machine{Memory: 8 << 30, Where: "test"}
	for _, tc := range []struct {
		cn, mn int
		want   string
	}{
		{2, 2, ""},
		{128, 128, ""},
		{65536, 65536, "131072 ranks in one process; expected at most 256"},
		{200, 56, ""},
		{-1, 2, "expected counts ≥ 0"},
	} {
		err := m.Ranks(tc.cn, tc.mn)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("cn:%d,mn:%d: %v, want %q", tc.cn, tc.mn, err, tc.want)
		}
	}
	if err := (Machine{Memory: 64 << 20, Where: "test"}).Ranks(100, 100); err == nil || !strings.Contains(err.Error(), "10000 compute–memory connections") {
		t.Errorf("small machine: %v", err)
	}
}

func TestProduct(t *testing.T) {
	for _, tc := range []struct {
		f    []uint64
		want uint64
	}{
		{nil, 1},
		{[]uint64{3, 4}, 12},
		{[]uint64{1 << 32, 1 << 32}, math.MaxUint64},
		{[]uint64{1 << 63, 2, 0}, 0},
		{[]uint64{1 << 63, 2, 3}, math.MaxUint64},
		{[]uint64{0, 1 << 63, 2}, 0},
	} {
		if got := Product(tc.f...); got != tc.want {
			t.Errorf("Product(%v) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

func TestThis(t *testing.T) {
	m := This()
	if m.Memory == 0 || m.Where == "" {
		t.Errorf("This() = %+v; want this machine's memory", m)
	}
}
