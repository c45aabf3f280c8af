package memtable

import "sync"

// chunkPools hold the chunks of released memtables (MT9), one pool per
// chunk size the arena uses (minChunk doubling up to maxChunk), shared by
// every memtable of the process. A fill allocated its whole arena afresh
// for every memtable, about 150 bytes of Go heap per 116-byte entry: over
// 40% of a sequential fill's allocation, which set how often the GC ran
// during it, and a chunk fresh from the heap is either zeroed by the
// allocator (up to 1 MiB in one Set) or faulted in page by page (MT8). A
// reused chunk is neither. The pools are sync.Pools, so chunks nobody
// takes are dropped within two collections and an idle process keeps no
// arena memory.
var chunkPools [chunkClasses]sync.Pool

// chunkClasses is the number of chunk sizes: minChunk << i for i below it.
const chunkClasses = 7 // 16 KiB ... 1 MiB

// chunkClass returns the pool index of a chunk of size n, or -1 for a
// size the arena never makes a shared chunk of (an oversized entry's own).
func chunkClass(n int) int {
	for i := range chunkClasses {
		if minChunk<<i == n {
			return i
		}
	}
	return -1
}

// takeChunk returns a pooled chunk of exactly size bytes, or nil. Its
// bytes are whatever its last memtable left; the arena hands out only
// bytes it has written since (MT6), so no reader sees them.
func takeChunk(size int) *chunkBuf {
	c := chunkClass(size)
	if c < 0 {
		return nil
	}
	b, _ := chunkPools[c].Get().(*chunkBuf)
	return b
}

// Release hands the memtable's arena chunks to the pools for the next
// memtables (MT9). REQUIRES: nothing reads or writes m again: no Get or
// iterator is running or will run on it, and no slice it returned is
// still in use. The engine calls it when the last read state naming a
// flushed memtable is gone. It hands the tree's nodes to the memtable's
// NodePool too, if it has one (MT10). Afterwards Get and NewIter panic
// rather than answer from memory another memtable may own now (an
// iterator opened before and used after may find the tree empty or read
// recycled nodes: the caller's promise is all that prevents it); Release
// twice does nothing.
func (m *MemTable) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.releaseNodes()
	a := m.arena
	bufs := a.bufs
	a.chunks.Store(&[][]byte{})
	a.cur, a.fill, a.touched, a.bufs = nil, 0, 0, nil
	for _, c := range bufs {
		// A chunk sized for one entry of 16-256 KiB has no pool: its
		// handle is dropped here, and its cleanup unmaps it (MT12).
		if i := chunkClass(len(c.b)); i >= 0 {
			chunkPools[i].Put(c)
		}
	}
}
