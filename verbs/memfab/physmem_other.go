//go:build !linux

package memfab

// physMem is the machine's RAM in bytes (0: unknown).
func physMem() uint64 { return 0 }
