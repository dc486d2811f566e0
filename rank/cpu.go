package rank

import "syscall"

// processCPUSeconds is this process's user and system CPU time.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// peakRSSBytes is the largest resident set this process has had
// (getrusage's ru_maxrss, in KiB on Linux), 0 where it cannot tell.
func peakRSSBytes() uint64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil || ru.Maxrss < 0 {
		return 0
	}
	return uint64(ru.Maxrss) << 10
}
