//go:build linux

package memtable

import "syscall"

// mapChunk maps size bytes of private anonymous memory: zero-filled pages
// that the kernel backs on first touch. It reports false if the mapping
// fails (address space or map count exhausted); the caller then takes the
// chunk from the heap, so a memtable never fails for want of a mapping.
func mapChunk(size int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return b, true
}

// unmapChunk returns a chunk's memory to the OS. It runs as a GC cleanup,
// once no arena or pool holds the chunk's handle; an error cannot be
// acted on there (the mapping is then merely leaked), so it is dropped.
func unmapChunk(b []byte) { _ = syscall.Munmap(b) }
