package sstable

import (
	"bufio"
	"io"
	"sync"
)

// writerBufSize is the write buffer of every Writer: large enough that a
// table reaches the file in a few hundred large writes.
const writerBufSize = 256 << 10

// Pools of the per-table scratch a Writer needs from NewWriter to Finish:
// the write buffer and the slice of key hashes the filter is built from.
// A flush or compaction writes table after table, and fresh ones for each
// would cost the Go heap about 60 bytes per entry written (a 2 MiB table's
// hash slice grows by doubling to some 17,000 hashes, then is dropped),
// which the writers of a fill pay back as GC assists (docs/design.md,
// "Flushes that allocate little"). Nothing in either buffer outlives
// the table: Policy.Build does not retain the hashes it is given, and the
// write buffer is flushed by Finish before it is released.
var (
	writeBufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, writerBufSize) }}
	hashesPool   sync.Pool // *[]uint64, length 0
)

// getWriteBuf returns a pooled write buffer that writes to f.
func getWriteBuf(f io.Writer) *bufio.Writer {
	bw := writeBufPool.Get().(*bufio.Writer)
	bw.Reset(f)
	return bw
}

// getHashes returns a pooled, empty hash slice (nil when the pool is empty).
func getHashes() []uint64 {
	if p, ok := hashesPool.Get().(*[]uint64); ok {
		return (*p)[:0]
	}
	return nil
}

// release returns the writer's pooled buffers once the table is finished
// or abandoned; the writer must not write again (w.done is set).
func (w *Writer) release() {
	if w.bw != nil {
		w.bw.Reset(nil) // drop the file and any unflushed bytes of a failed table
		writeBufPool.Put(w.bw)
		w.bw = nil
	}
	if cap(w.hashes) > 0 {
		hs := w.hashes[:0]
		hashesPool.Put(&hs)
		w.hashes = nil
	}
}
