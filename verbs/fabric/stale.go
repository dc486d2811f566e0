package fabric

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pkg/errors"
)

// shmDir is where the shm provider keeps its endpoint regions.
const shmDir = "/dev/shm"

// removeStaleRegions deletes the shm regions that DMG endpoints of dead
// processes left in dir (a rank that is killed cannot close them): those
// named "dmg-PID-..." (see dmgfab.c) whose PID no longer exists. Others'
// files are never touched; errors are ignored (a region in use by a live
// process is not stale).
func removeStaleRegions(dir string) int {
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
