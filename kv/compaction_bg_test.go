package kv

import (
	"fmt"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// TestSchedulingCheckDoesNotCopyTheTree: the compaction picker reads the
// published version itself (manifest's V1), so a scheduling check that finds
// nothing due allocates nothing, however many tables the tree holds. (It
// used to rebuild a picker-shaped copy of every level under DB.mu on each
// check.)
func TestSchedulingCheckDoesNotCopyTheTree(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{L0CompactionThreshold: 100})
	for i := 0; i < 20; i++ {
		if err := d.Set([]byte(fmt.Sprintf("key%03d", i)), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.current.Levels[0]); n != 20 {
		t.Fatalf("%d L0 tables, want 20", n)
	}
	allocs := testing.AllocsPerRun(100, d.maybeScheduleCompactionLocked)
	if allocs != 0 {
		t.Fatalf("a scheduling check with nothing due allocated %.0f times", allocs)
	}
	if d.compacting {
		t.Fatal("20 L0 tables against a trigger of 100 started a compaction")
	}
}

// TestFlushRunsWhileCompactionRuns: a compaction holds compactMu for its
// whole run; a flush must not wait for it, or every long L0 compaction
// would stop the memtables from draining and writers would stall on the
// flush queue as well as on L0.
func TestFlushRunsWhileCompactionRuns(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	d.compactMu.Lock() // what a running compaction holds
	defer d.compactMu.Unlock()
	if err := d.Set([]byte("k"), []byte("v"), NoSync); err != nil {
		t.Fatal(err)
	}
	returnsWithin(t, 10*time.Second, "Flush waited for the running compaction", d.Flush)
	if n := d.Metrics().Levels[0].Tables; n != 1 {
		t.Fatalf("%d L0 tables after the flush, want 1", n)
	}
}
