//go:build !linux

package memtable

// mapChunk reports that this platform's arenas live on the Go heap.
func mapChunk(int) ([]byte, bool) { return nil, false }

// unmapChunk is never called where mapChunk never maps.
func unmapChunk([]byte) {}
