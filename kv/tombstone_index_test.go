package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// checkTombstoneIndex asserts K7 on d's current tables: every tombstone in
// a live table is reported, and the index counts each one.
func checkTombstoneIndex(t *testing.T, d *DB, step string) {
	t.Helper()
	// Holding the DB mutex stops flushes and compactions from installing
	// a version (and updating the index) between reading the tables and
	// asking the index. A growth in progress answers "may have" for every
	// key and counts only approximately, so wait for it to install.
	waitFor(t, "the tombstone index's growth", func() bool {
		d.mu.Lock()
		if !d.tombstones.isRebuilding() {
			return true // d.mu stays held
		}
		d.mu.Unlock()
		return false
	})
	missing, tombstones, err := unindexedTombstone(d)
	entries, _ := d.tombstones.stats()
	saturated := d.tombstones.saturated
	d.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if missing != nil {
		t.Fatalf("%s: tombstone for %q is in a table but the index says absent", step, missing)
	}
	if !saturated && entries != tombstones {
		t.Fatalf("%s: index counts %d tombstones, the tables hold %d", step, entries, tombstones)
	}
}

// unindexedTombstone returns the first key with a tombstone in the current
// version's tables that the tombstone index says has none (nil if every one
// is indexed), and how many tombstones those tables hold.
// REQUIRES: d.mu held, so that no version installs between reading the
// tables and asking the index.
func unindexedTombstone(d *DB) (missing []byte, tombstones int, err error) {
	var keys [][]byte
	for _, ts := range d.current.Levels {
		for _, tbl := range ts {
			tk, err := d.tableTombstones(tbl)
			if err != nil {
				return nil, 0, err
			}
			keys = append(keys, tk...)
		}
	}
	for _, k := range keys {
		if !d.tombstones.mayHaveTombstone(k) {
			return k, len(keys), err
		}
	}
	return nil, len(keys), err
}

// TestTombstoneIndexSurvivesOneKeyDeletedInManyTables: one key with a
// tombstone in more live tables than a cuckoo bucket pair has slots (8)
// used to make every rebuild double the filter forever (out of memory),
// on the flush and again on every Open.
func TestTombstoneIndexSurvivesOneKeyDeletedInManyTables(t *testing.T) {
	fs := vfs.NewMem()
	o := &Options{DisableAutomaticCompactions: true}
	d := openMem(t, fs, o)
	k := []byte("queue-head")
	for round := 0; round < 20; round++ {
		if err := d.Set(k, []byte(fmt.Sprint(round)), NoSync); err != nil {
			t.Fatal(err)
		}
		mustFlush(t, d)
		if err := d.Delete(k, NoSync); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		checkTombstoneIndex(t, d, fmt.Sprintf("round %d", round))
	}
	if m := d.Metrics(); m.TombstoneIndex.Entries != 20 {
		t.Fatalf("index counts %d tombstones, want 20: %+v", m.TombstoneIndex.Entries, m.TombstoneIndex)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, o)
	defer d.Close()
	checkTombstoneIndex(t, d, "reopened")
	if _, err := d.Get(k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after reopen: %v", err)
	}
	// Compacting everything drops all but what the bottom level needs;
	// the index must follow the removals through its overflow.
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	checkTombstoneIndex(t, d, "compacted")
}

