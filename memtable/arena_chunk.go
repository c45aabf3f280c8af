package memtable

import (
	"runtime"
	"sync/atomic"
)

// Arena chunks live outside the Go heap on Linux, in anonymous mappings
// (MT12; other platforms keep them on the heap, as vfs keeps its mapped
// WAL output to Linux). The arena is most of a memtable's memory, and
// on the heap each live byte of it also raised the GC's heap goal by a
// byte (GOGC=100): a 1M-key fill with 4 MiB memtables held about 10 MB of
// arena live at its peaks (the mutable memtable, the one being flushed,
// and the pooled chunks of released ones), which the process paid for
// twice in its RSS. Pebble keeps its memtables off the heap for the same
// reason.
//
// A chunkBuf is the Go-heap handle of one chunk: whoever may still read
// the chunk's bytes keeps the handle reachable (the arena that published
// it, or the pool it was released to). When the last reference goes, the
// GC runs the handle's cleanup, which unmaps the chunk. Inside the package
// the bytes are reached only through the arena's directory, which lives no
// longer than the arena, and MT9's Release hands both the directory's
// chunks and their handles on together. The slices Get and the iterators
// hand out are the exception the GC cannot see: they stay valid only
// while their memtable is reachable (MT2), which the engine ensures by
// holding the read state that names it while it copies a value out.
type chunkBuf struct {
	b      []byte
	mapped bool // b is a mapping (else it is on the heap)
}

// mappedBytes is the size of every chunk mapped and not yet unmapped,
// pooled ones included; mappedChunks counts them.
var mappedBytes, mappedChunks atomic.Int64

// maxMappedChunks bounds the chunks mapped at once. Linux limits a
// process's mappings (vm.max_map_count, 65530 by default), and the Go
// runtime, the WAL's mapped files and the page cache's mapped files need
// theirs: a process with thousands of busy DBs must not take them all.
// Past the bound chunks come from the heap. A variable so tests can
// lower it.
var maxMappedChunks int64 = 16384

// MappedBytes returns the bytes of arena chunks that this process holds
// outside the Go heap (MT12): in memtables, and released to the pools for
// the next ones. runtime.MemStats does not count them.
func MappedBytes() int64 { return mappedBytes.Load() }

// newChunkBuf returns a zeroed chunk of size bytes: mapped outside the
// heap on Linux (mapChunk), else from the heap. Its pages are not yet
// present (MT8 touches them).
func newChunkBuf(size int) *chunkBuf {
	if mappedChunks.Add(1) > maxMappedChunks {
		mappedChunks.Add(-1)
		return &chunkBuf{b: make([]byte, size)}
	}
	b, ok := mapChunk(size)
	if !ok {
		mappedChunks.Add(-1)
		return &chunkBuf{b: make([]byte, size)}
	}
	mappedBytes.Add(int64(size))
	c := &chunkBuf{b: b, mapped: true}
	// The cleanup's argument is the mapping, not c, so it does not keep
	// c reachable.
	runtime.AddCleanup(c, releaseMapping, b)
	return c
}

// releaseMapping unmaps a chunk whose handle the GC found unreachable.
func releaseMapping(b []byte) {
	mappedBytes.Add(-int64(len(b)))
	mappedChunks.Add(-1)
	unmapChunk(b)
}
