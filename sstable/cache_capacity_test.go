package sstable

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestCacheSetCapacity: shrinking evicts least recently used blocks until
// every shard fits (BM2 holds at every capacity), growing lets more in, a
// capacity of 0 empties the cache, and the shards are sized for the
// largest capacity the cache was made for.
func TestCacheSetCapacity(t *testing.T) {
	const block = 4096
	charge := int64(block + cacheEntryOverhead)
	c := NewResizableCache(4<<20, 16<<20)
	if want := len(NewCache(16 << 20).shards); len(c.shards) != want || want == len(NewCache(4<<20).shards) {
		t.Fatalf("%d shards for a cache of up to 16 MiB, want %d (a 16 MiB cache's, more than a 4 MiB one's)", len(c.shards), want)
	}
	fill := func(n int) {
		for i := range n {
			cachePut(c, 1, uint64(i), block)
		}
	}
	fill(4096) // 16 MiB of blocks into 4 MiB
	m := c.Metrics()
	if m.Capacity != 4<<20 || m.Size > m.Capacity || m.Size < m.Capacity-int64(len(c.shards))*charge {
		t.Fatalf("at 4 MiB: %+v", m)
	}
	c.SetCapacity(16 << 20)
	fill(4096)
	if m = c.Metrics(); m.Size > 16<<20 || m.Size < 12<<20 {
		t.Fatalf("grown to 16 MiB, holds %+v", m)
	}
	// The most recently used blocks survive a shrink.
	c.SetCapacity(1 << 20)
	if m = c.Metrics(); m.Capacity != 1<<20 || m.Size > 1<<20 {
		t.Fatalf("shrunk to 1 MiB, holds %+v", m)
	}
	if !cacheHas(c, 1, 4095) || cacheHas(c, 1, 0) {
		t.Fatal("the shrink did not keep the most recently used blocks")
	}
	c.SetCapacity(0)
	if m = c.Metrics(); m.Size != 0 || m.Count != 0 {
		t.Fatalf("capacity 0 holds %+v", m)
	}
	cachePut(c, 1, 1, block)
	if cacheHas(c, 1, 1) {
		t.Fatal("a block was cached at capacity 0")
	}
	var nilCache *Cache
	nilCache.SetCapacity(1 << 20) // a disabled cache stays disabled
}

// TestCacheSetCapacityConcurrent resizes the cache while readers insert
// and look up blocks, as the engine does while its memtables fill; with
// -race it checks the locking, and at the end the bound.
func TestCacheSetCapacityConcurrent(t *testing.T) {
	c := NewResizableCache(2<<20, 8<<20)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				off := uint64(r.IntN(4000))
				if !cacheHas(c, 1, off) {
					cachePut(c, 1, off, 4096)
				}
			}
		}()
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range 200 {
		c.SetCapacity(int64(1+r.IntN(8)) << 20)
	}
	close(stop)
	wg.Wait()
	c.SetCapacity(3 << 20)
	if m := c.Metrics(); m.Size > m.Capacity {
		t.Fatalf("size %d above capacity %d", m.Size, m.Capacity)
	}
}
