package rank

import "syscall"

// processUsage is this process's user and system CPU time and the largest
// resident set it has had (getrusage's ru_maxrss, in KiB on Linux); zeros
// where the platform does not tell.
func processUsage() (cpuSeconds float64, peakRSS uint64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, uint64(max(ru.Maxrss, 0)) << 10
}
