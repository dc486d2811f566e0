package hugemem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A balloon that reports free pages, bound to its driver, turns the
// advice off; any other virtio device, an unbound balloon, or one
// without the feature does not.
func TestReportsFreePages(t *testing.T) {
	reporting := "01100101" + strings.Repeat("0", 56)
	tests := []struct {
		name string
		devs []fakeDev
		want bool
	}{
		{"none", nil, false},
		{"reporting-balloon", []fakeDev{{"0x0002", "01", true}, {"0x0005", reporting, true}}, true},
		{"balloon-without-reporting", []fakeDev{{"0x0005", "0110000", true}}, false},
		{"unbound-balloon", []fakeDev{{"0x0005", reporting, false}}, false},
		{"not-a-balloon", []fakeDev{{"0x0001", reporting, true}}, false},
		{"short-features", []fakeDev{{"0x0005", "011", true}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, d := range tc.devs {
				d.write(t, filepath.Join(dir, "virtio"+string(rune('0'+i))))
			}
			if got := reportsFreePages(dir); got != tc.want {
				t.Fatalf("reportsFreePages = %v, want %v", got, tc.want)
			}
		})
	}
}

// DMG_HUGE_PAGES decides when it says on or off; anything else asks auto.
func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		env        string
		auto, want bool
	}{
		{"on", false, true}, {"1", false, true}, {"YES", false, true},
		{"off", true, false}, {"0", true, false}, {"No", true, false},
		{"", true, true}, {"", false, false}, {"auto", true, true},
	} {
		if got := advice(tc.env, func() bool { return tc.auto }); got != tc.want {
			t.Errorf("DMG_HUGE_PAGES=%q, auto %v: %v, want %v", tc.env, tc.auto, got, tc.want)
		}
	}
}

type fakeDev struct {
	id, features string
	bound        bool
}

func (d fakeDev) write(t *testing.T, at string) {
	t.Helper()
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"device": d.id + "\n", "features": d.features + "\n"} {
		if err := os.WriteFile(filepath.Join(at, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if d.bound {
		if err := os.Mkdir(filepath.Join(at, "driver"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
