package kv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestCompactOfANarrowRangeLeavesTheRestOfTheTree: Compact(start, end) on
// a tree whose newest L0 table spans every key rewrites the range's share
// of the bottom level, not the whole tree. Found by the Pebble oracle's
// soak: a manual Compact took every table that overlapped any table it
// had already taken, so one wide L0 table pulled in every level whole,
// and 2,700 Compacts of random ranges cost sievekv 2.4 times Pebble's
// time. raftstore compacts the log's prefix after each truncation, a
// narrow range under L0 tables that span the whole store.
func TestCompactOfANarrowRangeLeavesTheRestOfTheTree(t *testing.T) {
	const n = 40000
	key, value := leveledTreeKey, leveledTreeValue
	d := frozenLeveledTree(t, n)
	defer d.Close()

	// The newest L0 table spans every key: a few overwrites spread over
	// the key space, and deletes of the range to compact.
	lo, hi := 20000, 20100
	for i := 0; i < n; i += n / 50 {
		if err := d.Set(key(i), value(i, 1), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	for i := lo; i < hi; i += 2 {
		if err := d.Delete(key(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	before := d.versionForTest()
	defer before.Unref()
	middle := 0
	for l := 1; l < NumLevels-1; l++ {
		middle += len(before.Levels[l])
	}
	bottom := before.Levels[NumLevels-1]
	if len(before.Levels[0]) == 0 || middle == 0 || len(bottom) < 30 {
		t.Fatalf("the tree lacks the shape the test needs (an L0 table, a middle level, 30 bottom tables): %d, %d, %d tables",
			len(before.Levels[0]), middle, len(bottom))
	}

	if err := d.Compact(key(lo), key(hi-1)); err != nil {
		t.Fatal(err)
	}
	after := d.versionForTest()
	defer after.Unref()
	kept := map[uint64]bool{}
	for _, tm := range after.Levels[NumLevels-1] {
		kept[tm.FileNum] = true
	}
	untouched := 0
	for _, tm := range bottom {
		if kept[tm.FileNum] {
			untouched++
		}
	}
	// The range lies in one or two middle tables, and each of their
	// outputs overlaps at most MaxGrandparentOverlap (ten target files)
	// of the bottom: 3 of 40 bottom tables when written (the old
	// Compact: 44 of 44).
	if untouched < len(bottom)/2 {
		t.Errorf("the Compact of 1/400 of the keys rewrote %d of the %d bottom tables", len(bottom)-untouched, len(bottom))
	}
	// The range is at the bottom, its tombstones dropped with what they
	// deleted; every key reads as written.
	for l := 0; l < NumLevels-1; l++ {
		for _, tm := range after.Levels[l] {
			if tm.Overlaps(key(lo), key(hi-1)) {
				t.Errorf("L%d table %d [%s, %s] still holds part of the compacted range", l, tm.FileNum, tm.Smallest.UserKey, tm.Largest.UserKey)
			}
		}
	}
	for _, tm := range after.Levels[NumLevels-1] {
		if tm.Overlaps(key(lo), key(hi-1)) && tm.NumDeletions() > 0 {
			t.Errorf("bottom table %d in the range kept %d tombstones", tm.FileNum, tm.NumDeletions())
		}
	}
	if err := after.CheckOrdering(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		want := value(i, 0)
		if i%(n/50) == 0 {
			want = value(i, 1)
		}
		deleted := i >= lo && i < hi && (i-lo)%2 == 0
		v, err := d.Get(key(i))
		switch {
		case deleted && !errors.Is(err, ErrNotFound):
			t.Fatalf("deleted %s = %q, %v", key(i), v, err)
		case !deleted && (err != nil || string(v) != string(want)):
			t.Fatalf("%s = %q, %v; want %q", key(i), v, err, want)
		}
	}
}

// leveledTreeKey and leveledTreeValue are the keys and values of
// frozenLeveledTree (round 0) and of the tests' later writes.
func leveledTreeKey(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
func leveledTreeValue(i, round int) []byte {
	return fmt.Appendf(nil, "value-%d-%d-%090d", i, round, i)
}

// frozenLeveledTree returns a DB holding keys 0..n-1 in a leveled tree
// several levels deep, built by the background compactions from a random
// load, then frozen: reopened with automatic compactions off.
func frozenLeveledTree(t *testing.T, n int) *DB {
	t.Helper()
	fs := vfs.NewMem()
	opts := func(auto bool) *Options {
		o := smallTree()
		o.MemTableSize, o.LBaseMaxBytes, o.TargetFileSize = 32<<10, 64<<10, 16<<10
		o.DisableAutomaticCompactions = !auto
		return o
	}
	d := openMem(t, fs, opts(true))
	rng := rand.New(rand.NewPCG(7, 7))
	for _, i := range rng.Perm(n) {
		if err := d.Set(leveledTreeKey(i), leveledTreeValue(i, 0), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return openMem(t, fs, opts(false))
}

// TestCompactOfEverythingReadsEachTableOnce: Compact(nil, nil) merges the
// whole tree into the bottom in one step. Going level by level, it wrote
// everything above the bottom twice (an L0 step into L5, then L5 into L6):
// every table in the tree overlaps an unbounded range, so the steps would
// rewrite all of it anyway, and each stop on the way costs a rewrite.
func TestCompactOfEverythingReadsEachTableOnce(t *testing.T) {
	const n = 20000
	d := frozenLeveledTree(t, n)
	defer d.Close()
	for i := 0; i < n; i += 97 {
		if err := d.Set(leveledTreeKey(i), leveledTreeValue(i, 1), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	before := d.versionForTest()
	defer before.Unref()
	var total uint64
	levels := 0
	for l := range NumLevels {
		total += before.LevelSize(l)
		if len(before.Levels[l]) > 0 {
			levels++
		}
	}
	if levels < 3 {
		t.Fatalf("the tree has %d levels, the test needs 3: %s", levels, describeLevels(before))
	}
	in0, steps0 := d.Metrics().Compaction.BytesIn, d.Metrics().Compaction.Manual
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	m := d.Metrics()
	if read := m.Compaction.BytesIn - in0; read != total {
		t.Errorf("Compact(nil, nil) merged %d input bytes; the tree holds %d (%.2fx)", read, total, float64(read)/float64(total))
	}
	if steps := m.Compaction.Manual - steps0; steps != 1 {
		t.Errorf("Compact(nil, nil) took %d steps, want 1", steps)
	}
	after := d.versionForTest()
	defer after.Unref()
	for l := 0; l < NumLevels-1; l++ {
		if len(after.Levels[l]) > 0 {
			t.Fatalf("L%d kept %d tables", l, len(after.Levels[l]))
		}
	}
	for i := 0; i < n; i++ {
		want := leveledTreeValue(i, 0)
		if i%97 == 0 {
			want = leveledTreeValue(i, 1)
		}
		if v, err := d.Get(leveledTreeKey(i)); err != nil || string(v) != string(want) {
			t.Fatalf("%s = %q, %v; want %q", leveledTreeKey(i), v, err, want)
		}
	}
}

// versionForTest returns the current version, referenced; the caller
// Unrefs it.
func (d *DB) versionForTest() *manifest.Version {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.current.Ref()
	return d.current
}
