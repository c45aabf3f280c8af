package sstable

import (
	"sync"
	"sync/atomic"
)

// Cache is a sharded LRU cache of decompressed, parsed data blocks,
// bounded by bytes and keyed by (file number, block offset). One Cache is
// shared by every Reader of an engine; each Reader must have a distinct
// FileNum. A nil *Cache is a valid, disabled cache (NewCache(0) returns
// nil).
//
// The cache owns its blocks' memory (BM1, BM2 in doc.go): an entry holds one
// reference to its blockBuf and every lookup hands out another, so a Get
// or an iterator may alias a block for as long as it holds its reference,
// even after the entry is evicted; the memory is recycled only when the
// last reference goes.
//
// Safe for concurrent use: each shard has its own mutex, so readers of
// different blocks rarely contend.
type Cache struct {
	shards   []cacheShard
	capacity atomic.Int64 // SetCapacity's last value
	hits     atomic.Int64
	misses   atomic.Int64
}

// cacheEntryOverhead is charged per entry besides the block's buffer: the
// blockBuf header and the map slot (~130 bytes with unsafe.Sizeof on
// 64-bit plus a map slot, rounded).
const cacheEntryOverhead = 160

// maxCacheShards caps sharding; 16 shards keep lock contention low on the
// core counts an embedded store sees while leaving each shard big enough.
const maxCacheShards = 16

// minShardBytes keeps shards large enough to hold many 4 KiB blocks, so a
// small cache is not split into shards that each fit a couple of blocks.
const minShardBytes = 1 << 20

type cacheKey struct {
	fileNum, offset uint64
}

type cacheShard struct {
	mu sync.Mutex
	// The fields below are guarded by mu. list is a circular doubly linked
	// list through blockBuf.prev/next with a sentinel; list.next is the
	// most recently used entry.
	m        map[cacheKey]*blockBuf
	list     blockBuf
	size     int64
	capacity int64
}

// CacheMetrics is a snapshot of a cache's state.
type CacheMetrics struct {
	Hits, Misses int64
	Size         int64 // bytes charged, overhead included
	Count        int64 // blocks held
	Capacity     int64
}

// NewCache returns a cache holding up to capacity bytes, or nil (caching
// off) when capacity <= 0.
func NewCache(capacity int64) *Cache { return NewResizableCache(capacity, capacity) }

// NewResizableCache is NewCache for a cache whose capacity SetCapacity
// will move between capacity and maxCapacity: the shards are as many as
// maxCapacity warrants, so growing the cache never leaves it split into
// more locks than its size needs, nor shrinking it into too few.
func NewResizableCache(capacity, maxCapacity int64) *Cache {
	if capacity <= 0 {
		return nil
	}
	n := 1
	for n < maxCacheShards && max(capacity, maxCapacity)/int64(n*2) >= minShardBytes {
		n *= 2
	}
	c := &Cache{shards: make([]cacheShard, n)}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = map[cacheKey]*blockBuf{}
		s.list.next, s.list.prev = &s.list, &s.list
	}
	c.SetCapacity(capacity)
	return c
}

// SetCapacity bounds the cache at capacity bytes from now on, evicting the
// least recently used blocks of each shard that holds more (a block still
// referenced stays readable, BM1). An engine moves it when memory lent to
// the cache is wanted back, or free again. A capacity <= 0 empties the
// cache and keeps it empty until raised.
func (c *Cache) SetCapacity(capacity int64) {
	if c == nil {
		return
	}
	capacity = max(capacity, 0)
	c.capacity.Store(capacity)
	per := capacity / int64(len(c.shards))
	var evicted []*blockBuf
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		s.capacity = per
		for s.size > s.capacity {
			evicted = append(evicted, s.remove(s.list.prev))
		}
		s.mu.Unlock()
		for _, b := range evicted {
			b.release()
		}
		evicted = evicted[:0]
	}
}

func (c *Cache) shard(k cacheKey) *cacheShard {
	// fmix64-style mixing so consecutive offsets spread over shards.
	h := k.fileNum*0x9e3779b97f4a7c15 ^ k.offset
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return &c.shards[h&uint64(len(c.shards)-1)]
}

func (s *cacheShard) unlink(b *blockBuf) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
}

func (s *cacheShard) pushFront(b *blockBuf) {
	b.prev, b.next = &s.list, s.list.next
	s.list.next.prev = b
	s.list.next = b
}

// remove drops an entry from the shard and returns it; the caller releases
// the cache's reference once the lock is dropped. REQUIRES: s.mu held.
func (s *cacheShard) remove(b *blockBuf) *blockBuf {
	s.unlink(b)
	s.size -= b.charge
	delete(s.m, b.key)
	return b
}

// get returns the cached block with a reference the caller must release,
// or nil, and counts the hit or miss.
func (c *Cache) get(fileNum, offset uint64) *blockBuf {
	if c == nil {
		return nil
	}
	k := cacheKey{fileNum, offset}
	s := c.shard(k)
	s.mu.Lock()
	b := s.m[k]
	if b != nil {
		b.ref() // the entry's own reference keeps b alive while locked
		s.unlink(b)
		s.pushFront(b)
	}
	s.mu.Unlock()
	if b == nil {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	return b
}

// set inserts a parsed block the caller holds a reference to; the cache
// takes a reference of its own and the caller keeps its one. It evicts
// least recently used blocks of the shard to stay within capacity, so the
// bytes charged never exceed it (BM2). A block larger than a shard is not
// cached. Replacing an entry for the same key (two concurrent misses)
// drops the older one.
func (c *Cache) set(fileNum, offset uint64, b *blockBuf) {
	if c == nil {
		return
	}
	k := cacheKey{fileNum, offset}
	s := c.shard(k)
	charge := int64(len(b.buf)) + cacheEntryOverhead
	var evicted []*blockBuf
	var stack [4]*blockBuf
	evicted = stack[:0]
	s.mu.Lock()
	if charge > s.capacity { // SetCapacity moves it: read under the lock
		s.mu.Unlock()
		return
	}
	b.ref()
	b.key, b.charge = k, charge
	if old := s.m[k]; old != nil {
		evicted = append(evicted, s.remove(old))
	}
	for s.size+charge > s.capacity {
		evicted = append(evicted, s.remove(s.list.prev))
	}
	s.pushFront(b)
	s.m[k] = b
	s.size += charge
	s.mu.Unlock()
	for _, v := range evicted {
		v.release()
	}
}

// EvictFile drops every block of fileNum, for when its table is closed.
// Blocks still referenced by a Get or an iterator stay readable until
// those references are released (BM1).
func (c *Cache) EvictFile(fileNum uint64) {
	if c == nil {
		return
	}
	var evicted []*blockBuf
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, b := range s.m {
			if k.fileNum == fileNum {
				evicted = append(evicted, s.remove(b))
			}
		}
		s.mu.Unlock()
		for _, b := range evicted {
			b.release()
		}
		evicted = evicted[:0]
	}
}

// Metrics returns the cache's counters and occupancy (zero for nil).
func (c *Cache) Metrics() CacheMetrics {
	if c == nil {
		return CacheMetrics{}
	}
	m := CacheMetrics{Hits: c.hits.Load(), Misses: c.misses.Load(), Capacity: c.capacity.Load()}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		m.Size += s.size
		m.Count += int64(len(s.m))
		s.mu.Unlock()
	}
	return m
}
