package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestBlockCacheBorrowsIdleMemTableMemory: with the memtables empty the
// block cache may hold BlockCacheSize plus memTableLoanTables memtables'
// worth, and reads use it; as writes fill the memtables the cache gives
// the memory back (evicting), so the cache's capacity and the memtables
// together never pass BlockCacheSize plus that allowance while the
// memtables are within it, and the capacity never falls below
// BlockCacheSize; a flush lends the memory out again.
func TestBlockCacheBorrowsIdleMemTableMemory(t *testing.T) {
	const memTable, cacheSize = 64 << 10, 64 << 10
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: memTable, BlockCacheSize: cacheSize, BlockSize: 1024})
	defer d.Close()
	allowance := int64(memTableLoanTables * memTable)
	step := allowance / cacheLoanSteps
	checks, lentOut, tookBack := 0, false, false
	check := func(label string) {
		t.Helper()
		checks++
		d.mu.Lock()
		used := d.mem.ApproximateSize()
		for _, m := range d.imm {
			used += m.ApproximateSize()
		}
		cm := d.cache.Metrics()
		d.mu.Unlock()
		switch {
		case cm.Size > cm.Capacity:
			t.Fatalf("%s: cache holds %d bytes, above its capacity %d", label, cm.Size, cm.Capacity)
		case cm.Capacity < cacheSize:
			t.Fatalf("%s: capacity %d below BlockCacheSize", label, cm.Capacity)
		case used <= allowance && cm.Capacity+used > cacheSize+allowance:
			t.Fatalf("%s: capacity %d and memtables %d pass BlockCacheSize + allowance %d", label, cm.Capacity, used, cacheSize+allowance)
		case used <= allowance && cm.Capacity < cacheSize+allowance-used-step:
			t.Fatalf("%s: capacity %d lends less than the memtables leave (%d used)", label, cm.Capacity, used)
		case used > allowance && cm.Capacity != cacheSize:
			t.Fatalf("%s: memtables hold %d, past the allowance, but the capacity is %d", label, used, cm.Capacity)
		}
		lentOut = lentOut || cm.Capacity >= cacheSize+allowance-step
		tookBack = tookBack || cm.Capacity < cacheSize+allowance/2
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%06d", i)) }
	const n = 3000
	for i := range n {
		if err := d.Set(key(i), make([]byte, 200), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("after the load")
	// An empty memtable's key filter is all it holds: the loan is whole
	// but for a step.
	if m := d.Metrics(); m.BlockCache.Capacity < cacheSize+allowance-step {
		t.Fatalf("memtables empty, capacity %d, want at least %d", m.BlockCache.Capacity, cacheSize+allowance-step)
	}
	// Reads of the whole DB (600 KB of blocks) fill the cache past
	// BlockCacheSize: the loan serves them.
	for range 2 {
		for i := range n {
			if _, err := d.Get(key(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if m := d.Metrics(); m.BlockCache.Size <= cacheSize {
		t.Fatalf("reads filled the cache to %d bytes, not past BlockCacheSize %d", m.BlockCache.Size, cacheSize)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 4000 {
		if err := d.Set(key(r.IntN(n)), make([]byte, 200), NoSync); err != nil {
			t.Fatal(err)
		}
		if i%25 == 0 {
			check(fmt.Sprintf("write %d", i))
		}
		if i%7 == 0 {
			if _, err := d.Get(key(r.IntN(n))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after the flush")
	if m := d.Metrics(); m.BlockCache.Capacity < cacheSize+allowance-step {
		t.Fatalf("after a flush emptied the memtables, capacity %d, want at least %d", m.BlockCache.Capacity, cacheSize+allowance-step)
	}
	if !lentOut || !tookBack {
		t.Fatalf("in %d checks the loan was never whole (%v) or never taken back (%v)", checks, lentOut, tookBack)
	}
}

// TestNoCacheLoan: a DB without a block cache has nothing to lend to, and
// NoCacheLoan keeps the cache at BlockCacheSize.
func TestNoCacheLoan(t *testing.T) {
	for _, c := range []struct {
		name         string
		opts         Options
		wantCapacity int64
	}{
		{"no cache", Options{BlockCacheSize: -1}, 0},
		{"NoCacheLoan", Options{BlockCacheSize: 64 << 10, NoCacheLoan: true}, 64 << 10},
	} {
		o := c.opts
		o.MemTableSize = 64 << 10
		d := openMem(t, vfs.NewMem(), &o)
		for i := range 2000 {
			if err := d.Set([]byte(fmt.Sprintf("k%05d", i)), make([]byte, 100), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		for i := range 2000 {
			if _, err := d.Get([]byte(fmt.Sprintf("k%05d", i))); err != nil {
				t.Fatal(err)
			}
		}
		if m := d.Metrics(); m.BlockCache.Capacity != c.wantCapacity || m.BlockCache.Lent != 0 || m.BlockCache.Size > c.wantCapacity {
			t.Errorf("%s: %+v", c.name, m.BlockCache)
		}
		d.Close()
	}
}
