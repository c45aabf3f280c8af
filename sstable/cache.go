package sstable

import (
	"sync"
	"sync/atomic"
)

// Cache is a sharded LRU cache of decompressed, validated blocks, bounded
// by bytes and keyed by (file number, block offset). One Cache is shared by
// every Reader of an engine; each Reader must have a distinct FileNum.
// A nil *Cache is a valid, disabled cache (NewCache(0) returns nil).
//
// Safe for concurrent use: each shard has its own mutex, so readers of
// different blocks rarely contend.
type Cache struct {
	shards   []cacheShard
	capacity int64
	hits     atomic.Int64
	misses   atomic.Int64
}

// cacheEntryOverhead is charged per entry besides the block bytes: the
// block header, the map slot and the list node (~120 bytes measured with
// unsafe.Sizeof on 64-bit, rounded up).
const cacheEntryOverhead = 128

// maxCacheShards caps sharding; 16 shards keep lock contention low on the
// core counts an embedded store sees while leaving each shard big enough.
const maxCacheShards = 16

// minShardBytes keeps shards large enough to hold many 4 KiB blocks, so a
// small cache is not split into shards that each fit a couple of blocks.
const minShardBytes = 1 << 20

type cacheKey struct {
	fileNum, offset uint64
}

type cacheNode struct {
	key        cacheKey
	b          *block
	charge     int64
	prev, next *cacheNode
}

type cacheShard struct {
	mu sync.Mutex
	// The fields below are guarded by mu. list is a circular doubly linked
	// list with a sentinel; list.next is the most recently used node.
	m        map[cacheKey]*cacheNode
	list     cacheNode
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
func NewCache(capacity int64) *Cache {
	if capacity <= 0 {
		return nil
	}
	n := 1
	for n < maxCacheShards && capacity/int64(n*2) >= minShardBytes {
		n *= 2
	}
	c := &Cache{shards: make([]cacheShard, n), capacity: capacity}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = map[cacheKey]*cacheNode{}
		s.list.next, s.list.prev = &s.list, &s.list
		s.capacity = capacity / int64(n)
	}
	return c
}

func (c *Cache) shard(k cacheKey) *cacheShard {
	// fmix64-style mixing so consecutive offsets spread over shards.
	h := k.fileNum*0x9e3779b97f4a7c15 ^ k.offset
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return &c.shards[h&uint64(len(c.shards)-1)]
}

func (s *cacheShard) unlink(n *cacheNode) {
	n.prev.next, n.next.prev = n.next, n.prev
}

func (s *cacheShard) pushFront(n *cacheNode) {
	n.prev, n.next = &s.list, s.list.next
	s.list.next.prev = n
	s.list.next = n
}

// get returns the cached block, or nil, and counts the hit or miss.
func (c *Cache) get(fileNum, offset uint64) *block {
	if c == nil {
		return nil
	}
	k := cacheKey{fileNum, offset}
	s := c.shard(k)
	s.mu.Lock()
	n := s.m[k]
	if n != nil {
		s.unlink(n)
		s.pushFront(n)
	}
	s.mu.Unlock()
	if n == nil {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	return n.b
}

// set inserts a block, evicting least recently used blocks of its shard
// to stay within capacity. A block larger than a shard is not cached.
func (c *Cache) set(fileNum, offset uint64, b *block) {
	if c == nil {
		return
	}
	k := cacheKey{fileNum, offset}
	s := c.shard(k)
	charge := int64(len(b.data)) + cacheEntryOverhead
	if charge > s.capacity {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.m[k]; old != nil {
		s.unlink(old)
		s.size -= old.charge
		delete(s.m, k)
	}
	for s.size+charge > s.capacity {
		victim := s.list.prev
		s.unlink(victim)
		s.size -= victim.charge
		delete(s.m, victim.key)
	}
	n := &cacheNode{key: k, b: b, charge: charge}
	s.pushFront(n)
	s.m[k] = n
	s.size += charge
}

// EvictFile drops every block of fileNum, for when its table is deleted.
func (c *Cache) EvictFile(fileNum uint64) {
	if c == nil {
		return
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k, n := range s.m {
			if k.fileNum == fileNum {
				s.unlink(n)
				s.size -= n.charge
				delete(s.m, k)
			}
		}
		s.mu.Unlock()
	}
}

// Metrics returns the cache's counters and occupancy (zero for nil).
func (c *Cache) Metrics() CacheMetrics {
	if c == nil {
		return CacheMetrics{}
	}
	m := CacheMetrics{Hits: c.hits.Load(), Misses: c.misses.Load(), Capacity: c.capacity}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		m.Size += s.size
		m.Count += int64(len(s.m))
		s.mu.Unlock()
	}
	return m
}