// TestTombstoneIndexSurvivesSnapshotsAcrossDeletes: with automatic
// compactions on, snapshots held across the rounds keep every tombstone of
// the key alive (a compaction may not drop a version a snapshot can see),
// which used to end the same way.
func TestTombstoneIndexSurvivesSnapshotsAcrossDeletes(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, smallTree())
	k := []byte("lock")
	var snaps []*Snapshot
	for round := 0; round < 24; round++ {
		d.Set(k, []byte("held"), NoSync)
		snaps = append(snaps, d.NewSnapshot())
		d.Delete(k, NoSync)
		snaps = append(snaps, d.NewSnapshot())
		for i := 0; i < 40; i++ { // enough to fill a memtable or two
			d.Set([]byte(fmt.Sprintf("pad%02d-%03d", round, i)), make([]byte, 100), NoSync)
		}
		if err := d.Flush(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	waitIdle(t, d)
	checkTombstoneIndex(t, d, "with snapshots")
	for i, s := range snaps {
		_, err := s.Get(k)
		if wantFound := i%2 == 0; wantFound != (err == nil) {
			t.Fatalf("snapshot %d: Get = %v", i, err)
		}
		s.Close()
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, smallTree())
	defer d.Close()
	checkTombstoneIndex(t, d, "reopened")
}

// TestTombstoneIndexPropertyNoFalseNegatives: after any sequence of Set,
// Delete, Flush, Compact, snapshot and reopen over a few hot keys and many
// cold ones, every tombstone in a live table is reported and counted.
// Seeds 5 to 8 start the index at 8 slots, so it grows in the background
// again and again while flushes and compactions log changes to replay.
func TestTombstoneIndexPropertyNoFalseNegatives(t *testing.T) {
	grew := map[bool]bool{} // by DisableAutomaticCompactions, seeds 5-8
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if seed > 4 {
				old := tombstoneIndexMinCapacity
				tombstoneIndexMinCapacity = 8
				defer func() { tombstoneIndexMinCapacity = old }()
			}
			rng := rand.New(rand.NewPCG(seed, 77))
			fs := vfs.NewMem()
			o := smallTree()
			o.DisableAutomaticCompactions = seed%2 == 0
			d := openMem(t, fs, o)
			opens, rebuilds := 1, uint64(0) // rebuilds: of the instances closed
			var snaps []*Snapshot
			key := func() []byte {
				if rng.IntN(3) == 0 {
					return []byte(fmt.Sprintf("hot%d", rng.IntN(3)))
				}
				return []byte(fmt.Sprintf("cold%04d", rng.IntN(500)))
			}
			steps := 300
			if seed > 4 {
				steps = 1200 // enough tombstones between reopens to outgrow 8 slots
			}
			for step := 0; step < steps; step++ {
				switch r := rng.IntN(100); {
				case r < 45:
					d.Set(key(), []byte("v"), NoSync)
				case r < 85:
					d.Delete(key(), NoSync)
				case r < 91:
					mustFlush(t, d)
				case r < 94:
					if err := d.Compact(nil, nil); err != nil {
						t.Fatal(err)
					}
				case r < 98:
					if len(snaps) > 0 && rng.IntN(2) == 0 {
						i := rng.IntN(len(snaps))
						snaps[i].Close()
						snaps = append(snaps[:i], snaps[i+1:]...)
					} else {
						snaps = append(snaps, d.NewSnapshot())
					}
				default:
					for _, s := range snaps {
						s.Close()
					}
					snaps = nil
					rebuilds += d.Metrics().TombstoneIndex.Rebuilds
					if err := d.Close(); err != nil {
						t.Fatal(err)
					}
					d = openMem(t, fs, o)
					opens++
				}
				if step%10 == 0 {
					checkTombstoneIndex(t, d, fmt.Sprintf("seed %d step %d", seed, step))
				}
			}
			checkTombstoneIndex(t, d, "end")
			if growths := int(rebuilds+d.Metrics().TombstoneIndex.Rebuilds) - opens; seed > 4 && growths > 0 {
				grew[o.DisableAutomaticCompactions] = true
			}
			for _, s := range snaps {
				s.Close()
			}
			d.Close()
		})
	}
	if !grew[false] || !grew[true] {
		t.Fatalf("the index starting at 8 slots must grow, with background compactions and without: %v", grew)
	}
}

