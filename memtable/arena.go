package memtable

import "sync/atomic"

// Arena chunk sizes: the first chunk is small so that a memtable holding a
// handful of writes (tests, a DB that is opened and closed) costs little;
// each next one doubles up to maxChunk, so a 4 MiB memtable lives in about
// a dozen allocations instead of one per entry. An entry larger than a
// quarter of maxChunk gets a chunk of its own rather than wasting the rest
// of the current one.
const (
	minChunk = 16 << 10
	maxChunk = 1 << 20
)

// arena holds the key and value bytes of a memtable's entries (MT2, MT6).
// One writer appends; readers on any goroutine resolve a position to bytes.
// Chunks are never moved, and reused or unmapped only after Release
// (MT9, MT12), so a slice handed out stays valid until then.
type arena struct {
	// chunks is the published chunk directory: the writer replaces it when
	// it adds a chunk, readers load it. Entries only name chunks that were
	// published before the entry entered the tree.
	chunks atomic.Pointer[[][]byte]

	// Writer only (the memtable's write lock):
	cur    []byte // current chunk; cur[:fill] is handed out
	curIdx uint32 // cur's index in the directory
	fill   int
	// touched is how far into cur the pages are known present (MT8): a
	// multiple of pageSize, or len(cur).
	touched int
	used    int64 // bytes handed out plus the abandoned tails of chunks
	// bufs are the handles of the directory's chunks but an oversized
	// entry's own (MT12): holding them keeps the chunks mapped while the
	// arena lives, and Release passes those of the pools' sizes to them.
	bufs []*chunkBuf
}

func newArena() *arena {
	a := &arena{}
	a.chunks.Store(&[][]byte{})
	return a
}

// alloc returns n fresh bytes and their position. REQUIRES: the memtable's
// write lock (one writer).
func (a *arena) alloc(n int) (chunk, off uint32, b []byte) {
	if n > maxChunk/4 {
		c := make([]byte, n)
		a.used += int64(n)
		return a.publish(c), 0, c
	}
	if a.cur == nil || a.fill+n > len(a.cur) {
		size := minChunk
		if a.cur != nil {
			a.used += int64(len(a.cur) - a.fill) // the tail is lost (MT4)
			size = min(2*len(a.cur), maxChunk)
		}
		size = max(size, n)
		if c := takeChunk(size); c != nil {
			// Its pages are present: a memtable wrote them (MT9).
			a.bufs = append(a.bufs, c)
			a.cur, a.fill, a.touched = c.b, 0, len(c.b)
		} else {
			c := newChunkBuf(size)
			a.bufs = append(a.bufs, c)
			a.cur, a.fill, a.touched = c.b, 0, 0
		}
		a.curIdx = a.publish(a.cur)
	}
	a.touch(a.fill+n, n)
	off = uint32(a.fill)
	b = a.cur[a.fill : a.fill+n : a.fill+n]
	a.fill += n
	a.used += int64(n)
	return a.curIdx, off, b
}

// publish adds c to the directory and returns its index. The new directory
// is a fresh slice when the old one is full; appending in place is safe
// because no reader's directory extends to the new index.
func (a *arena) publish(c []byte) uint32 {
	dir := append(*a.chunks.Load(), c)
	a.chunks.Store(&dir)
	return uint32(len(dir) - 1)
}

// bytes returns the n bytes at (chunk, off), with capacity n so appending
// to them cannot overwrite a neighbour (MT2). Safe on any goroutine for a
// position of an entry it found in the tree.
func (a *arena) bytes(chunk, off, n uint32) []byte {
	c := (*a.chunks.Load())[chunk]
	return c[off : off+n : off+n]
}
