package kv

import (
	"fmt"
	"testing"
)

// TestCompactionsKeepReadersBlocksCached: a compaction reads its input
// tables without putting their blocks in the block cache (sstable's
// Iter.SkipCacheFill), so the blocks readers use stay there. Keys a* are
// compacted to tables of their own and read once, which caches their
// blocks; then keys b*, four times the cache, are written and compacted.
// Reading the a* keys again must read no block from a file. Before, the
// compaction's blocks went into the cache and evicted every a* block: the
// second pass missed as often as the first.
func TestCompactionsKeepReadersBlocksCached(t *testing.T) {
	const cacheSize = 512 << 10
	d, err := Open(t.TempDir(), &Options{MemTableSize: 256 << 10, BlockCacheSize: cacheSize, TargetFileSize: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	val := make([]byte, 100)
	load := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if err := d.Set(fmt.Appendf(nil, "%s%06d", prefix, i*7919%n), val, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Compact([]byte(prefix), []byte(prefix+"~")); err != nil {
			t.Fatal(err)
		}
	}
	const hot = 1500 // about 170 KB of blocks: a third of the cache
	readHot := func() (misses uint64) {
		t.Helper()
		before := d.Metrics().BlockCache.Misses
		for i := range hot {
			if _, err := d.Get(fmt.Appendf(nil, "a%06d", i)); err != nil {
				t.Fatal(err)
			}
		}
		return d.Metrics().BlockCache.Misses - before
	}
	load("a", hot)
	if first := readHot(); first == 0 {
		t.Fatal("the first pass over a* found every block cached: nothing to keep")
	}
	compactions := d.Metrics().Compactions
	load("b", 4*cacheSize/len(val))
	if d.Metrics().Compactions == compactions {
		t.Fatal("no compaction ran over b*")
	}
	if again := readHot(); again != 0 {
		t.Fatalf("after compacting b*, reading a* again missed the cache %d times", again)
	}
}
