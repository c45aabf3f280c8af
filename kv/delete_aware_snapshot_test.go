package kv

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// TestTombstoneMaxAgeAfterSnapshotReleased: deletes made while a snapshot
// is open reach the bottom level with the values they hide (the snapshot
// still sees those). Once the snapshot is closed, TombstoneMaxAge still
// bounds how long they stay: a bottom table is compacted into itself when
// its tombstones are old and no snapshot is older than its entries. They
// stayed for good before, as no level was due and P5 looked only above the
// bottom. While the snapshot is open nothing it sees may go, and once the
// garbage is gone no compaction repeats.
func TestTombstoneMaxAgeAfterSnapshotReleased(t *testing.T) {
	withTickInterval(t, time.Millisecond)
	d := openMem(t, vfs.NewMem(), &Options{TombstoneMaxAge: 5 * time.Millisecond})
	defer d.Close()
	const n = 200
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%04d", i)) }
	for i := 0; i < n; i++ {
		if err := d.Set(key(i), make([]byte, 100), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	for i := 0; i < n; i += 2 {
		if err := d.Delete(key(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tombstones := func() (above, bottom uint64) {
		m := d.Metrics()
		for l, lm := range m.Levels {
			if l == NumLevels-1 {
				bottom += lm.Tombstones
			} else {
				above += lm.Tombstones
			}
		}
		return above, bottom
	}
	waitFor(t, "the tombstones at the bottom", func() bool {
		above, bottom := tombstones()
		return above == 0 && bottom > 0 && !d.Metrics().Compaction.InProgress
	})
	// Held by the snapshot: they stay, and it reads every value.
	time.Sleep(30 * time.Millisecond)
	if _, bottom := tombstones(); bottom != n/2 {
		t.Fatalf("%d tombstones at the bottom with the snapshot open, want %d", bottom, n/2)
	}
	for i := 0; i < n; i++ {
		if _, err := snap.Get(key(i)); err != nil {
			t.Fatalf("snapshot Get %s: %v", key(i), err)
		}
	}
	before := liveTableBytes(d)
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tombstones dropped after the snapshot closed", func() bool {
		_, bottom := tombstones()
		return bottom == 0 && !d.Metrics().Compaction.InProgress
	})
	if after := liveTableBytes(d); after >= before*3/4 {
		t.Fatalf("table bytes %d, then %d: the hidden values stayed", before, after)
	}
	for i := 0; i < n; i++ {
		_, err := d.Get(key(i))
		if deleted := i%2 == 0; deleted != errors.Is(err, ErrNotFound) || (!deleted && err != nil) {
			t.Fatalf("Get %s: %v", key(i), err)
		}
	}
	// Nothing left to do: no compaction repeats.
	ages := d.Metrics().Compaction.AgeCompactions
	time.Sleep(30 * time.Millisecond)
	if again := d.Metrics().Compaction.AgeCompactions; again != ages {
		t.Fatalf("age compactions went on after the garbage was gone: %d, then %d", ages, again)
	}
}
