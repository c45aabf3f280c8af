package memtable

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/base"
)

// mappedSize returns the bytes of a's chunks that are mappings.
func (a *arena) mappedSize() int64 {
	var n int64
	for _, c := range a.bufs {
		if c.mapped {
			n += int64(len(c.b))
		}
	}
	return n
}

// fillMemTable adds entries of 1000-byte values until the arena has
// handed out at least n bytes.
func fillMemTable(m *MemTable, n int64) {
	v := make([]byte, 1000)
	for i := 0; m.arena.used < n; i++ {
		m.Set(fmt.Appendf(nil, "key%08d", i), base.SeqNum(i+1), v)
	}
}

// settleMappings waits until the chunks earlier tests released are
// unmapped: their cleanups run a collection or two later, on their own
// goroutine, and a test counting mappings would see the count fall while
// it runs.
func settleMappings() {
	for prev := int64(-1); prev != mappedChunks.Load(); {
		prev = mappedChunks.Load()
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

// TestArenaChunksAreOffHeap checks MT12: a memtable's arena bytes are
// mapped outside the Go heap, so the heap grows by the B-tree alone.
func TestArenaChunksAreOffHeap(t *testing.T) {
	if _, ok := mapChunk(pageSize); !ok {
		t.Skip("this platform maps no arena chunks")
	}
	settleMappings()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mappedBefore := MappedBytes()
	m := New()
	fillMemTable(m, 8<<20)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	mapped := m.arena.mappedSize()
	t.Logf("arena used %d B, mapped %d B, heap grew %d B, MappedBytes grew %d B", m.arena.used, mapped, heap, MappedBytes()-mappedBefore)
	if mapped < m.arena.used {
		t.Fatalf("arena hands out %d B but maps only %d B", m.arena.used, mapped)
	}
	if got := MappedBytes() - mappedBefore; got < mapped {
		t.Fatalf("MappedBytes grew by %d B, the arena maps %d B", got, mapped)
	}
	// The tree and the key filter cost about EntryOverhead (104 B) per
	// entry of 1011 arena bytes: the arena on the heap would grow it by
	// ten times that.
	if heap > m.arena.used/2 {
		t.Fatalf("the heap grew by %d B for %d B of arena: the arena is on the heap", heap, m.arena.used)
	}
	runtime.KeepAlive(m)
}

// TestReleasedChunksAreUnmapped checks MT12's end: chunks released to the
// pools and then left there are unmapped once the GC drops them, and so
// are the chunks of a memtable dropped without Release. Without the
// handles' cleanups MappedBytes would only grow.
func TestReleasedChunksAreUnmapped(t *testing.T) {
	if _, ok := mapChunk(pageSize); !ok {
		t.Skip("this platform maps no arena chunks")
	}
	// Earlier tests' dropped memtables are unmapped by cleanups that run
	// after a collection: one landing while these fill once left
	// MappedBytes below its start (a fresh-clone CI run).
	settleMappings()
	start := MappedBytes()
	for i := range 4 {
		m := New()
		fillMemTable(m, 2<<20)
		if i%2 == 0 {
			m.Release()
		}
	}
	if MappedBytes() <= start {
		t.Fatalf("MappedBytes %d after filling memtables, %d before", MappedBytes(), start)
	}
	// sync.Pool keeps what it holds for one more collection (its victim
	// cache); the cleanups run on their own goroutine after the one that
	// finds a handle unreachable.
	deadline := time.Now().Add(10 * time.Second)
	for MappedBytes() > start {
		if time.Now().After(deadline) {
			t.Fatalf("MappedBytes stays at %d B, %d before: released chunks are never unmapped", MappedBytes(), start)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMappedChunksBounded checks MT12's bound: past maxMappedChunks the
// arena takes its chunks from the heap, and the memtable works the same.
func TestMappedChunksBounded(t *testing.T) {
	if _, ok := mapChunk(pageSize); !ok {
		t.Skip("this platform maps no arena chunks")
	}
	defer func(n int64) { maxMappedChunks = n }(maxMappedChunks)
	// A fresh-clone CI run saw 3 mappings in room for 2: an earlier
	// test's chunk was unmapped while the memtable filled.
	settleMappings()
	maxMappedChunks = mappedChunks.Load() + 2
	m := New()
	fillMemTable(m, 4<<20)
	mapped, onHeap := 0, 0
	for _, c := range m.arena.bufs {
		if c.mapped {
			mapped++
		} else {
			onHeap++
		}
	}
	if mapped > 2 || onHeap == 0 {
		t.Fatalf("%d chunks mapped and %d on the heap with room for 2 mappings", mapped, onHeap)
	}
	if mappedChunks.Load() > maxMappedChunks {
		t.Fatalf("%d chunks mapped, bound %d", mappedChunks.Load(), maxMappedChunks)
	}
	v := make([]byte, 1000)
	for i := range m.Len() {
		got, _, ok := m.Get(fmt.Appendf(nil, "key%08d", i), base.SeqNumMax)
		if !ok || len(got) != len(v) {
			t.Fatalf("key %d: found %v, %d bytes", i, ok, len(got))
		}
	}
}

// TestReleaseChunkOfNoPoolSize caught Release indexing the pools with -1:
// an entry of 16-256 KiB that does not fit the current chunk gets a chunk
// of its own size, which no pool holds, and releasing its memtable (a
// flush's last step, on the DB's background goroutine) panicked.
func TestReleaseChunkOfNoPoolSize(t *testing.T) {
	for _, n := range []int{minChunk + 1, 20 << 10, maxChunk/4 - 64} {
		for _, first := range []bool{true, false} {
			m := New()
			if !first { // the current chunk is then minChunk, the next 2x
				m.Set([]byte("small"), 1, []byte("v"))
			}
			m.Set([]byte("k"), 2, make([]byte, n))
			odd := 0
			for _, c := range m.arena.bufs {
				if chunkClass(len(c.b)) < 0 {
					odd++
				}
			}
			if (first || n > 2*minChunk) && odd == 0 {
				t.Fatalf("an entry of %d bytes (first %v) got a chunk of a pool's size", n, first)
			}
			m.Release()
		}
	}
}