// waitTombstoneIndexBuilt waits until no background rebuild of d's
// tombstone index (Open's or a growth's) is reading the tables. A nil t
// panics on a timeout.
func waitTombstoneIndexBuilt(t testing.TB, d *DB) {
	deadline := time.Now().Add(time.Minute)
	for d.tombstones.isRebuilding() {
		if time.Now().After(deadline) {
			if t == nil {
				panic("the tombstone index's rebuild did not end within a minute")
			}
			t.Fatal("the tombstone index's rebuild did not end within a minute")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTombstoneIndexGrowthDoesNotBlockWriters: a growth reads every table
// holding tombstones, which used to happen inside the flush's critical
// section on DB.mu, so every commit waited for it. Held at its start, it
// must let writes, flushes and compactions proceed; it answers "may have"
// meanwhile, and once let go it installs exactly the tombstones of the
// version current then (K7), the adds and removes logged meanwhile
// included.
func TestTombstoneIndexGrowthDoesNotBlockWriters(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("gone%05d", i)) }
	d := flushedKeysDB(t, key, 4000)
	defer d.Close()
	waitTombstoneIndexBuilt(t, d) // the pause below is for the growth
	entered, letGo := holdRebuilds(t)
	defer letGo()
	// One tombstone in a table first: an index holding none grows in
	// place from the flush's tombstones alone, with nothing to read.
	d.Delete(key(3999), NoSync)
	mustFlush(t, d)
	// In a table now, so their tombstones are kept: more than the index's
	// initial 1024-key capacity holds, so the flush starts a growth.
	for i := 0; i < 2000; i++ {
		d.Delete(key(i), NoSync)
	}
	mustFlush(t, d)
	mustEnter(t, entered, "2000 tombstones did not start a growth of the index")
	// With the growth held: more deletes, a flush (logged adds), and a
	// compaction that drops tombstones (logged removes) all complete.
	returnsWithin(t, 5*time.Second, "writes, a flush and a compaction waited for the index's growth", func() error {
		if err := deleteAndFlushKeys(d, key, 2000, 3000); err != nil {
			return err
		}
		if err := d.Compact(nil, nil); err != nil {
			return err
		}
		// Adds after the removes: keys still at the bottom.
		return deleteAndFlushKeys(d, key, 3000, 3500)
	})
	if !d.tombstones.mayHaveTombstone(key(0)) || !d.tombstones.mayHaveTombstone([]byte("never deleted")) {
		t.Fatal("a growth in progress must answer \"may have\" for every key")
	}
	letGo()
	checkTombstoneIndex(t, d, "after the growth")
	// The compaction to the bottom dropped the first 3001 tombstones (the
	// logged removes cancel the version's and the first logged adds); the
	// last flush's 500 remain.
	if m := d.Metrics(); m.TombstoneIndex.Entries != 500 || m.TombstoneIndex.Rebuilds < 2 {
		t.Fatalf("after the growth: %+v", m.TombstoneIndex)
	}
}

// TestTombstoneIndexReportsPeak: once a compaction drops the tombstones,
// the index counts none but keeps its memory; Metrics and stats report the
// most it counted and its memory per tombstone then.
func TestTombstoneIndexReportsPeak(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	for i := 0; i < 2000; i++ {
		d.Set([]byte(fmt.Sprintf("k%05d", i)), []byte("v"), NoSync)
	}
	mustFlush(t, d)
	for i := 0; i < 500; i++ {
		d.Delete([]byte(fmt.Sprintf("k%05d", i)), NoSync)
	}
	mustFlush(t, d)
	at := d.Metrics().TombstoneIndex
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	m := d.Metrics()
	ti := m.TombstoneIndex
	if at.Entries != 500 || ti.Entries != 0 || ti.PeakEntries != 500 || ti.PeakBytesPerTombstone != at.BytesPerTombstone {
		t.Fatalf("with 500 tombstones %+v; after the compaction dropped them %+v", at, ti)
	}
	if want := fmt.Sprintf("peak 500 entries at %.1f B per tombstone", at.BytesPerTombstone); !strings.Contains(m.String(), want) {
		t.Fatalf("stats lack %q:\n%s", want, m.String())
	}
}

// TestTombstoneIndexGrowsFromEmptyWithoutReading: the first flush of
// deletes after a load (kvbench's deleterandom) used to outgrow the empty
// index and start a growth that read every table holding tombstones, on a
// delete-heavy phase's critical resource, the CPU. An index that held no
// tombstone knows the version's tombstones are exactly the flush's, so it
// grows from them in place: no rebuild, and still no false negative (K7).
func TestTombstoneIndexGrowsFromEmptyWithoutReading(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 1 << 20, DisableAutomaticCompactions: true})
	defer d.Close()
	key := func(i int) []byte { return []byte(fmt.Sprintf("gone%05d", i)) }
	for i := 0; i < 4000; i++ {
		d.Set(key(i), []byte("v"), NoSync)
	}
	mustFlush(t, d)
	for i := 0; i < 3*tombstoneIndexMinCapacity; i++ {
		d.Delete(key(i), NoSync)
	}
	mustFlush(t, d)
	checkTombstoneIndex(t, d, "after the first flush of deletes")
	if ti := d.Metrics().TombstoneIndex; ti.Rebuilds != 1 || ti.Entries != uint64(3*tombstoneIndexMinCapacity) {
		t.Fatalf("the index grew past %d slots by reading tables (rebuilds %d, Open's included) or lost count: %+v",
			tombstoneIndexMinCapacity, ti.Rebuilds, ti)
	}
}

