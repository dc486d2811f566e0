package hugemem

import "syscall"

// mapHuge maps n bytes of anonymous memory, advised for transparent huge
// pages where that pays (Advised; nil if the mapping fails; the advice is
// only advice).
func mapHuge(n int) []byte {
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	if Advised() {
		_ = syscall.Madvise(m, syscall.MADV_HUGEPAGE)
	}
	return m
}

func unmap(m []byte) { _ = syscall.Munmap(m) }
