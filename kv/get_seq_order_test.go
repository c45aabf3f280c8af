package kv

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestLatestReadSurvivesACompactionBetweenItsLoads runs a Get, an
// ExplainGet and a NewIter whose two loads (read state, visible sequence
// number) have a Delete, a flush and a compaction between them, the
// compaction dropping the key's newest value v1 (shadowed by the Delete)
// while an older value v0 stays below it. Each read may answer v1 or not
// found (the Delete is concurrent with it), never v0: with the number
// loaded first, the read state pinned after the compaction no longer held
// v1, the Delete was above the number, and v0 came back (K15). Both ways
// of dropping v1 are tried: merged with the Delete (compaction's C1) and
// dropped early with the Delete above it (K14).
func TestLatestReadSurvivesACompactionBetweenItsLoads(t *testing.T) {
	reads := map[string]func(d *DB, k []byte) (string, error){
		"Get": func(d *DB, k []byte) (string, error) {
			v, err := d.Get(k)
			return string(v), err
		},
		"ExplainGet": func(d *DB, k []byte) (string, error) {
			tr, err := d.ExplainGet(k)
			if err != nil || !tr.Found {
				return "", ErrNotFound
			}
			return string(tr.Value), nil
		},
		"NewIter": func(d *DB, k []byte) (string, error) {
			it := d.NewIter(nil)
			defer it.Close()
			if !it.SeekGE(k) || string(it.Key()) != string(k) {
				return "", errors.Join(ErrNotFound, it.Error())
			}
			return string(it.Value()), nil
		},
	}
	for _, early := range []bool{false, true} {
		for name, read := range reads {
			how := "merged(C1)"
			if early {
				how = "dropped-early(K14)"
			}
			t.Run(how+"/"+name, func(t *testing.T) {
				d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
				defer d.Close()
				k := []byte("k")
				mustSet := func(v string) {
					if err := d.Set(k, []byte(v), NoSync); err != nil {
						t.Fatal(err)
					}
				}
				mustSet("v0")
				mustFlush(t, d)
				compactLevelForTest(t, d, 0, 4) // v0 at L4
				mustSet("v1")
				// A tombstone of another key, so the index holds one and
				// early drop is on.
				mustDelete(t, d, []byte("j"))
				mustFlush(t, d)
				if early {
					compactLevelForTest(t, d, 0, 2) // v1 at L2
				}
				ran := false
				testHookReadStatePinned = func() {
					if ran {
						return
					}
					ran = true
					mustDelete(t, d, k)
					mustFlush(t, d)
					if early {
						compactLevelForTest(t, d, 2, 3) // v1 goes, its tombstone in L0
					} else {
						compactLevelForTest(t, d, 0, 1) // the tombstone merges with v1
					}
				}
				defer func() { testHookReadStatePinned = nil }()
				got, err := read(d, k)
				if !ran {
					t.Fatal("the hook between the loads did not run")
				}
				if early && d.Metrics().Compaction.ShadowedDropped == 0 {
					t.Fatal("no value was dropped early: the test would prove nothing")
				}
				switch {
				case err == nil && got == "v1":
				case errors.Is(err, ErrNotFound):
				default:
					t.Fatalf("read = %q, %v; want v1 or not found (v0 was overwritten before the read began)", got, err)
				}
			})
		}
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
