package kv

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// TestSetAllocationBound pins what one Set costs the Go heap on the way
// through the pooled batch, the WAL and the memtable arena: well under one
// allocation, and at most setHeapBudget bytes beyond the key and value the
// memtable must copy. The memtable is large enough that nothing flushes,
// so no background work allocates meanwhile.
func TestSetAllocationBound(t *testing.T) {
	const setHeapBudget = 300
	for _, disableWAL := range []bool{false, true} {
		d, err := Open(t.TempDir(), &Options{MemTableSize: 64 << 20, DisableWAL: disableWAL})
		if err != nil {
			t.Fatal(err)
		}
		k, v := make([]byte, 16), make([]byte, 100)
		i := uint64(0)
		set := func() {
			i++
			binary.BigEndian.PutUint64(k, i*0x9e3779b97f4a7c15)
			if err := d.Set(k, v, NoSync); err != nil {
				t.Fatal(err)
			}
		}
		for range 1000 { // warm the pools and the first arena chunks
			set()
		}
		allocs := testing.AllocsPerRun(20000, set)
		const n = 20000
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			set()
		}
		runtime.ReadMemStats(&after)
		perSet := float64(after.TotalAlloc-before.TotalAlloc)/n - float64(len(k)+len(v))
		t.Logf("WAL disabled %v: %.3f allocations and %.0f bytes beyond key and value per Set", disableWAL, allocs, perSet)
		if allocs > 0.1 {
			t.Errorf("WAL disabled %v: %.3f allocations per Set, want <= 0.1", disableWAL, allocs)
		}
		if perSet > setHeapBudget {
			t.Errorf("WAL disabled %v: %.0f heap bytes per Set beyond key and value, want <= %d", disableWAL, perSet, setHeapBudget)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
