package kv

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// tombstoneTimes maps each table of d's current version that holds
// tombstones to its tombstone time.
func tombstoneTimes(d *DB) map[uint64]int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	times := map[uint64]int64{}
	for _, l := range d.current.Levels {
		for _, t := range l {
			if hasTombstones(t) {
				times[t.FileNum] = t.TombstoneTime()
			}
		}
	}
	return times
}

// openDated opens dir and returns the DB, its tables' tombstone times
// (at least one) and the clock just before and after the Open.
func openDated(t *testing.T, dir string, o *Options) (d *DB, times map[uint64]int64, before, after int64) {
	t.Helper()
	before = time.Now().UnixNano()
	d, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	after = time.Now().UnixNano()
	if times = tombstoneTimes(d); len(times) == 0 {
		d.Close()
		t.Fatalf("%s has no table with tombstones", dir)
	}
	return d, times, before, after
}

// untarFixture extracts testdata/name.tar.gz and returns its directory.
func untarFixture(t *testing.T, name string) string {
	dir := filepath.Join(t.TempDir(), "db")
	testutil.Untar(t, filepath.Join("testdata", name+".tar.gz"), dir)
	return dir
}

func sameTimes(t *testing.T, what string, got, want map[uint64]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d tables with tombstones, want %d", what, len(got), len(want))
	}
	for num, tt := range want {
		if got[num] != tt {
			t.Fatalf("%s: table %d dated %v, want %v", what, num, time.Unix(0, got[num]), time.Unix(0, tt))
		}
	}
}

