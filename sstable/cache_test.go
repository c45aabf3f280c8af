package sstable

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// cachePut inserts a fresh block of size bytes (a size-class multiple, so
// its charge is exact) and drops the caller's reference, as a reader does
// once its Get is done.
func cachePut(c *Cache, fileNum, offset uint64, size int) {
	b := newBlockBuf(size)
	c.set(fileNum, offset, b)
	b.release()
}

// cacheHas looks a block up and releases the reference the lookup took.
func cacheHas(c *Cache, fileNum, offset uint64) bool {
	b := c.get(fileNum, offset)
	if b != nil {
		b.release()
	}
	return b != nil
}

// TestCacheLRUByBytes checks the size bound, LRU order, EvictFile and the
// nil (disabled) cache.
func TestCacheLRUByBytes(t *testing.T) {
	c := NewCache(10 * (1024 + cacheEntryOverhead)) // one shard: below minShardBytes
	if len(c.shards) != 1 {
		t.Fatalf("%d shards for a small cache", len(c.shards))
	}
	for i := range 10 {
		cachePut(c, 1, uint64(i), 1024)
	}
	if m := c.Metrics(); m.Count != 10 || m.Size != 10*(1024+cacheEntryOverhead) {
		t.Fatalf("after 10 inserts: %+v", m)
	}
	cacheHas(c, 1, 0) // 0 becomes most recent; 1 is now the LRU victim
	cachePut(c, 1, 10, 1024)
	if cacheHas(c, 1, 1) || !cacheHas(c, 1, 0) || !cacheHas(c, 1, 10) {
		t.Fatal("LRU evicted the wrong block")
	}
	if m := c.Metrics(); m.Size > m.Capacity {
		t.Fatalf("size %d above capacity %d", m.Size, m.Capacity)
	}
	cachePut(c, 1, 99, 1<<20) // larger than the shard: not cached
	if cacheHas(c, 1, 99) {
		t.Fatal("oversized block cached")
	}
	cachePut(c, 2, 0, 1024)
	c.EvictFile(1)
	if m := c.Metrics(); m.Count != 1 || !cacheHas(c, 2, 0) {
		t.Fatalf("EvictFile(1) left %+v", m)
	}
	var nilCache *Cache
	cachePut(nilCache, 1, 1, 1)
	if NewCache(0) != nil || cacheHas(nilCache, 1, 1) || nilCache.Metrics() != (CacheMetrics{}) {
		t.Fatal("disabled cache is not inert")
	}
	if big := NewCache(1 << 30); len(big.shards) != maxCacheShards {
		t.Fatalf("1 GiB cache has %d shards", len(big.shards))
	}
}

// TestCacheConcurrent hammers a sharded cache from several goroutines
// (-race) and checks the byte bound afterwards.
func TestCacheConcurrent(t *testing.T) {
	c := NewCache(4 << 20)
	var users testutil.Group
	users.GoRandom(4, 1, func(rng *rand.Rand) error {
		for range 20000 {
			f, off := rng.Uint64N(4), rng.Uint64N(2000)
			if !cacheHas(c, f, off) {
				cachePut(c, f, off, 4096)
			}
			if rng.IntN(5000) == 0 {
				c.EvictFile(f)
			}
		}
		return nil
	})
	users.Wait()
	if m := c.Metrics(); m.Size > m.Capacity || m.Hits == 0 || m.Misses == 0 {
		t.Fatalf("%+v", m)
	}
}

// TestReaderConcurrent runs Gets and iterators on one reader with a shared
// small cache from several goroutines under -race, checking every answer.
func TestReaderConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	entries := makeEntries(rng, 20000, keyGens["plain"], func() int { return 50 })
	fs := vfs.NewMem()
	writeTable(t, fs, "/t", entries, WriterOptions{})
	stats := &Stats{}
	r := openTable(t, fs, "/t", ReaderOptions{Cache: NewCache(256 << 10), Stats: stats})
	var readers testutil.Group
	readers.GoRandom(4, 2, func(rng *rand.Rand) error {
		for range 3000 {
			e := entries[rng.IntN(len(entries))]
			want, _ := modelGet(entries, e.key.UserKey, base.SeqNumMax)
			v, kind, ok, err := r.Get(e.key.UserKey, base.SeqNumMax)
			if err != nil || !ok || kind != want.key.Kind() || string(v) != string(want.value) {
				return fmt.Errorf("Get(%q) = %v %v %v", e.key.UserKey, ok, kind, err)
			}
		}
		it := r.NewIter(nil, nil)
		i := 0
		for ok := it.First(); ok && i < 3000; ok = it.Next() {
			if !sameEntry(it, entries[i]) {
				return fmt.Errorf("iterator entry %d wrong", i)
			}
			i++
		}
		return nil
	})
	for _, err := range readers.Wait() {
		t.Fatal(err)
	}
	if s := stats.Snapshot(); s.FilterChecks != 12000 || s.FilterTruePositives != 12000 {
		t.Fatalf("shared stats %+v", s)
	}
}

// TestIterSkipCacheFill: an iterator told to skip the cache fill (a
// compaction's) reads every entry exactly and leaves the cache empty,
// where a plain one fills it; once a plain scan has cached the blocks, a
// skipping iterator takes them from the cache and reads no block from the
// file.
func TestIterSkipCacheFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	entries := makeEntries(rng, 5000, keyGens["plain"], func() int { return 100 })
	fs := vfs.NewMem()
	writeTable(t, fs, "/t", entries, WriterOptions{})
	cache := NewCache(8 << 20)
	stats := &Stats{}
	startLive := liveBufs.Load()
	r := openTable(t, fs, "/t", ReaderOptions{Cache: cache, Stats: stats})
	defer r.Close()
	blocks := int64(len(r.index))
	if blocks < 10 {
		t.Fatalf("only %d data blocks; the test wants many", blocks)
	}
	scan := func(skip bool) (reads int64) {
		t.Helper()
		before := stats.DataBlockReads.Load()
		it := r.NewIter(nil, nil)
		if skip {
			it.SkipCacheFill()
		}
		checkForwardWalk(t, it, entries)
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		return stats.DataBlockReads.Load() - before
	}
	if reads := scan(true); reads != blocks {
		t.Fatalf("a skipping scan read %d blocks of %d", reads, blocks)
	}
	if m := cache.Metrics(); m.Count != 0 {
		t.Fatalf("a skipping scan left %d blocks in the cache", m.Count)
	}
	if reads := scan(false); reads != blocks || cache.Metrics().Count != blocks {
		t.Fatalf("a plain scan read %d blocks and cached %d, want %d", reads, cache.Metrics().Count, blocks)
	}
	if reads := scan(true); reads != 0 {
		t.Fatalf("a skipping scan read %d blocks the cache held", reads)
	}
	if live := liveBufs.Load() - startLive; live != blocks {
		t.Fatalf("%d block buffers live, want the %d the cache holds", live, blocks)
	}
}
