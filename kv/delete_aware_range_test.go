package kv

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func rangeTombstonesIn(m Metrics) uint64 {
	var n uint64
	for _, l := range m.Levels {
		n += l.RangeTombstones
	}
	return n
}

// TestIdleDBReclaimsRangeDeletedSpace: one DeleteRange of three quarters of
// a DB whose data is at the bottom frees the space without a manual
// Compact and without the age bound: the ticker flushes the idle memtable
// that holds only the range tombstone, the flushed table's estimate (the
// range's data blocks in the tables below) makes a purge worth it, and the
// purge drops the covered data and, at the bottom, the tombstone.
func TestIdleDBReclaimsRangeDeletedSpace(t *testing.T) {
	withFastTicker(t)
	const n = 600
	d := bottomDB(t, &Options{MemTableSize: 1 << 20, TombstoneMaxAge: -1}, n)
	before := liveTableBytes(d)
	const lo, hi = 100, 550
	if err := d.DeleteRange(delKey(lo), delKey(hi), NoSync); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "table bytes to shrink", func() bool {
		m := d.Metrics()
		return liveTableBytes(d) <= before*4/10 && rangeTombstonesIn(m) == 0 && m.MemTable.Entries == 0
	})
	m := d.Metrics()
	if m.Compaction.IdleFlushes == 0 || m.Compaction.Purges == 0 {
		t.Fatalf("space came back without an idle flush and a purge: %+v", m.Compaction)
	}
	if m.Compaction.AgeCompactions != 0 {
		t.Fatalf("the age bound is off, yet %d age compactions ran", m.Compaction.AgeCompactions)
	}
	checkDeleted(t, d, n, func(i int) bool { return i >= lo && i < hi })
}

// TestAgedRangeTombstoneReachesBottom: a DeleteRange of two keys is never
// worth a purge, but TombstoneMaxAge carries it to the bottom, where it is
// dropped with what it covers.
func TestAgedRangeTombstoneReachesBottom(t *testing.T) {
	withFastTicker(t)
	const n = 600
	d := bottomDB(t, &Options{MemTableSize: 1 << 20, TombstoneMaxAge: 20 * time.Millisecond}, n)
	if err := d.DeleteRange(delKey(300), delKey(302), NoSync); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the range tombstone to be dropped", func() bool {
		m := d.Metrics()
		return m.Compaction.AgeCompactions > 0 && rangeTombstonesIn(m) == 0 && m.MemTable.Entries == 0
	})
	if got := d.Metrics().Compaction.Purges; got != 0 {
		t.Fatalf("a 2-key DeleteRange of 600 keys was worth %d purges", got)
	}
	checkDeleted(t, d, n, func(i int) bool { return i == 300 || i == 301 })
}

// TestRangeShadowedEstimate: a flushed range tombstone's estimate is the
// bottom level's bytes in its range, overlapping tombstones counted once,
// and it is the same after a reopen, with the tombstone index (its rebuild
// estimates tables it skips for want of point tombstones) and without
// (the background check).
func TestRangeShadowedEstimate(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableTombstoneIndex=%v", noIndex), func(t *testing.T) {
			const n = 1000
			o := &Options{DisableAutomaticCompactions: true, DisableTombstoneIndex: noIndex}
			d := bottomDB(t, o, n) // sets o.FS, which the reopen uses
			l6 := d.Metrics().Levels[NumLevels-1]
			// [200, 600) and [500, 800) overlap: 600 keys shadowed, once.
			for _, r := range [][2]int{{200, 600}, {500, 800}} {
				if err := d.DeleteRange(delKey(r[0]), delKey(r[1]), NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			m := d.Metrics()
			got, want := float64(m.Levels[0].ShadowedBytes), 0.6*float64(l6.Bytes)
			if got < 0.9*want || got > 1.1*want {
				t.Fatalf("L0 shadows an estimated %.0f bytes, want about %.0f (6/10 of L6's %d)", got, want, l6.Bytes)
			}
			if m.Levels[0].RangeTombstones != 2 || m.Levels[0].Tombstones != 0 {
				t.Fatalf("L0 holds %d range and %d point tombstones, want 2 and 0", m.Levels[0].RangeTombstones, m.Levels[0].Tombstones)
			}
			if s := m.String(); !strings.Contains(s, "range tombstones: L0 2 ") {
				t.Fatalf("stats do not list the range tombstones per level:\n%s", s)
			}
			d = reopen(t, d, "db", o)
			defer d.Close()
			estimateMissingNow(d)
			if again := d.Metrics().Levels[0].ShadowedBytes; float64(again) != got {
				t.Fatalf("estimate after reopen %d, want %.0f as when written", again, got)
			}
			if reads := d.counters.compaction.estimateReads.Load(); reads != 0 {
				t.Fatalf("estimating range tombstones read %d tables' entries, want none (they are resident)", reads)
			}
		})
	}
}
