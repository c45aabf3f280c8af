package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// smallTree makes compactions happen after a few KiB of writes.
func smallTree() *Options {
	return &Options{MemTableSize: 4 << 10, LBaseMaxBytes: 16 << 10, TargetFileSize: 8 << 10, L0CompactionThreshold: 2}
}

func waitIdle(t *testing.T, d *DB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for d.Metrics().Compaction.InProgress {
		if time.Now().After(deadline) {
			t.Fatal("compaction still running after 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBackgroundCompactionKeepsTheTreeShaped(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, smallTree())
	rng := rand.New(rand.NewPCG(1, 1))
	model := map[string]string{}
	for i := 0; i < 20000; i++ {
		k := fmt.Sprintf("key%05d", rng.IntN(3000))
		if rng.IntN(4) == 0 {
			d.Delete([]byte(k), NoSync)
			delete(model, k)
		} else {
			v := fmt.Sprintf("v%d", i)
			d.Set([]byte(k), []byte(v), NoSync)
			model[k] = v
		}
	}
	d.Flush()
	waitIdle(t, d)
	m := d.Metrics()
	deeper := 0
	for l := 1; l < NumLevels; l++ {
		deeper += m.Levels[l].Tables
	}
	if m.Compactions == 0 || deeper == 0 {
		t.Fatalf("no background compaction ran:\n%s", m)
	}
	if m.Levels[0].Tables >= 8 {
		t.Fatalf("L0 grew to %d tables", m.Levels[0].Tables)
	}
	check := func(d *DB) {
		for i := 0; i < 3000; i++ {
			k := fmt.Sprintf("key%05d", i)
			v, err := d.Get([]byte(k))
			want, ok := model[k]
			if ok != (err == nil) || (ok && string(v) != want) {
				t.Fatalf("%s = %q, %v; want %q (present %v)", k, v, err, want, ok)
			}
		}
	}
	check(d)
	d.Close()
	d = openMem(t, fs, smallTree())
	defer d.Close()
	check(d)
	if err := d.current.CheckOrdering(); err != nil {
		t.Fatal(err)
	}
}

// TestWriteStallNeverDeadlocks runs writers far faster than a tiny tree can
// compact; they must be slowed or stalled, and all must finish.
func TestWriteStallNeverDeadlocks(t *testing.T) {
	o := smallTree()
	o.L0CompactionThreshold, o.L0SlowdownWritesThreshold, o.L0StopWritesThreshold = 1, 2, 3
	d := openMem(t, vfs.NewMem(), o)
	defer d.Close()
	var writers testutil.Group
	for w := 0; w < 4; w++ {
		writers.Go(func() error {
			val := make([]byte, 100)
			for i := 0; i < 1500; i++ {
				if err := d.Set([]byte(fmt.Sprintf("%d-%05d", w, i)), val, NoSync); err != nil {
					return err
				}
			}
			return nil
		})
	}
	done := make(chan []error, 1)
	go func() { done <- writers.Wait() }()
	select {
	case errs := <-done:
		for _, err := range errs {
			t.Error(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("writers did not finish: deadlock?\n%s", d.Metrics())
	}
	m := d.Metrics()
	if m.WriteStalls+m.WriteSlowdowns == 0 {
		t.Fatalf("writers were never slowed:\n%s", m)
	}
	if m.Levels[0].Tables > o.L0StopWritesThreshold+maxImmutableMemTables+1 {
		t.Fatalf("L0 reached %d tables past a stop threshold of %d", m.Levels[0].Tables, o.L0StopWritesThreshold)
	}
}

// TestTombstoneIndexHasNoFalseNegatives checks after every batch of random
// writes, flushes and compactions that every tombstone in a table is
// reported by the index.
func TestTombstoneIndexHasNoFalseNegatives(t *testing.T) {
	fs := vfs.NewMem()
	o := smallTree()
	d := openMem(t, fs, o)
	rng := rand.New(rand.NewPCG(9, 9))
	for batch := 0; batch < 40; batch++ {
		for i := 0; i < 300; i++ {
			k := []byte(fmt.Sprintf("k%04d", rng.IntN(800)))
			if rng.IntN(2) == 0 {
				d.Delete(k, NoSync)
			} else {
				d.Set(k, []byte("v"), NoSync)
			}
		}
		switch batch % 7 {
		case 3:
			d.Flush()
		case 6:
			d.Compact(nil, nil)
		}
		if batch == 20 {
			d.Close()
			d = openMem(t, fs, o)
		}
		// Holding the DB mutex stops flushes and compactions from
		// installing a version (and updating the index) between reading
		// the tables and asking the index.
		d.mu.Lock()
		missing, tombstones, err := unindexedTombstone(d)
		entries, _ := d.tombstones.stats()
		d.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if missing != nil {
			t.Fatalf("batch %d: tombstone for %q is in a table but the index says absent", batch, missing)
		}
		if entries < tombstones {
			t.Fatalf("batch %d: index holds %d entries for %d tombstones", batch, entries, tombstones)
		}
	}
	d.Close()
}

func TestTombstoneIndexGrowsWhenFull(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 64 << 10, DisableAutomaticCompactions: true})
	defer d.Close()
	for i := 0; i < 6000; i++ {
		d.Set([]byte(fmt.Sprintf("gone%05d", i)), nil, NoSync)
	}
	d.Flush()
	// One tombstone in a table first: an index holding none grows in
	// place from a flush's tombstones, without a rebuild.
	d.Delete([]byte("gone05999"), NoSync)
	d.Flush()
	// In a table now, so their tombstones are not elided at flush.
	before := d.Metrics().TombstoneIndex.Rebuilds
	for i := 0; i < 6000; i++ {
		d.Delete([]byte(fmt.Sprintf("gone%05d", i)), NoSync)
	}
	d.Flush()
	// The growth runs in the background (tombstone_index.go).
	waitFor(t, "the index's growth", func() bool { return !d.tombstones.isRebuilding() })
	m := d.Metrics()
	if m.TombstoneIndex.Entries != 6001 || m.TombstoneIndex.Rebuilds == before || m.TombstoneIndex.RebuildTime <= 0 || m.TombstoneIndex.UpdateTime <= 0 {
		t.Fatalf("index after 6001 tombstones: %+v (rebuilds before %d)", m.TombstoneIndex, before)
	}
	for i := 0; i < 6000; i++ {
		if !d.tombstones.mayHaveTombstone([]byte(fmt.Sprintf("gone%05d", i))) {
			t.Fatalf("gone%05d lost in the rebuild", i)
		}
	}
}

// TestFlushElidesTombstonesTheFiltersRuleOut: a tombstone for a key no
// table holds is dropped at flush; one for a key in a table is kept.
func TestFlushElidesTombstonesTheFiltersRuleOut(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	for i := 0; i < 1000; i++ {
		d.Set([]byte(fmt.Sprintf("old%04d", i)), []byte("v"), NoSync)
	}
	d.Flush()
	for i := 0; i < 1000; i++ {
		d.Delete([]byte(fmt.Sprintf("old%04d", i)), NoSync)   // in a table: kept
		d.Delete([]byte(fmt.Sprintf("never%04d", i)), NoSync) // nowhere: elided
	}
	d.Flush()
	m := d.Metrics()
	// Binary fuse 8 passes ~0.4% of absent keys, so a handful of "never"
	// tombstones may be kept; none of the "old" ones may go.
	if m.Compaction.TombstonesElided < 980 || m.Compaction.TombstonesElided > 1000 {
		t.Fatalf("%d tombstones elided, want ~1000 (the never-written keys)", m.Compaction.TombstonesElided)
	}
	for i := 0; i < 1000; i++ {
		if _, err := d.Get([]byte(fmt.Sprintf("old%04d", i))); !errors.Is(err, ErrNotFound) {
			t.Fatalf("old%04d resurrected: %v", i, err)
		}
	}
	if m.TombstoneIndex.Entries < 1000 || m.TombstoneIndex.Entries > 1020 {
		t.Fatalf("index holds %d tombstones, want the 1000 kept (+ a few FPs)", m.TombstoneIndex.Entries)
	}
}

// TestSequentialLoadMovesTablesTrivially: tables of a sequential load
// overlap nothing, so compaction moves them down without rewriting them.
func TestSequentialLoadMovesTablesTrivially(t *testing.T) {
	d := openMem(t, vfs.NewMem(), smallTree())
	defer d.Close()
	val := make([]byte, 64)
	for i := 0; i < 5000; i++ {
		if err := d.Set([]byte(fmt.Sprintf("seq%06d", i)), val, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	d.Flush()
	waitIdle(t, d)
	m := d.Metrics()
	if m.Compaction.TrivialMoves == 0 {
		t.Fatalf("no trivial moves on a sequential load:\n%s", m)
	}
	for i := 0; i < 5000; i += 97 {
		if _, err := d.Get([]byte(fmt.Sprintf("seq%06d", i))); err != nil {
			t.Fatalf("seq%06d: %v", i, err)
		}
	}
}
