package kv

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// TestFillAllocationReusesArenas pins the Go heap a sequential fill costs
// per Set when memtables rotate and flush all along: a flushed memtable's
// arena goes to the next memtables (K12, memtable's MT9) instead of every
// memtable allocating its own, which was about 150 bytes a Set of
// 16+100-byte entries, and what set how often the GC ran during a fill.
// The B-tree's nodes go back to the DB's node pool likewise (memtable's
// MT10; about 155 bytes a Set more while the flush's Clone kept them from
// it). The figure includes the flushes' table writing.
func TestFillAllocationReusesArenas(t *testing.T) {
	const fillHeapBudget = 150 // bytes per Set, the key and value included
	if raceEnabled {
		t.Skip("the race detector drops pooled chunks at random")
	}
	d, err := Open(t.TempDir(), &Options{MemTableSize: 256 << 10, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	k, v := make([]byte, 16), make([]byte, 100)
	i := uint64(0)
	fill := func(n int) {
		for range n {
			i++
			binary.BigEndian.PutUint64(k, i)
			if err := d.Set(k, v, NoSync); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	fill(10000) // the first memtables' arenas, the pools, the caches
	const n = 60000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fill(n)
	runtime.ReadMemStats(&after)
	perSet := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("%.0f heap bytes per Set over %d flushes", perSet, d.Metrics().Flushes)
	if perSet > fillHeapBudget {
		t.Errorf("%.0f heap bytes per Set during a fill with flushes, want <= %d", perSet, fillHeapBudget)
	}
}
