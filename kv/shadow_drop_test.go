package kv

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/manifest"
)

// compactTablesForTest runs the compaction of inputs (all at level) into
// outputLevel that the picker might have chosen, on the current version:
// the tables of outputLevel overlapping the inputs join them.
func compactTablesForTest(t *testing.T, d *DB, level, outputLevel int, inputs []*manifest.TableMetadata) {
	t.Helper()
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &compaction.Compaction{Level: level, OutputLevel: outputLevel, Reason: compaction.ReasonScore}
	c.Inputs[0] = inputs
	if level != outputLevel {
		for _, o := range d.current.Levels[outputLevel] {
			for _, in := range inputs {
				if o.Overlaps(in.Smallest.UserKey, in.Largest.UserKey) {
					c.Inputs[1] = append(c.Inputs[1], o)
					break
				}
			}
		}
	}
	if err := d.runPickedLocked(c); err != nil {
		t.Fatal(err)
	}
}

// rewriteBottomForTest rewrites every table of the bottom level in place,
// as a compaction picked for another reason (its size, another key's
// tombstone) would rewrite it.
func rewriteBottomForTest(t *testing.T, d *DB) {
	t.Helper()
	d.mu.Lock()
	bottom := append([]*manifest.TableMetadata(nil), d.current.Levels[NumLevels-1]...)
	d.mu.Unlock()
	compactTablesForTest(t, d, NumLevels-1, NumLevels-1, bottom)
}

