package kv

import (
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestCompactDropsVersionsASnapshotKeptAtTheBottom: versions a snapshot
// kept at the bottom, in tables with no tombstone, go once the snapshot
// is released and the range compacted again (compaction's C1): Compact
// drops what no open snapshot needs. The level-by-level Compact rewrote
// only the bottom tables holding tombstones, so these older versions
// stayed (the old Compact rewrote every table in range).
func TestCompactDropsVersionsASnapshotKeptAtTheBottom(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	const n = 100
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	set := func(round int) {
		for i := range n {
			if err := d.Set(key(i), fmt.Appendf(nil, "v%d", round), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries := func() (n uint64) {
		v := refCurrent(d)
		defer v.Unref()
		for l, ts := range v.Levels {
			for _, tm := range ts {
				if l != NumLevels-1 {
					t.Fatalf("table %d left at L%d", tm.FileNum, l)
				}
				n += tm.Entries()
			}
		}
		return n
	}
	compact := func(wantSteps uint64) {
		t.Helper()
		before := d.Metrics().Compaction.Manual
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := d.Metrics().Compaction.Manual - before; got != wantSteps {
			t.Errorf("Compact ran %d steps, want %d", got, wantSteps)
		}
	}
	set(0)
	s := d.NewSnapshot()
	set(1)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := entries(); got != 2*n {
		t.Fatalf("with the snapshot open: %d entries at the bottom, want %d", got, 2*n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	compact(1)
	if got := entries(); got != n {
		t.Errorf("snapshot released, then Compact: %d entries at the bottom, want %d", got, n)
	}
	// Nothing left to drop: a live range alone is not rewritten.
	compact(0)
	for i := range n {
		if v, err := d.Get(key(i)); err != nil || string(v) != "v1" {
			t.Fatalf("Get(%s) = %q, %v", key(i), v, err)
		}
	}
}
