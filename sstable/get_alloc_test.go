//go:build !race

// The race detector makes sync.Pool drop items at random, so the pooled
// block iterator would be reallocated and these counts would not hold.

package sstable

import (
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// TestGetCacheHitAllocatesNothing pins the cache-hit Get path: with a
// destination that has room for the value, GetHashed allocates nothing
// (C1: the block is referenced, read and released, never copied).
func TestGetCacheHitAllocatesNothing(t *testing.T) {
	entries := []kv{}
	for i := range 500 {
		k := base.MakeInternalKey([]byte{'k', byte(i >> 8), byte(i)}, base.SeqNum(i+1), base.KindSet)
		entries = append(entries, kv{key: k, value: make([]byte, 100)})
	}
	fs := vfs.NewMem()
	writeTable(t, fs, "/t", entries, WriterOptions{})
	r := openTable(t, fs, "/t", ReaderOptions{Cache: NewCache(1 << 20)})
	defer r.Close()
	uk := entries[123].key.UserKey
	h := filters.Hash(uk)
	dst := make([]byte, 0, 128)
	get := func() {
		v, _, found, err := r.GetHashed(dst[:0], uk, h, base.SeqNumMax, nil)
		if err != nil || !found || len(v) != 100 {
			t.Fatalf("Get = %d bytes, %v, %v", len(v), found, err)
		}
	}
	get() // load the block into the cache
	if n := testing.AllocsPerRun(200, get); n != 0 {
		t.Fatalf("cache-hit Get allocates %v times, want 0", n)
	}
	if r.Stats().CacheHits.Load() < 200 {
		t.Fatalf("Gets did not hit the cache: %+v", r.Stats().Snapshot())
	}
}
