package launch_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/spmd/mpitest"
)

// TestBenchSuite runs `dmg bench suite` through the command line: what the
// command itself refuses and what package suite finds wrong with the matrix
// exit 2, a suite none of whose runs succeeds exits 1, a tiny one exits 0
// with its results. (Package suite tests the matrix itself.)
func TestBenchSuite(t *testing.T) {
	tiny := []string{"--local", "bench", "suite", "--graphs", "kron:8", "--algos", "pagerank", "--layouts", "cn:1,mn:1", "--reps", "1"}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // in stderr
		file   string // in --out-dir, when set
	}{
		{"--roles instead of --layouts", []string{"--roles", "cn:1,mn:1", "bench", "suite"}, 2, "launch: bench suite takes its role layouts from --layouts", ""},
		{"variants not CSV", []string{"bench", "suite", "--variants", `a="x`}, 2, "launch: --variants \"a=\\\"x\" is not a comma-separated list", ""},
		{"variant without =", []string{"bench", "suite", "--variants", "a"}, 2, `dmg: suite: --variants entry "a" is not NAME=EXTRA-FLAGS`, ""},
		{"half a layout", []string{"bench", "suite", "--layouts", "cn:1"}, 2, "dmg: suite: --layouts", ""},
		{"no run succeeds", slices.Concat(tiny, []string{"--variants", "m=--no-such-flag"}), 1, "dmg: suite: bench suite: none of the 1 runs succeeded", "results.csv"},
		{"one run", slices.Concat(tiny, []string{"--variants", "a="}), 0, "[1/1] kron:8 pagerank cn:1,mn:1 a rep 0: ok", "summary.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			out, errOut, code := runLocal(t, slices.Concat(tt.args, []string{"--out-dir", dir})...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr lacks %q:\n%s\nstdout:\n%s", code, tt.code, tt.stderr, errOut, out)
			}
			if tt.file == "" {
				return
			}
			if _, err := os.Stat(filepath.Join(dir, tt.file)); err != nil {
				t.Errorf("no %s: %v", tt.file, err)
			}
		})
	}
}

// A suite starts its runs itself: under a launcher it refuses to start.
func TestBenchSuiteUnderLauncher(t *testing.T) {
	res := mpitest.Exec(t, 1, nil, dmgBin(t), "bench", "suite")
	if res.ExitCode != 2 || !strings.Contains(res.Stderr, "directly, not under a launcher") {
		t.Fatalf("exit %d, want 2 and a message; stderr:\n%s", res.ExitCode, res.Stderr)
	}
}
