package hugemem

import (
	"os"
	"path/filepath"
	"strings"
)

// Advised says whether large arrays are advised for transparent huge
// pages: the environment's DMG_HUGE_PAGES if it says "on" or "off", else
// on, unless the machine hands its free memory back to its host.
//
// A virtual machine whose balloon reports free pages
// (VIRTIO_BALLOON_F_REPORTING) gives its host the free blocks of 2 MiB
// and more, after a moment: a huge page taken after a phase that freed
// memory (the load's, before the engine's set-up) is then new host memory
// at its first touch, 2 ms a MiB measured on this project's VMs, where
// 4 KiB pages come from the guest's lists of pages freed lately, 0.4 ms a
// MiB. There a kron:20 BFS's set-up took 0.09–0.18 s with the advice and
// 0.04–0.06 s without (docs/design.md). A fresh VM's first touches are
// host faults whatever the page size, and there huge pages were the
// cheaper (0.8 against 2.9 ms a MiB): a probe at start-up sees that state,
// not the one after a load, so the choice is by the balloon. Elsewhere the
// advice saves 511 faults in 512, and TLB misses.
func Advised() bool {
	return advice(os.Getenv("DMG_HUGE_PAGES"), func() bool { return !reportsFreePages("/sys/bus/virtio/devices") })
}

// advice is the choice for the setting env of DMG_HUGE_PAGES: on, off,
// or what auto says.
func advice(env string, auto func() bool) bool {
	switch strings.ToLower(env) {
	case "on", "1", "yes":
		return true
	case "off", "0", "no":
		return false
	}
	return auto()
}

// reportsFreePages says whether a virtio balloon under dir (the sysfs
// devices of the virtio bus) has a driver and offers free page reporting.
func reportsFreePages(dir string) bool {
	devs, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, d := range devs {
		id, err := os.ReadFile(filepath.Join(d, "device"))
		if err != nil || strings.TrimSpace(string(id)) != virtioBalloon {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "driver")); err != nil {
			continue
		}
		f, err := os.ReadFile(filepath.Join(d, "features"))
		if err == nil && len(f) > balloonReporting && f[balloonReporting] == '1' {
			return true
		}
	}
	return false
}

// The virtio balloon's device id, and the bit of its free page reporting
// in the features sysfs gives as a string of 0s and 1s, bit 0 first.
const (
	virtioBalloon    = "0x0005"
	balloonReporting = 5
)
