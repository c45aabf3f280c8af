package kv

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// withFastTicker makes the background ticker check every millisecond for
// the test.
func withFastTicker(t *testing.T) {
	old := testTickInterval
	testTickInterval = time.Millisecond
	t.Cleanup(func() { testTickInterval = old })
}

// bottomDB loads n keys with 1 KiB values and compacts them to the bottom.
func bottomDB(t *testing.T, o *Options, n int) *DB {
	t.Helper()
	fs := o.FS
	if fs == nil {
		fs = vfs.NewMem()
	}
	d := openMem(t, fs, o)
	val := make([]byte, 1024)
	for i := 0; i < n; i++ {
		for j := range val {
			val[j] = byte(i*7 + j*13)
		}
		if err := d.Set(delKey(i), val, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	return d
}

func delKey(i int) []byte { return []byte(fmt.Sprintf("key%06d", i)) }

func liveTableBytes(d *DB) uint64 {
	var n uint64
	for _, l := range d.Metrics().Levels {
		n += l.Bytes
	}
	return n
}

// waitFor polls cond for up to 5 s (the condition is normally met in
// milliseconds; the bound only keeps a broken build from hanging).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func checkDeleted(t *testing.T, d *DB, n int, deleted func(int) bool) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, err := d.Get(delKey(i))
		switch {
		case deleted(i) && !errors.Is(err, ErrNotFound):
			t.Fatalf("deleted key %d: err %v", i, err)
		case !deleted(i) && err != nil:
			t.Fatalf("kept key %d: %v", i, err)
		}
	}
}

// TestIdleDBReclaimsDeletedSpace: deleting most keys of a DB whose data is
// at the bottom frees the space without a manual Compact and without the
// age bound: the ticker flushes the idle memtable, the flushed table's
// shadowed-bytes estimate makes a purge compaction worth it, and it drops
// the deleted data.
func TestIdleDBReclaimsDeletedSpace(t *testing.T) {
	withFastTicker(t)
	const n = 600
	d := bottomDB(t, &Options{MemTableSize: 1 << 20, TombstoneMaxAge: -1}, n)
	before := liveTableBytes(d)
	deleted := func(i int) bool { return i%4 != 0 }
	for i := 0; i < n; i++ {
		if deleted(i) {
			if err := d.Delete(delKey(i), NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The purge counter is bumped after the compaction's version is
	// installed, so the wait covers it too (else the shrink could be seen
	// a moment before the count).
	waitFor(t, "table bytes to shrink", func() bool {
		return liveTableBytes(d) <= before*4/10 && d.Metrics().Compaction.Purges > 0
	})
	m := d.Metrics()
	if m.Compaction.IdleFlushes == 0 || m.Compaction.Purges == 0 {
		t.Fatalf("space came back without an idle flush and a purge: %+v", m.Compaction)
	}
	if m.Compaction.AgeCompactions != 0 {
		t.Fatalf("the age bound is off, yet %d age compactions ran", m.Compaction.AgeCompactions)
	}
	checkDeleted(t, d, n, deleted)
}

// TestAgedTombstoneReachesBottom: a few deletes are never worth a purge,
// but TombstoneMaxAge makes background compactions carry them to the
// bottom, where they and the data they hide are dropped.
func TestAgedTombstoneReachesBottom(t *testing.T) {
	withFastTicker(t)
	const n = 600
	d := bottomDB(t, &Options{MemTableSize: 1 << 20, TombstoneMaxAge: 20 * time.Millisecond}, n)
	deleted := func(i int) bool { return i == 5 || i == 300 }
	for _, i := range []int{5, 300} {
		if err := d.Delete(delKey(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the tombstones to be dropped", func() bool {
		m := d.Metrics()
		var tombs uint64
		for _, l := range m.Levels {
			tombs += l.Tombstones
		}
		return m.Compaction.AgeCompactions > 0 && tombs == 0 && m.MemTable.Entries == 0
	})
	if got := d.Metrics().Compaction.Purges; got != 0 {
		t.Fatalf("2 deletes of 600 keys were worth %d purges", got)
	}
	checkDeleted(t, d, n, deleted)
}

// TestShadowedEstimate: a flushed table's estimate counts about one average
// bottom-level entry per tombstone of a key that is there, and nothing for
// a key that never was (beyond the filters' false positives).
func TestShadowedEstimate(t *testing.T) {
	const n = 1000
	d := bottomDB(t, &Options{DisableAutomaticCompactions: true}, n)
	l6 := d.Metrics().Levels[NumLevels-1]
	avg := float64(l6.Bytes) / float64(l6.Entries)
	for i := 0; i < 200; i++ {
		if err := d.Delete(delKey(i), NoSync); err != nil {
			t.Fatal(err)
		}
		if err := d.Delete([]byte(fmt.Sprintf("absent%06d", i)), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	m := d.Metrics()
	got, want := float64(m.Levels[0].ShadowedBytes), 200*avg
	// The absent keys' tombstones hide nothing and are elided at flush;
	// the filter's FP rate cannot add 10%.
	if got < 0.9*want || got > 1.1*want {
		t.Fatalf("L0 shadows an estimated %.0f bytes, want about %.0f (200 deleted keys x %.0f B)", got, want, avg)
	}
	if m.Levels[0].Tombstones != 200 {
		t.Fatalf("L0 holds %d tombstones, want the 200 of keys that exist", m.Levels[0].Tombstones)
	}
}

// TestShadowedEstimateAfterReopen: tables found by Open get the estimate
// they had when written, from no stored figure: the tombstone index's
// rebuild at Open computes it in the pass that reads their tombstones
// anyway, so the background check reads nothing; with the index disabled,
// the background check (estimateMissing) reads the table itself.
func TestShadowedEstimateAfterReopen(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableTombstoneIndex=%v", noIndex), func(t *testing.T) {
			fs := vfs.NewMem()
			o := &Options{FS: fs, DisableAutomaticCompactions: true, DisableTombstoneIndex: noIndex}
			d, err := Open("db", o)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				if err := d.Set(delKey(i), make([]byte, 512), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 50; i++ {
				if err := d.Delete(delKey(i), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			want := d.Metrics().Levels[0].ShadowedBytes
			if want == 0 {
				t.Fatal("no estimate after the flush")
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if d, err = Open("db", o); err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			waitTombstoneIndexBuilt(t, d)
			if got := d.Metrics().Levels[0].ShadowedBytes; noIndex && got != 0 {
				t.Fatalf("estimate %d before the background check ran", got)
			} else if !noIndex && got != want {
				t.Fatalf("estimate after reopen %d, want %d as when written (from the index rebuild)", got, want)
			}
			estimateMissingNow(d)
			if got := d.Metrics().Levels[0].ShadowedBytes; got != want {
				t.Fatalf("estimate after the background check %d, want %d as when written", got, want)
			}
			wantReads := uint64(0)
			if noIndex {
				wantReads = 1
			}
			if got := d.counters.compaction.estimateReads.Load(); got != wantReads {
				t.Fatalf("the background check read %d tables, want %d", got, wantReads)
			}
		})
	}
}

// estimateMissingNow runs the background check's estimate of tables found
// by Open once, on the current version.
func estimateMissingNow(d *DB) {
	waitTombstoneIndexBuilt(nil, d) // estimateMissing leaves the tables to it
	v := refCurrent(d)
	d.estimateMissing(v)
	v.Unref()
}
