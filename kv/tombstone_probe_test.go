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
// them, stops when its callback says so, and noOlderVersion answers as
// its definition over that scan does: no spanning table's filter may
// hold the key.
func TestEachTableSpanningMatchesScan(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 19))
		d := openMem(t, vfs.NewMem(), &Options{DisableWAL: true, MemTableSize: 16 << 10, TargetFileSize: 16 << 10, LBaseMaxBytes: 64 << 10})
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
		d.mu.Lock()
		v := d.current
		v.Ref()
		d.mu.Unlock()
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
			none := true
			for _, tm := range want {
				none = none && !d.tableMayHold(tm, k)
			}
			if got := d.noOlderVersion(v, from, k); got != none {
				t.Fatalf("seed %d, %q from L%d: noOlderVersion %v, the scan says %v", seed, k, from, got, none)
			}
		}
		v.Unref()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
