package kv

import (
	"testing"
	"time"
)

// TestIdlePurgeOnlyOnceIdle: a few deletes spread over a DB at the bottom
// (4% of its keys) are neither a purge worth it (they free 4% of the
// bottom level a compaction would rewrite, under PurgeRatio) nor old
// enough for the age bound, the lone L0 table a delete burst can end
// with. Once the DB took no write for a whole tick, the ticker runs an
// idle purge and the tombstones and the values they hide are gone; a
// tick after a write does not. The ticks are driven by hand, so which
// tick saw a write is not left to the scheduler.
func TestIdlePurgeOnlyOnceIdle(t *testing.T) {
	old := testTickInterval
	testTickInterval = time.Hour // the test's own d.tick calls only
	t.Cleanup(func() { testTickInterval = old })
	const n = 600
	d := bottomDB(t, &Options{MemTableSize: 1 << 20, TombstoneMaxAge: -1}, n)
	deleted := func(i int) bool { return i%25 == 3 }
	deleteAndFlush(t, d, n, deleted)
	m := d.Metrics()
	if m.Levels[0].Tombstones == 0 || m.Compaction.Purges != 0 || m.Compaction.AgeCompactions != 0 {
		t.Fatalf("want the tombstones in L0 and no purge or age compaction yet: L0 %+v, %+v", m.Levels[0], m.Compaction)
	}
	if !m.Compaction.IdlePurgePending {
		t.Fatalf("tombstones shadowing %d of %d bytes, yet no idle purge pending", m.Levels[0].ShadowedBytes, liveTableBytes(d))
	}

	// A tick, a write, a tick: the second tick saw a write since the
	// first, so the DB is not idle and nothing is compacted.
	d.tick()
	if err := d.Set(delKey(0), []byte("v"), NoSync); err != nil {
		t.Fatal(err)
	}
	d.tick()
	waitFor(t, "no compaction in progress", func() bool { return !d.Metrics().Compaction.InProgress })
	if m := d.Metrics(); m.Compaction.IdlePurges != 0 || m.Levels[0].Tombstones == 0 {
		t.Fatalf("an idle purge ran a tick after a write: %+v", m.Compaction)
	}

	// A tick with no write since the last: idle, so the purge runs.
	d.tick()
	waitFor(t, "the idle purge", func() bool {
		m := d.Metrics()
		var tombs uint64
		for _, l := range m.Levels {
			tombs += l.Tombstones
		}
		return m.Compaction.IdlePurges > 0 && tombs == 0 && !m.Compaction.InProgress
	})
	m = d.Metrics()
	if m.Compaction.Purges != 0 || m.Compaction.AgeCompactions != 0 || m.Compaction.IdlePurgePending {
		t.Fatalf("want one idle purge and nothing else due: %+v", m.Compaction)
	}
	checkDeleted(t, d, n, func(i int) bool { return i != 0 && deleted(i) })
}

// TestIdlePurgeOffStaysOff: with IdlePurgeMinShare negative, the same
// lone L0 table of tombstones survives idle ticks (the garbage then waits
// for TombstoneMaxAge or a compaction due by size), and none is reported
// pending.
func TestIdlePurgeOffStaysOff(t *testing.T) {
	old := testTickInterval
	testTickInterval = time.Hour // the test's own d.tick calls only
	t.Cleanup(func() { testTickInterval = old })
	const n = 600
	d := bottomDB(t, &Options{MemTableSize: 1 << 20, TombstoneMaxAge: -1, IdlePurgeMinShare: -1}, n)
	for i := 3; i < n; i += 25 {
		if err := d.Delete(delKey(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the flush's compactions", func() bool { return !d.Metrics().Compaction.InProgress })
	for range 3 {
		d.tick()
	}
	waitFor(t, "no compaction in progress", func() bool { return !d.Metrics().Compaction.InProgress })
	if m := d.Metrics(); m.Compaction.IdlePurges != 0 || m.Compaction.IdlePurgePending || m.Levels[0].Tombstones == 0 {
		t.Fatalf("idle purges off, yet L0 %+v, %+v", m.Levels[0], m.Compaction)
	}
}

// deleteAndFlush deletes the keys delKey(i), i < n, that deleted selects,
// flushes them into one L0 table and waits for the compactions the flush
// starts.
func deleteAndFlush(t *testing.T, d *DB, n int, deleted func(int) bool) {
	t.Helper()
	for i := 0; i < n; i++ {
		if deleted(i) {
			if err := d.Delete(delKey(i), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the flush's compactions", func() bool { return !d.Metrics().Compaction.InProgress })
}