// levelHoldsKey reports whether some table of level holds an entry of key.
func levelHoldsKey(t *testing.T, d *DB, level int, key []byte) bool {
	t.Helper()
	d.mu.Lock()
	tables := append([]*manifest.TableMetadata(nil), d.current.Levels[level]...)
	d.mu.Unlock()
	for _, tm := range tables {
		it, err := d.tables.newCompactionIter(tm, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			if bytes.Equal(it.Key().UserKey, key) {
				it.Close()
				return true
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return false
}

func mustDelete(t *testing.T, d *DB, key []byte) {
	t.Helper()
	if err := d.Delete(key, NoSync); err != nil {
		t.Fatal(err)
	}
}

// shadowDB is bottomDB with n keys and automatic compactions off, so that
// only the compactions a test runs happen. It closes when the test ends,
// after the test's defers have closed its snapshots and iterators.
func shadowDB(t *testing.T, n int) *DB {
	t.Helper()
	d := bottomDB(t, &Options{DisableAutomaticCompactions: true}, n)
	t.Cleanup(func() { d.Close() })
	return d
}

// setAndFlush sets every key to value and flushes them into one table.
func setAndFlush(t *testing.T, d *DB, value string, keys ...[]byte) {
	t.Helper()
	for _, k := range keys {
		if err := d.Set(k, []byte(value), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	mustFlush(t, d)
}

func mustFlush(t *testing.T, d *DB) {
	t.Helper()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
}

// checkDropped fails the test unless m counts exactly want values dropped
// under a newer entry; which names them for the message.
func checkDropped(t *testing.T, m Metrics, want uint64, which string) {
	t.Helper()
	if got := m.Compaction.ShadowedDropped; got != want {
		t.Fatalf("dropped %d values, want %d (%s)", got, want, which)
	}
}

// TestCompactionDropsShadowedValue: a value at the bottom whose key's
// tombstone sits in L0 is dropped by a compaction that rewrites the bottom
// table without the tombstone's table; the tombstone's estimate no longer
// counts it; and the tombstone still reaches the bottom and goes.
func TestCompactionDropsShadowedValue(t *testing.T) {
	const n = 200
	d := shadowDB(t, n)
	deleted := delKey(17)
	mustDelete(t, d, deleted)
	mustFlush(t, d)
	before := d.Metrics()
	if before.Levels[0].ShadowedBytes == 0 {
		t.Fatal("the flushed tombstone shadows nothing by the estimate")
	}

	rewriteBottomForTest(t, d)

	if levelHoldsKey(t, d, NumLevels-1, deleted) {
		t.Fatal("the rewritten bottom level still holds the deleted key's value")
	}
	if !levelHoldsKey(t, d, 0, deleted) {
		t.Fatal("the tombstone left L0")
	}
	checkDeleted(t, d, n, func(i int) bool { return i == 17 })
	m := d.Metrics()
	if m.Compaction.ShadowedDropped != 1 || m.Compaction.ShadowedDroppedBytes < 1024 {
		t.Fatalf("dropped %d values (%d bytes), want the one 1 KiB value", m.Compaction.ShadowedDropped, m.Compaction.ShadowedDroppedBytes)
	}
	if m.Compaction.ShadowPositives != 1 {
		t.Fatalf("%d index positives among %d checks, want 1 (only the deleted key)", m.Compaction.ShadowPositives, m.Compaction.ShadowChecks)
	}
	if got, was := m.Levels[0].ShadowedBytes, before.Levels[0].ShadowedBytes; got > was/10 {
		t.Fatalf("the tombstone's table still shadows %d of %d estimated bytes", got, was)
	}

	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	m = d.Metrics()
	for l, lm := range m.Levels {
		if lm.Tombstones != 0 {
			t.Fatalf("L%d still holds %d tombstones after a full compaction", l, lm.Tombstones)
		}
	}
	if m.TombstoneIndex.Entries != 0 {
		t.Fatalf("the index counts %d tombstones, want 0", m.TombstoneIndex.Entries)
	}
	checkDeleted(t, d, n, func(i int) bool { return i == 17 })
}

// TestShadowDropRespectsSnapshots: a snapshot taken between a value and
// its key's tombstone keeps the value (it still reads it); a key deleted
// before the snapshot has its value and tombstone in one stripe, so its
// value goes. An iterator opened before the delete keeps reading the value
// from its own version's tables after the drop.
func TestShadowDropRespectsSnapshots(t *testing.T) {
	const n = 100
	d := shadowDB(t, n)
	before, after := delKey(10), delKey(20)
	want, err := d.Get(after)
	if err != nil {
		t.Fatal(err)
	}
	it := d.NewIter(nil)
	defer it.Close()
	mustDelete(t, d, before)
	snap := d.NewSnapshot()
	defer snap.Close()
	mustDelete(t, d, after)
	mustFlush(t, d)

	rewriteBottomForTest(t, d)

	if levelHoldsKey(t, d, NumLevels-1, before) {
		t.Fatal("the value deleted before the snapshot is still at the bottom")
	}
	if !levelHoldsKey(t, d, NumLevels-1, after) {
		t.Fatal("the value the snapshot reads was dropped")
	}
	if got, err := snap.Get(after); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("snapshot Get of the later-deleted key: %v, value equal %v", err, bytes.Equal(got, want))
	}
	if _, err := snap.Get(before); !errors.Is(err, ErrNotFound) {
		t.Fatalf("snapshot Get of the earlier-deleted key: %v, want ErrNotFound", err)
	}
	checkDropped(t, d.Metrics(), 1, "the key deleted before the snapshot")
	seen := 0
	for ok := it.First(); ok; ok = it.Next() {
		if bytes.Equal(it.Key(), before) || bytes.Equal(it.Key(), after) {
			seen++
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Fatalf("the iterator opened before the deletes saw %d of the 2 deleted keys", seen)
	}
}

// TestShadowDropNeedsConfirmation: an index positive that no table above
// confirms keeps the value; a newer Set above (which the lookup finds
// whatever the entry's kind) shadows the older one as a tombstone would.
func TestShadowDropNeedsConfirmation(t *testing.T) {
	const n = 100
	d := shadowDB(t, n)
	testIndexFalsePositive = true
	defer func() { testIndexFalsePositive = false }()
	mustDelete(t, d, delKey(3)) // the index holds a tombstone
	overwritten := delKey(50)
	// The flushed table spans every key, so every value is asked about.
	setAndFlush(t, d, "new", overwritten, []byte("a"), []byte("z"))

	rewriteBottomForTest(t, d)

	m := d.Metrics()
	if m.Compaction.ShadowPositives != n {
		t.Fatalf("%d positives, want every one of the %d values checked", m.Compaction.ShadowPositives, n)
	}
	checkDropped(t, m, 2, "the deleted and the overwritten key")
	for i := 0; i < n; i++ {
		if held := levelHoldsKey(t, d, NumLevels-1, delKey(i)); held != (i != 3 && i != 50) {
			t.Fatalf("key %d at the bottom: %v", i, held)
		}
	}
	if got, err := d.Get(overwritten); err != nil || string(got) != "new" {
		t.Fatalf("Get of the overwritten key: %q, %v", got, err)
	}
	checkDeleted(t, d, n, func(i int) bool { return i == 3 })
}

// TestShadowDropOffWithoutTombstones: with no tombstone in the index a
// compaction asks it nothing (the check costs a workload without deletes
// nothing), and with the index disabled no value is dropped early.
func TestShadowDropOffWithoutTombstones(t *testing.T) {
	d := shadowDB(t, 50)
	if err := d.Set(delKey(5), []byte("x"), NoSync); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, d)
	rewriteBottomForTest(t, d)
	if m := d.Metrics(); m.Compaction.ShadowChecks != 0 {
		t.Fatalf("%d index checks with no tombstone anywhere", m.Compaction.ShadowChecks)
	}

	off := bottomDB(t, &Options{DisableAutomaticCompactions: true, DisableTombstoneIndex: true}, 50)
	defer off.Close()
	mustDelete(t, off, delKey(5))
	mustFlush(t, off)
	rewriteBottomForTest(t, off)
	if !levelHoldsKey(t, off, NumLevels-1, delKey(5)) {
		t.Fatal("a value was dropped early with the index disabled")
	}
}

// TestShadowDropAsksFewAboveTablesNotTheIndex: a compaction under one small
// table of tombstones (a flush of a few deletes over a large bottom level,
// as the last flush of kvbench's deleterandom leaves) decides which values
// to look up from a set of that table's keys, not from the tombstone
// index: with the index unable to answer (saturated here, as during a
// growth) the deleted values still go, and only they are positives. With
// the set turned off the same compaction consults the index and drops
// nothing, which shows the index was not what dropped them.
func TestShadowDropAsksFewAboveTablesNotTheIndex(t *testing.T) {
	const n = 200
	deleted := map[int]bool{3: true, 77: true, 150: true}
	run := func(local bool) Metrics {
		if !local {
			old := shadowLocalRatio
			shadowLocalRatio = 0
			defer func() { shadowLocalRatio = old }()
		}
		d := bottomDB(t, &Options{DisableAutomaticCompactions: true}, n)
		defer d.Close()
		for i := range deleted {
			mustDelete(t, d, delKey(i))
		}
		mustFlush(t, d)
		d.tombstones.mu.Lock()
		d.tombstones.saturated = true
		d.tombstones.mu.Unlock()

		rewriteBottomForTest(t, d)

		checkDeleted(t, d, n, func(i int) bool { return deleted[i] })
		for i := 0; i < n; i++ {
			if held := levelHoldsKey(t, d, NumLevels-1, delKey(i)); held == (local && deleted[i]) {
				t.Fatalf("local set %v: key %d at the bottom: %v", local, i, held)
			}
		}
		return d.Metrics()
	}
	m := run(true)
	if m.Compaction.ShadowedDropped != uint64(len(deleted)) || m.Compaction.ShadowPositives != uint64(len(deleted)) {
		t.Fatalf("with the set: dropped %d values, %d positives, want %d of each", m.Compaction.ShadowedDropped, m.Compaction.ShadowPositives, len(deleted))
	}
	if m.Compaction.ShadowChecks == 0 {
		t.Fatal("with the set: no value was checked")
	}
	if m = run(false); m.Compaction.ShadowedDropped != 0 {
		t.Fatalf("without the set the saturated index dropped %d values", m.Compaction.ShadowedDropped)
	}
}

// TestShadowDropFindsOverwrites: with the index asked (the above table
// holds too many entries for the set of its keys), a bottom value whose
// key was overwritten above, and never deleted, goes as the deleted one
// does: the index rules its key out (no tombstone), but the key is inside
// the above table's range, so the upper levels are asked anyway. Values
// neither deleted nor overwritten stay, and Get reads the new ones.
func TestShadowDropFindsOverwrites(t *testing.T) {
	old := shadowLocalRatio
	shadowLocalRatio = 0
	t.Cleanup(func() { shadowLocalRatio = old }) // after shadowDB's Close
	const n = 200
	d := shadowDB(t, n)
	mustDelete(t, d, delKey(3))
	overwritten := map[int]bool{40: true, 90: true, 160: true}
	var keys [][]byte
	for i := range overwritten {
		keys = append(keys, delKey(i))
	}
	setAndFlush(t, d, "new", keys...)

	rewriteBottomForTest(t, d)

	m := d.Metrics()
	checkDropped(t, m, uint64(1+len(overwritten)), "the deleted and the overwritten keys")
	if m.Compaction.ShadowOverwriteLookups == 0 || m.Compaction.ShadowPositives == 0 {
		t.Fatalf("%d overwrite lookups, %d index positives: the index path did not decide", m.Compaction.ShadowOverwriteLookups, m.Compaction.ShadowPositives)
	}
	for i := 0; i < n; i++ {
		if held := levelHoldsKey(t, d, NumLevels-1, delKey(i)); held != (i != 3 && !overwritten[i]) {
			t.Fatalf("key %d at the bottom: %v", i, held)
		}
	}
	for i := range overwritten {
		if got, err := d.Get(delKey(i)); err != nil || string(got) != "new" {
			t.Fatalf("Get of overwritten key %d: %q, %v", i, got, err)
		}
	}
	checkDeleted(t, d, n, func(i int) bool { return i == 3 })
}

// TestShadowDropStopsUnpaidOverwriteLookups: once a compaction's lookups of
// values the index ruled out find too few newer entries, it makes no more
// of them: a table above spanning every key with one tombstone and no
// overwrite costs the bottom rewrite only the trial's lookups.
func TestShadowDropStopsUnpaidOverwriteLookups(t *testing.T) {
	oldRatio, oldTrial := shadowLocalRatio, shadowOverwriteTrial
	shadowLocalRatio, shadowOverwriteTrial = 0, 8
	t.Cleanup(func() { shadowLocalRatio, shadowOverwriteTrial = oldRatio, oldTrial }) // after shadowDB's Close
	const n = 200
	d := shadowDB(t, n)
	mustDelete(t, d, delKey(150))
	setAndFlush(t, d, "x", []byte("a"), []byte("z")) // the table spans every key

	rewriteBottomForTest(t, d)

	m := d.Metrics()
	if m.Compaction.ShadowOverwriteLookups != shadowOverwriteTrial {
		t.Fatalf("%d overwrite lookups, want the trial's %d", m.Compaction.ShadowOverwriteLookups, shadowOverwriteTrial)
	}
	checkDropped(t, m, 1, "the deleted one")
	checkDeleted(t, d, n, func(i int) bool { return i == 150 })
}

// TestShadowDropOverwriteKeepsTombstoneEstimate: a value dropped under a
// newer Set above leaves that table's ShadowedBytes alone, since the
// estimate counts only what its tombstones shadow. A snapshot taken
// between the overwrites and the deletes keeps every deleted key's value
// at the bottom, so the rewrite drops only the overwritten ones and the
// estimate of the table holding both must not fall (else the picker would
// leave its tombstones above for longer, with the values under them).
func TestShadowDropOverwriteKeepsTombstoneEstimate(t *testing.T) {
	const n = 200
	d := shadowDB(t, n)
	overwritten := []int{40, 90, 160}
	for _, i := range overwritten {
		if err := d.Set(delKey(i), []byte("new"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	for i := 0; i < 10; i++ {
		mustDelete(t, d, delKey(i))
	}
	mustFlush(t, d)
	before := d.Metrics().Levels[0].ShadowedBytes
	if before == 0 {
		t.Fatal("the flushed tombstones shadow nothing by the estimate")
	}

	rewriteBottomForTest(t, d)

	m := d.Metrics()
	checkDropped(t, m, uint64(len(overwritten)), "the overwritten ones")
	if got := m.Levels[0].ShadowedBytes; got != before {
		t.Fatalf("the table's tombstones shadow %d estimated bytes after the overwrites' drops, want %d as before", got, before)
	}
	for i := 0; i < 10; i++ {
		if !levelHoldsKey(t, d, NumLevels-1, delKey(i)) {
			t.Fatalf("the value of key %d, which the snapshot reads, left the bottom", i)
		}
	}
}
