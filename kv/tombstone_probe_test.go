package kv

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestEachTableSpanningMatchesScan: over random live trees (L0 tables and
// deeper levels), eachTableSpanning visits exactly the tables whose key
// range holds a key, in the order a scan of every level's tables finds
// them, stops when its callback says so, and probeBelow answers as its
// definition over that scan does: a tombstone may be elided when no
// spanning table's filter may hold the key, and its estimate is
// shadowedBytes's.
func TestEachTableSpanningMatchesScan(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 19))
		fs := vfs.NewMem()
		opts := &Options{DisableWAL: true, MemTableSize: 16 << 10, TargetFileSize: 16 << 10, LBaseMaxBytes: 64 << 10}
		d := openMem(t, fs, opts)
		val := make([]byte, 64)
		for i := range 6000 {
			if err := d.Set(delKey(rng.IntN(20000)*2), val, NoSync); err != nil {
				t.Fatal(err)
			}
			if i%700 == 0 {
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		// What the compactions made of it depends on the machine's load
		// (all still in L0, or all compacted into one level): let them
		// finish, then reopen with them off and flush two more tables
		// into L0, so there are L0 tables over deeper levels however long
		// this goroutine stalls.
		waitIdle(t, d)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		opts.DisableAutomaticCompactions = true
		d = openMem(t, fs, opts)
		for i := range 1400 {
			if err := d.Set(delKey(rng.IntN(20000)*2), val, NoSync); err != nil {
				t.Fatal(err)
			}
			if i%700 == 699 {
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		v := refCurrent(d)
		levels := 0
		for l := range NumLevels {
			if len(v.Levels[l]) > 0 {
				levels++
			}
		}
		if levels < 2 {
			t.Fatalf("seed %d: a tree of %d levels tests little", seed, levels)
		}
		for range 3000 {
			k := delKey(rng.IntN(40002) - 1) // odd: absent; -1 and 40000: outside every range
			from := rng.IntN(NumLevels)
			var want []*manifest.TableMetadata
			for l := from; l < NumLevels; l++ {
				for _, tm := range v.Levels[l] {
					if tm.ContainsUserKey(k) {
						want = append(want, tm)
					}
				}
			}
			var got []*manifest.TableMetadata
			eachTableSpanning(v, from, k, func(tm *manifest.TableMetadata) bool {
				got = append(got, tm)
				return true
			})
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %q from L%d: visited %d tables, a scan finds %d", seed, k, from, len(got), len(want))
			}
			if len(want) > 1 {
				var first []*manifest.TableMetadata
				eachTableSpanning(v, from, k, func(tm *manifest.TableMetadata) bool {
					first = append(first, tm)
					return false
				})
				if len(first) != 1 || first[0] != want[0] {
					t.Fatalf("seed %d, %q: visiting went on after the callback stopped it: %d tables", seed, k, len(first))
				}
			}
			may := false
			for _, tm := range want {
				may = may || d.tableMayHold(tm, k)
			}
			shadowed, gotMay := d.probeBelow(v, from, k)
			if gotMay != may || shadowed != d.shadowedBytes(v, from, [][]byte{k}) {
				t.Fatalf("seed %d, %q from L%d: probeBelow says may hold %v, %d bytes; the scan says %v, shadowedBytes %d",
					seed, k, from, gotMay, shadowed, may, d.shadowedBytes(v, from, [][]byte{k}))
			}
		}
		v.Unref()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFlushEstimateFromElisionProbe: a flush's tables get the same
// shadowed-bytes estimate whether the elision check's probes make it or
// a probe of their tombstone keys afterwards does: deletes of live and
// absent keys over a compacted tree, with a snapshot keeping some
// tombstones from the elision check (their estimate is probed after).
func TestFlushEstimateFromElisionProbe(t *testing.T) {
	for _, withSnapshot := range []bool{false, true} {
		d := bottomDB(t, &Options{DisableAutomaticCompactions: true, TargetFileSize: 16 << 10}, 600)
		rng := rand.New(rand.NewPCG(7, 8))
		// A live key, or one never written that sorts right after it, so
		// that tombstones the check elides and ones it keeps interleave.
		key := func() []byte {
			k := delKey(rng.IntN(600))
			if rng.IntN(2) == 0 {
				k = append(k, 'x')
			}
			return k
		}
		for i := range 400 {
			if err := d.Delete(key(), NoSync); err != nil {
				t.Fatal(err)
			}
			if withSnapshot && i == 200 {
				s := d.NewSnapshot()
				defer s.Close()
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		v := refCurrent(d)
		if len(v.Levels[0]) == 0 {
			t.Fatal("the flush wrote no table")
		}
		for _, tm := range v.Levels[0] {
			keys, err := d.tableTombstones(tm)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) == 0 {
				t.Fatalf("table %d holds no tombstone", tm.FileNum)
			}
			// The flush's version had no L0 table: everything below is L1+.
			got, known := tm.ShadowedBytes()
			if want := d.shadowedBytes(v, 1, keys); !known || got != want {
				t.Errorf("snapshot %v: table %d's estimate %d (known %v), its tombstones' probe %d", withSnapshot, tm.FileNum, got, known, want)
			}
		}
		v.Unref()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
