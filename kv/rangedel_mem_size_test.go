package kv

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// addNested adds n tombstones each inside the one before, as a user
// narrowing a purge would.
func addNested(m *memRangeDels, n int) {
	for i := range n {
		m.add(fmt.Appendf(nil, "k%06d", i), fmt.Appendf(nil, "k%06d", 2*n-i), base.SeqNum(i+1))
	}
}

// TestMemRangeDelIndexIsAccounted caught the memtable's range-tombstone
// index (the fragmented runs readers build) held outside the memtable's
// size: only the tombstone list was counted, so DeleteRanges with reads
// between them grew memory the flush trigger never saw.
func TestMemRangeDelIndexIsAccounted(t *testing.T) {
	var m memRangeDels
	addNested(&m, 4000)
	listBytes := m.accounted()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	idx := m.indexed()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(idx)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if held <= 0 {
		t.Skipf("the heap shrank by %d bytes while building the index: nothing to compare", -held)
	}
	// The index holds at least half what the heap grew by: the figure is
	// an approximation, but of the right size.
	if got := m.accounted() - listBytes; 2*got < held {
		t.Fatalf("the index adds %d bytes to the memtable's size; it holds %d of heap", got, held)
	}
}

// TestMemRangeDelIndexRotatesMemtable: the index's memory counts toward
// the rotation decision, so reads between many DeleteRanges bring the
// flush the index's size calls for.
func TestMemRangeDelIndexRotatesMemtable(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 256 << 10})
	defer d.Close()
	const n = 2000
	for i := range n {
		if err := d.DeleteRange(fmt.Appendf(nil, "k%06d", i), fmt.Appendf(nil, "k%06d", 2*n-i), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Get([]byte("k001000")); err == nil {
			t.Fatal("Get of a deleted key found it")
		}
	}
	d.mu.Lock()
	mem := d.mem
	d.mu.Unlock()
	if limit := int64(256 << 10); mem.flushSize() > limit+limit/2 {
		t.Fatalf("the mutable memtable's flush size is %d, past the %d limit: it was never rotated", mem.flushSize(), limit)
	}
	// The rotation hands the memtable to a background flush, which may
	// still be writing it: wait for it rather than race it.
	waitFor(t, fmt.Sprintf("a flush of the %d-byte memtable %d DeleteRanges with reads between them filled", 256<<10, n),
		func() bool { return d.Metrics().Flushes > 0 })
}
