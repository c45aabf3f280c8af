package kv

import (
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestGetSeqLoadedBeforeReadState replays, step by step, a Get that loses
// the race its two loads open: DB.Get loads the visible sequence number,
// then getAt pins the read state. A write, a flush and a compaction in
// between can remove the value visible at the loaded number, shadowed by
// the write the number does not see, and the Get then returns a state the
// key never had (here: not found, where the key held "v1"). Both the
// compaction that merges the write with the value (C1) and one that
// drops the value early (K14, with the write above it) do it. Loading the
// read state first (as DB.NewIter does) closes the window: the pinned
// version still holds the value, and every entry at or below a number
// loaded later is in that state's memtables or version, or newer than
// what the Get may return.
//
// Skipped: the fix belongs in kv/read.go (getAt's callers), outside the
// early-drop files; the replay calls getAt with the early number itself,
// so once fixed this test should drive DB.Get through a hook between the
// two loads instead.
func TestGetSeqLoadedBeforeReadState(t *testing.T) {
	t.Skip("known bug: DB.Get loads visibleSeq before the read state; a compaction in between can drop the value it should return")
	for _, early := range []bool{false, true} {
		name := "merged(C1)"
		if early {
			name = "dropped-early(K14)"
		}
		t.Run(name, func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
			defer d.Close()
			k := []byte("k")
			if err := d.Set(k, []byte("v1"), NoSync); err != nil {
				t.Fatal(err)
			}
			// A tombstone of another key, so the index holds one and early
			// drop is on.
			mustDelete(t, d, []byte("j"))
			mustFlush(t, d)
			compactLevelForTest(t, d, 0, 1)
			seq := base.SeqNum(d.visibleSeq.Load()) // DB.Get's first load
			mustDelete(t, d, k)
			mustFlush(t, d)
			if early {
				compactLevelForTest(t, d, 1, 2) // the value goes, its tombstone above
			} else {
				compactLevelForTest(t, d, 0, 1) // the tombstone merges with the value
			}
			got, err := d.getAt(k, seq, nil) // getAt's read state: after the compaction
			if err != nil || string(got) != "v1" {
				t.Fatalf("Get at %d = %q, %v; want %q (the value visible at that number)", seq, got, err, "v1")
			}
		})
	}
}

// compactLevelForTest compacts every table of level into outputLevel.
func compactLevelForTest(t *testing.T, d *DB, level, outputLevel int) {
	t.Helper()
	d.mu.Lock()
	inputs := append([]*manifest.TableMetadata(nil), d.current.Levels[level]...)
	d.mu.Unlock()
	compactTablesForTest(t, d, level, outputLevel, inputs)
}
