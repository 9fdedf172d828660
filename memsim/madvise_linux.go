package memsim

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back a large chunk with transparent huge
// pages (effective when THP is in "madvise" mode); failures are harmless.
func adviseHuge[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < 4<<20 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), n)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
