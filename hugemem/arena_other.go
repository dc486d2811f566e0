//go:build !linux

package hugemem

// mapHuge maps nothing off Linux: the arena's arrays come from the heap.
func mapHuge(int) []byte { return nil }

func unmap([]byte) {}