// TestTombstoneTimesSurviveReopen: TombstoneMaxAge counts from when a
// table's oldest tombstone was written, not from the last Open, so a DB
// restarted more often than the bound still carries its tombstones down
// (the MANIFEST's tag 7). Tables with point and with range tombstones keep
// their times across two reopens (the second reads the MANIFEST the first
// rewrote), and a compaction's output inherits its inputs' oldest.
func TestTombstoneTimesSurviveReopen(t *testing.T) {
	fs := vfs.NewMem()
	o := &Options{FS: fs, MemTableSize: 1 << 20, TombstoneMaxAge: -1, IdlePurgeMinShare: -1, DisableAutomaticCompactions: true}
	d := bottomDB(t, o, 600)
	for _, i := range []int{5, 300} {
		if err := d.Delete(delKey(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteRange(delKey(400), delKey(410), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	want := tombstoneTimes(d)
	if len(want) != 2 {
		t.Fatalf("%d tables with tombstones, want the 2 flushed", len(want))
	}
	for num, tt := range want {
		if tt == 0 {
			t.Fatalf("flushed table %d has no tombstone time", num)
		}
	}
	for round := range 2 {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // a clock restarted at Open would differ
		d = openMem(t, fs, o)
		sameTimes(t, "after reopen "+string(rune('1'+round)), tombstoneTimes(d), want)
	}
	// Both L0 tables into L1: the output is dated by the older input.
	oldest := min(want[firstKey(want)], want[lastKey(want)])
	if err := d.Compact(delKey(0), delKey(599)); err != nil {
		t.Fatal(err)
	}
	for num, tt := range tombstoneTimes(d) {
		if tt != oldest {
			t.Fatalf("compaction output %d dated %v, want its oldest input's %v", num, time.Unix(0, tt), time.Unix(0, oldest))
		}
	}
	d.Close()
}

func firstKey(m map[uint64]int64) uint64 {
	var k uint64
	for n := range m {
		if k == 0 || n < k {
			k = n
		}
	}
	return k
}

func lastKey(m map[uint64]int64) uint64 {
	var k uint64
	for n := range m {
		k = max(k, n)
	}
	return k
}

// TestTombstoneTimeAheadOfTheClock: a table dated ahead of the clock (the
// wall clock stepped back since, or the files came from another machine)
// is dated at the Open that finds it, so TombstoneMaxAge does not wait out
// the difference; the Open's MANIFEST records the correction.
func TestTombstoneTimeAheadOfTheClock(t *testing.T) {
	fs := vfs.NewMem()
	o := &Options{FS: fs, MemTableSize: 1 << 20, TombstoneMaxAge: -1, IdlePurgeMinShare: -1, DisableAutomaticCompactions: true}
	d := bottomDB(t, o, 100)
	if err := d.Delete(delKey(5), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour).UnixNano()
	d.mu.Lock()
	for _, l := range d.current.Levels {
		for _, tm := range l {
			if hasTombstones(tm) {
				tm.SetTombstoneTime(future)
			}
		}
	}
	d.mu.Unlock()
	// A checkpoint's MANIFEST holds the whole state, the future time too.
	if err := d.Checkpoint("cp"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	co := *o
	co.FS = fs
	cp, times, before, after := openDated(t, "cp", &co)
	if len(times) != 1 {
		t.Fatalf("%d tables with tombstones in the checkpoint, want 1", len(times))
	}
	for num, tt := range times {
		if tt < before || tt > after {
			t.Fatalf("table %d dated %v, want the Open's time (%v .. %v)", num, time.Unix(0, tt), time.Unix(0, before), time.Unix(0, after))
		}
	}
	cp.Close()
	cp, again, _, _ := openDated(t, "cp", &co)
	defer cp.Close()
	sameTimes(t, "the corrected times after another reopen", again, times)
}

// TestTombstoneTimesOfAnOlderManifest: a DB written before the MANIFEST
// kept tombstone times (the 2026-12-05 fixture) has its tables with
// tombstones dated at the first Open, and keeps those dates after.
func TestTombstoneTimesOfAnOlderManifest(t *testing.T) {
	dir := untarFixture(t, "db-2026-12-05")
	o := &Options{DisableAutomaticCompactions: true}
	d, times, before, after := openDated(t, dir, o)
	for num, tt := range times {
		if tt < before || tt > after {
			t.Fatalf("table %d dated %v, want the first Open's time", num, time.Unix(0, tt))
		}
	}
	d.Close()
	d, again, _, _ := openDated(t, dir, o)
	defer d.Close()
	sameTimes(t, "after reopen", again, times)
}

// TestTombstoneTimesOfAFixture: the fixture written once the MANIFEST
// kept tombstone times opens with the times it recorded, all before the
// Open, so they came from its MANIFEST's tag 7 rather than the Open.
func TestTombstoneTimesOfAFixture(t *testing.T) {
	dir := untarFixture(t, "db-2026-12-05-tombstone-times")
	d, times, opened, _ := openDated(t, dir, &Options{DisableAutomaticCompactions: true, ReadOnly: true})
	defer d.Close()
	for num, tt := range times {
		if tt <= 0 || tt >= opened {
			t.Fatalf("table %d dated %v, not before the Open (%v): not the MANIFEST's time", num, time.Unix(0, tt), time.Unix(0, opened))
		}
	}
}

// TestTombstoneDatedByItsDelete: a table's tombstone time is when its
// memtable took its first tombstone, not when the memtable was flushed,
// which can be long after on a DB that writes slowly: TombstoneMaxAge
// counts from the delete.
func TestTombstoneDatedByItsDelete(t *testing.T) {
	fs := vfs.NewMem()
	o := &Options{FS: fs, MemTableSize: 1 << 20, TombstoneMaxAge: -1, IdlePurgeMinShare: -1, DisableAutomaticCompactions: true}
	d := bottomDB(t, o, 100)
	defer d.Close()
	before := d.tombstoneClock()
	if err := d.Delete(delKey(5), NoSync); err != nil {
		t.Fatal(err)
	}
	after := d.tombstoneClock()
	time.Sleep(20 * time.Millisecond)
	if err := d.DeleteRange(delKey(50), delKey(60), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	times := tombstoneTimes(d)
	if len(times) != 1 {
		t.Fatalf("%d tables with tombstones, want the flushed one", len(times))
	}
	for num, tt := range times {
		if tt < before || tt > after {
			t.Fatalf("table %d dated %v, want the first Delete's time (%v .. %v)", num, time.Unix(0, tt), time.Unix(0, before), time.Unix(0, after))
		}
	}
}

// TestTombstoneAgeMetricCountsAcrossReopen: Metrics shows each level's
// oldest tombstone age, and a reopen does not reset it (what a user
// watching TombstoneMaxAge sees of the MANIFEST's times), and stats
// print it.
func TestTombstoneAgeMetricCountsAcrossReopen(t *testing.T) {
	fs := vfs.NewMem()
	o := &Options{FS: fs, MemTableSize: 1 << 20, TombstoneMaxAge: -1, IdlePurgeMinShare: -1, DisableAutomaticCompactions: true}
	d := bottomDB(t, o, 100)
	deleted := time.Now()
	if err := d.Delete(delKey(5), NoSync); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	m := d.Metrics()
	if m.Levels[0].OldestTombstoneAge <= 0 {
		t.Fatalf("L0 holds a tombstone, yet its oldest tombstone age is %v", m.Levels[0].OldestTombstoneAge)
	}
	for l := 1; l < NumLevels; l++ {
		if age := m.Levels[l].OldestTombstoneAge; age != 0 {
			t.Fatalf("L%d holds no tombstone, yet shows an age of %v", l, age)
		}
	}
	if !strings.Contains(m.String(), "oldest tombstone by level: L0 ") {
		t.Fatalf("stats do not show the age:\n%s", m)
	}
	d.Close()
	time.Sleep(50 * time.Millisecond)
	d = openMem(t, fs, o)
	defer d.Close()
	if age, since := d.Metrics().Levels[0].OldestTombstoneAge, time.Since(deleted); age < 50*time.Millisecond || age > since {
		t.Fatalf("after a reopen the oldest tombstone is %v old, want between 50ms and the %v since its Delete", age, since)
	}
}
