package verbs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Only DMG regions of dead processes are removed.
func TestRemoveStale(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	dead := cmd.Process.Pid
	dir := t.TempDir()
	files := map[string]bool{ // name → should survive
		fmt.Sprintf("dmg-%d-18ec-0", dead):        false,
		fmt.Sprintf("dmg-%d-18ec-1", os.Getpid()): true,
		fmt.Sprintf("%d:0:0", dead):               true, // not ours
		"dmg-notapid-x-0":                         true,
		"dmg-":                                    true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n := RemoveStale(dir); n != 1 {
		t.Errorf("removed %d regions, want 1", n)
	}
	for name, keep := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if (err == nil) != keep {
			t.Errorf("%s: exists %v, want %v", name, err == nil, keep)
		}
	}
}