// TestTombstoneIndexRebuildCopiesNoKeys: a growth reads every tombstone
// table while the deletes that filled the index go on, and it used to copy
// each tombstone's key before hashing it, so its garbage grew with the
// tombstones. The rebuild's allocations are now bounded by the tables it
// reads (iterators, the hash slice), not by the tombstones in them; and it
// still counts every tombstone once (K7).
func TestTombstoneIndexRebuildCopiesNoKeys(t *testing.T) {
	const n = 20000
	key := func(i int) []byte { return []byte(fmt.Sprintf("gone%05d", i)) }
	d := flushedKeysDB(t, key, n)
	defer d.Close()
	if err := deleteKeys(d, key, 0, n/2); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, d)
	v := refCurrent(d)
	defer v.Unref()
	hs, err := d.tombstoneHashes(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != n/2 {
		t.Fatalf("rebuild read %d tombstones, want %d", len(hs), n/2)
	}
	tables, blocks := 0, 0
	for _, ts := range v.Levels {
		tables += len(ts)
		for _, tm := range ts {
			blocks += int(tm.Props.NumDataBlocks)
		}
	}
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := d.tombstoneHashes(v); err != nil {
			t.Fatal(err)
		}
	})
	// A few per table read (iterator, readahead) and one for the hashes.
	// The blocks come from the file each time (the rebuild leaves the
	// block cache to readers): their buffers are pooled, but the race
	// detector's pools drop items on purpose, so up to two per block. A
	// copy per key would be n/2, a hundred times the blocks here.
	if limit := float64(16*tables + 2*blocks + 16); allocs > limit {
		t.Fatalf("rebuild of %d tombstones in %d tables (%d blocks) allocated %.0f times, want at most %.0f (per table and block read, not per key)",
			n/2, tables, blocks, allocs, limit)
	}
}

// TestTombstoneHashesHostileDeletionCount gives the rebuild a table whose
// properties claim more deletions than memory holds: the count sizes an
// allocation, so trusting it panicked (makeslice: cap out of range)
// before the rebuild could find that the table cannot be read. Now the
// count is only a bounded hint and the rebuild reports the read error.
func TestTombstoneHashesHostileDeletionCount(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	var v manifest.Version
	v.Levels[6] = []*manifest.TableMetadata{{FileNum: 999999, Size: 100,
		Props: &sstable.Properties{NumEntries: 1 << 62, NumDeletions: 1 << 62}}}
	hs, err := d.tombstoneHashes(&v)
	if err == nil || !strings.Contains(err.Error(), "table 999999") {
		t.Fatalf("rebuild of a missing table: %d hashes, err %v; want the table's read error", len(hs), err)
	}
}
