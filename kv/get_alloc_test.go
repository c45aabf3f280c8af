//go:build !race

// The race detector makes sync.Pool drop items at random, so pooled
// objects on the Get path would be reallocated and these counts would not
// hold.

package kv

import (
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestGetCacheHitAllocatesOnlyTheValue pins the cost of a present-key Get
// served from the block cache: one allocation, the copy of the value the
// caller receives (sstable's BM1, K9: the read state is pinned without a
// lock or an allocation, the key is hashed into a value, the block is
// referenced and released).
func TestGetCacheHitAllocatesOnlyTheValue(t *testing.T) {
	d, val := openCompactedKeys(t)
	defer d.Close()
	key := []byte("key001234")
	get := func() {
		v, err := d.Get(key)
		if err != nil || len(v) != len(val) {
			t.Fatalf("Get = %d bytes, %v", len(v), err)
		}
	}
	get() // load the block into the cache
	before := d.cache.Metrics().Hits
	if n := testing.AllocsPerRun(200, get); n != 1 {
		t.Fatalf("cache-hit Get allocates %v times, want 1 (the value's copy)", n)
	}
	if d.cache.Metrics().Hits-before < 200 {
		t.Fatal("Gets did not hit the block cache")
	}
}

// TestGetAppendAllocatesNothing: with room in dst, GetAppend of a key a
// memtable holds, or whose block is cached, allocates nothing (Get's one
// allocation is its copy of the value).
func TestGetAppendAllocatesNothing(t *testing.T) {
	d, val := openCompactedKeys(t)
	defer d.Close()
	if err := d.Set([]byte("in-memtable"), val, NoSync); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	for _, k := range []string{"key001234", "in-memtable"} {
		key := []byte(k)
		get := func() {
			v, err := d.GetAppend(buf[:0], key)
			if err != nil || len(v) != len(val) {
				t.Fatalf("GetAppend(%s) = %d bytes, %v", key, len(v), err)
			}
		}
		get() // load the block into the cache
		if n := testing.AllocsPerRun(200, get); n != 0 {
			t.Fatalf("GetAppend(%s) into a buffer with room allocates %v times, want 0", key, n)
		}
	}
}

// openCompactedKeys opens an in-memory DB holding key000000..key001999, each
// with the returned 100-byte value, compacted into tables.
func openCompactedKeys(t *testing.T) (*DB, []byte) {
	t.Helper()
	d := openMem(t, vfs.NewMem(), &Options{DisableWAL: true})
	val := make([]byte, 100)
	for i := range 2000 {
		if err := d.Set([]byte(fmt.Sprintf("key%06d", i)), val, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	return d, val
}
