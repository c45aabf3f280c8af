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

// TestScanSkipCacheFill: a scan with IterOptions.SkipCacheFill, over
// tables in L0 and below that hold four times the cache, yields every key
// and leaves the cache as the hot keys' Gets filled it: reading those
// again misses nothing. The same scan without the option evicts them (the
// check that the scan would have mattered), and a skipping scan still
// takes the blocks the cache holds (no misses over a small range a plain
// scan read just before).
func TestScanSkipCacheFill(t *testing.T) {
	const cacheSize = 512 << 10
	// No automatic compaction: the tables must stay as they are between
	// the scans, or a scan would miss on a compaction's new tables.
	d, err := Open(t.TempDir(), &Options{MemTableSize: 256 << 10, BlockCacheSize: cacheSize, TargetFileSize: 128 << 10, DisableAutomaticCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	val := make([]byte, 100)
	n := 4 * cacheSize / len(val)
	for i := range n {
		if err := d.Set(fmt.Appendf(nil, "k%06d", i*7919%n), val, nil); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if m := d.Metrics(); m.Levels[0].Tables == 0 || m.Levels[NumLevels-1].Tables == 0 {
		t.Fatalf("want tables in L0 and L6: %v", m)
	}
	misses := func() uint64 { return d.Metrics().BlockCache.Misses }
	const hot = 1500
	readHot := func() uint64 {
		t.Helper()
		before := misses()
		for i := range hot {
			if _, err := d.Get(fmt.Appendf(nil, "k%06d", i)); err != nil {
				t.Fatal(err)
			}
		}
		return misses() - before
	}
	scan := func(o *IterOptions) (keys int) {
		t.Helper()
		it := d.NewIter(o)
		for ok := it.First(); ok; ok = it.Next() {
			keys++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if first := readHot(); first == 0 {
		t.Fatal("the first pass over the hot keys found every block cached")
	}
	small := IterOptions{LowerBound: []byte("k000000"), UpperBound: []byte("k000100")}
	scan(&small) // caches every block the range touches
	small.SkipCacheFill = true
	before := misses()
	if got := scan(&small); got != 100 {
		t.Fatalf("bounded skipping scan saw %d keys, want 100", got)
	}
	if m := misses() - before; m != 0 {
		t.Fatalf("a skipping scan over cached blocks missed %d times", m)
	}
	if got := scan(&IterOptions{SkipCacheFill: true}); got != n {
		t.Fatalf("skipping scan saw %d keys, want %d", got, n)
	}
	if again := readHot(); again != 0 {
		t.Fatalf("after a skipping scan the hot keys missed the cache %d times", again)
	}
	if got := scan(nil); got != n {
		t.Fatalf("plain scan saw %d keys, want %d", got, n)
	}
	if again := readHot(); again == 0 {
		t.Fatal("a plain scan of four times the cache left every hot block cached: the test proves nothing")
	}
}
