//go:build !linux

package rank

// mapHuge maps nothing off Linux: the arena's arrays come from the heap.
func mapHuge(int) []byte { return nil }

func unmap([]byte) {}
