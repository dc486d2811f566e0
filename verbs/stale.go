package verbs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pkg/errors"
)

// ShmDir is where the shm provider keeps its endpoint regions and the cxl
// backend its pools by default.
const ShmDir = "/dev/shm"

// RemoveStale deletes the files that DMG ranks of dead processes left in
// dir (a rank that is killed cannot remove them): those named
// "dmg-PID-..." — the fabric backend's shm regions (see dmgfab.c), the cxl
// backend's pools — whose PID no longer exists. Others' files are never
// touched; errors are ignored (a file in use by a live process is not
// stale). It returns how many it removed.
func RemoveStale(dir string) int {
	names, _ := filepath.Glob(filepath.Join(dir, "dmg-*"))
	removed := 0
	for _, p := range names {
		rest := strings.TrimPrefix(filepath.Base(p), "dmg-")
		pidText, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) && os.Remove(p) == nil {
			removed++
		}
	}
	return removed
}
