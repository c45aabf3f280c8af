package kv

import (
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// firstFillKey is the 16-byte key of the first-fill tests (kvbench's key
// size, so a full memtable holds the tombstones it would there).
func firstFillKey(i int) []byte { return []byte(fmt.Sprintf("firstfill%07d", i)) }

// firstFillDB opens a DB with a memtable of memTableSize bytes holding a
// flushed table of n keys and, unflushed, Sets of 100-byte values filling
// about half of the memtable: the previous workload's writes a delete
// phase starts behind.
func firstFillDB(t *testing.T, memTableSize, n int) *DB {
	t.Helper()
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: memTableSize, DisableAutomaticCompactions: true})
	value := make([]byte, 100)
	for i := range n {
		if err := d.Set(firstFillKey(i), value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	mustFlush(t, d)
	for i := range memTableSize / 2 / (16 + 100 + 40) {
		if err := d.Set(firstFillKey(n+i), value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestTombstoneIndexFirstFillMakesRoomForThePhase: a delete phase's first
// flush seldom starts from an empty memtable, so it brings fewer
// tombstones than each flush after it. The index used to size its first
// fill by four such flushes, filled on the third full one and grew by
// reading every table holding tombstones (kvbench's deleterandom at 1M:
// 37,891 then 74,899 a flush, one growth of 35-67 ms, the index answering
// "may have" meanwhile). A flush whose tombstones fill at least a quarter
// of a memtable now sizes it by four full memtables of them: five flushes
// of deletes, the first partial, grow nothing. Each size pins one half:
// at 64 KiB the partial flush fits the empty index's slots, so only the
// refill from empty makes the room (four times the flush would do,
// NewCuckoo rounding up); at 1 MiB it is past them, and four times it
// (65,536 slots) would not hold the 84,258 tombstones.
func TestTombstoneIndexFirstFillMakesRoomForThePhase(t *testing.T) {
	for _, memTableSize := range []int{64 << 10, 1 << 20} {
		t.Run(fmt.Sprint(memTableSize), func(t *testing.T) {
			perMemTable := memTableSize / (16 + 40) // tombstones of 16-byte keys a full memtable holds
			n := 5 * perMemTable
			d := firstFillDB(t, memTableSize, n)
			defer d.Close()
			// A partial memtable of deletes behind the Sets, flushed on
			// its own, then four full memtables: the memtable rotates on
			// its own and the flushes run in the background, as in a
			// delete phase.
			partial := perMemTable / 2
			if err := deleteAndFlushKeys(d, firstFillKey, 0, partial); err != nil {
				t.Fatal(err)
			}
			deleted := partial + 4*perMemTable
			if err := deleteAndFlushKeys(d, firstFillKey, partial, deleted); err != nil {
				t.Fatal(err)
			}
			checkTombstoneIndex(t, d, "after the delete phase")
			ti := d.Metrics().TombstoneIndex
			if growths := d.tombstones.growths.Load(); growths != 0 || ti.Entries != uint64(deleted) {
				t.Fatalf("%d growths reading the tables during one delete phase of %d tombstones, %d a memtable (want none): %+v",
					growths, deleted, perMemTable, ti)
			}
		})
	}
}

// TestTombstoneIndexFirstFillOfAFewDeletes: a flush holding a few
// tombstones among Sets is no delete phase's start; the index stays sized
// by what it brought, not by a memtable's worth of tombstones.
func TestTombstoneIndexFirstFillOfAFewDeletes(t *testing.T) {
	const memTableSize = 1 << 20
	d := firstFillDB(t, memTableSize, 4000)
	defer d.Close()
	// More than the empty index's slots, less than a quarter of the
	// memtable's 18,724 tombstones.
	few := 3000
	if few <= 2*tombstoneIndexMinCapacity || few*tombstoneIndexPhaseShare >= memTableSize/(16+40) {
		t.Fatalf("%d deletes do not test the share", few)
	}
	if err := deleteKeys(d, firstFillKey, 0, few); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, d)
	checkTombstoneIndex(t, d, "after a few deletes")
	sized, err := newTombstoneIndex(tombstoneIndexFirstFillRoom * few)
	if err != nil {
		t.Fatal(err)
	}
	d.tombstones.mu.Lock()
	slots := d.tombstones.f.Cap()
	d.tombstones.mu.Unlock()
	if slots > sized.Cap() {
		t.Fatalf("%d tombstones made the index %d slots, more than room for %d such flushes (%d)",
			few, slots, tombstoneIndexFirstFillRoom, sized.Cap())
	}
}

// TestTombstoneIndexShrinksWhenEmpty: the filter never shrank, so a DB
// kept a delete phase's index (768 KiB at the default memtable, 192 MiB
// at the largest) long after compactions had taken every tombstone to the
// bottom. Emptied, it now goes back to a small filter, and the next
// deletes fill one of their own size, with no false negative.
func TestTombstoneIndexShrinksWhenEmpty(t *testing.T) {
	const memTableSize = 1 << 20
	d := firstFillDB(t, memTableSize, 20000)
	defer d.Close()
	if err := deleteKeys(d, firstFillKey, 0, 20000); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, d)
	full := d.Metrics().TombstoneIndex
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	empty := d.Metrics().TombstoneIndex
	small, err := newTombstoneIndex(tombstoneIndexMinCapacity)
	if err != nil {
		t.Fatal(err)
	}
	if full.Entries != 20000 || empty.Entries != 0 || empty.Bytes > uint64(small.EncodedLen()) {
		t.Fatalf("with 20000 tombstones %+v; emptied by a compaction it keeps %d bytes (an empty filter: %d)",
			full, empty.Bytes, small.EncodedLen())
	}
	if err := deleteAndFlushKeys(d, firstFillKey, 20000, 20200); err != nil {
		t.Fatal(err)
	}
	checkTombstoneIndex(t, d, "after deletes into the shrunk index")
	if ti := d.Metrics().TombstoneIndex; ti.Entries != 200 {
		t.Fatalf("after 200 more deletes: %+v", ti)
	}
}

// TestTombstoneIndexShrinksWhenEmptiedDuringGrowth: a compaction that
// drops the last tombstones while a growth reads the tables only logs its
// removes, so shrinkIfEmptyLocked cannot run; the growth then installed
// an empty filter of the size it was started for (four times the full
// filter's slots after NewCuckoo's rounding), and with no tombstone left
// to remove nothing shrank it. Finding none, it now installs a filter of
// the minimum size.
func TestTombstoneIndexShrinksWhenEmptiedDuringGrowth(t *testing.T) {
	d := flushedKeysDB(t, firstFillKey, 4000)
	defer d.Close()
	waitTombstoneIndexBuilt(t, d) // the pause below is for the growth
	entered, letGo := holdRebuilds(t)
	defer letGo()
	// One tombstone first, so that the next flush finds the index full,
	// not empty, and grows it by reading the tables.
	if err := deleteAndFlushKeys(d, firstFillKey, 3999, 4000); err != nil {
		t.Fatal(err)
	}
	if err := deleteAndFlushKeys(d, firstFillKey, 0, 2000); err != nil {
		t.Fatal(err)
	}
	mustEnter(t, entered, "2000 tombstones did not start a growth of the index")
	// The growth held, a compaction to the bottom drops every tombstone.
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	letGo()
	checkTombstoneIndex(t, d, "after the growth")
	small, err := newTombstoneIndex(tombstoneIndexMinCapacity)
	if err != nil {
		t.Fatal(err)
	}
	if ti := d.Metrics().TombstoneIndex; ti.Entries != 0 || ti.Rebuilds < 2 || ti.Bytes > uint64(small.EncodedLen()) {
		t.Fatalf("a growth that found no tombstone left keeps %+v (an empty filter: %d bytes)", ti, small.EncodedLen())
	}
	if err := deleteAndFlushKeys(d, firstFillKey, 0, 200); err != nil {
		t.Fatal(err)
	}
	checkTombstoneIndex(t, d, "after deletes into the shrunk index")
}
