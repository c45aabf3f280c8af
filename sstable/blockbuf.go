package sstable

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/invariants"
)

// blockBuf is block memory with a reference count: a raw read from the
// file, or a parsed block that the cache and any number of iterators and
// Gets share. Memory is recycled into size-class pools when the last
// reference is released (BM1), so a steady stream of cache misses reuses a
// bounded set of buffers instead of allocating two per miss.
type blockBuf struct {
	buf   []byte // the whole allocation; its length is the size class
	blk   block  // the parsed view over buf[:n] once parsed
	refs  atomic.Int32
	class int8 // index into bufPools, or -1 when not pooled

	// Cache bookkeeping, guarded by the owning cache shard's mutex.
	key        cacheKey
	charge     int64
	prev, next *blockBuf
}

// Buffer size classes: multiples of 1 KiB up to 64 KiB (a 4 KiB block
// grows by a few bytes of restarts and rarely wastes more than 1 KiB),
// then powers of two up to 4 MiB. A larger block is allocated plainly and
// left to the garbage collector.
const (
	bufStepBytes    = 1 << 10
	bufStepLimit    = 64 << 10
	bufPooledLimit  = 4 << 20
	numStepClasses  = bufStepLimit / bufStepBytes // 64 classes: 1 KiB .. 64 KiB
	numPow2Classes  = 6                           // 128 KiB .. 4 MiB
	numBufClasses   = numStepClasses + numPow2Classes
	poisonByte      = 0xdb
	unpooledBufSize = -1
)

var bufPools [numBufClasses]sync.Pool

// liveBufs counts buffers handed out by newBlockBuf and not yet recycled,
// for tests that check every reference is released (BM1).
var liveBufs atomic.Int64

// bufClass returns the size class for n bytes and its size, or -1 when n
// is too large to pool.
func bufClass(n int) (class int, size int) {
	if n <= bufStepLimit {
		c := (max(n, 1) + bufStepBytes - 1) / bufStepBytes
		return c - 1, c * bufStepBytes
	}
	size = bufStepLimit * 2
	for c := numStepClasses; c < numBufClasses; c++ {
		if n <= size {
			return c, size
		}
		size *= 2
	}
	return unpooledBufSize, n
}

// newBlockBuf returns a buffer of at least n bytes holding one reference.
// Its contents are garbage: the caller overwrites buf[:n].
func newBlockBuf(n int) *blockBuf {
	liveBufs.Add(1)
	class, size := bufClass(n)
	if class >= 0 {
		if b, _ := bufPools[class].Get().(*blockBuf); b != nil {
			b.refs.Store(1)
			return b
		}
	}
	b := &blockBuf{buf: make([]byte, size), class: int8(class)}
	b.refs.Store(1)
	return b
}

// ref adds a reference. REQUIRES: the caller holds one already, or the
// cache shard holding b is locked (its reference keeps b alive).
func (b *blockBuf) ref() { b.refs.Add(1) }

// release drops a reference; the last one recycles the memory (BM1). In
// invariants builds recycled memory is poisoned first, so a reader that
// kept a slice past its release reads garbage that tests notice.
func (b *blockBuf) release() {
	switch n := b.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic(fmt.Sprintf("sstable: block buffer released %d times too often", -n))
	}
	liveBufs.Add(-1)
	if invariants.Enabled {
		poison(b.buf)
	}
	b.blk = block{}
	b.prev, b.next = nil, nil
	if b.class >= 0 {
		bufPools[b.class].Put(b)
	}
}

// poisonBlock is a block's worth of poisonByte; poison copies it rather than
// storing byte by byte, which the race detector makes slow.
var poisonBlock = func() []byte {
	p := make([]byte, 4<<10)
	for i := range p {
		p[i] = poisonByte
	}
	return p
}()

// poison overwrites recycled memory so a read after release is visible.
func poison(p []byte) {
	for len(p) > 0 {
		p = p[copy(p, poisonBlock):]
	}
}
