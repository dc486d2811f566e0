package spmd

import (
	"strings"
	"testing"
)

func TestParseRoles(t *testing.T) {
	tests := []struct {
		in      string
		want    Roles
		wantErr string
	}{
		{"cn:2,mn:2", Roles{2, 2}, ""},
		{"mn:3,cn:1", Roles{1, 3}, ""},
		{" CN:4 , MN:4 ", Roles{4, 4}, ""},
		{"", Roles{}, "empty"},
		{"cn:2", Roles{}, "both cn and mn"},
		{"cn:0,mn:2", Roles{}, "at least one compute node"},
		{"cn:2,mn:0", Roles{}, "at least one compute node and one memory node"},
		{"cn:-1,mn:2", Roles{}, "at least one"},
		{"cn:x,mn:2", Roles{}, "not a whole number"},
		{"cn:2,gpu:2", Roles{}, `unknown role "gpu"`},
		{"cn:2,cn:2", Roles{}, "given twice"},
		{"cn2,mn:2", Roles{}, "not NAME:COUNT"},
		{"cn:2,mn:70000", Roles{}, "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRoles(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRoles(%q) error = %v, want containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRoles(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRolesOf(t *testing.T) {
	r := Roles{CN: 3, MN: 2}
	want := []struct {
		role Role
		idx  int
	}{{CN, 0}, {CN, 1}, {CN, 2}, {MN, 0}, {MN, 1}}
	for rank, w := range want {
		role, idx := r.Of(rank)
		if role != w.role || idx != w.idx || r.RankOf(role, idx) != rank {
			t.Errorf("rank %d: %v %d", rank, role, idx)
		}
	}
	if err := r.Check(5); err != nil {
		t.Error(err)
	}
	if err := r.Check(4); err == nil {
		t.Error("Check(4) accepted a 5-rank layout")
	}
}

func FuzzParseRoles(f *testing.F) {
	for _, s := range []string{"cn:2,mn:2", "mn:1,cn:9", "cn:,mn:", ",,", "cn:1:2,mn:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRoles(s)
		if err != nil {
			return
		}
		if r.CN < 1 || r.MN < 1 || r.CN > MaxRanksPerRole || r.MN > MaxRanksPerRole {
			t.Fatalf("accepted %q as %v", s, r)
		}
		if r2, err := ParseRoles(r.String()); err != nil || r2 != r {
			t.Fatalf("round trip %v -> %v, %v", r, r2, err)
		}
	})
}
