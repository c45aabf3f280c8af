package kv

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// TestMetadataCutMatchesModel: with the cut at 4 KiB, flushes and
// compactions of keys up to 1.5 KB long end tables at points and between
// range deletions; random sets, deletes and range deletions, snapshots,
// flushes, compactions and reopens must read as a map model, forwards and
// backwards, and the DB must pass Check. (A break-it review's model, 400
// seeds clean; 20 here, 400 under SIEVEKV_SOAK.)
func TestMetadataCutMatchesModel(t *testing.T) { runCutModel(t, 10, 4<<10) }

// TestTablesEndInsideRangeDeletionsMatchModel: the same model with range
// deletions spanning up to every key, so that flushes and compactions
// end tables inside them (rangeDelOutput splits a tombstone at the
// bound): reads must still match the map, and every table its bounds
// (Check).
func TestTablesEndInsideRangeDeletionsMatchModel(t *testing.T) { runCutModel(t, 60, 4<<10) }

// TestCutBelowAnEmptyTableMatchesModel: the model with the cut at 512
// bytes, below the metadata of a table with nothing in it. A review's
// model found the writer, before tables could end inside range
// deletions, finishing a just-created table at the cut before its first
// entry: an empty table with zero bounds, which a manifest edit then
// refused as overlapping its neighbour. A table holding nothing is never
// cut now (rangeDelOutput.cutBound).
func TestCutBelowAnEmptyTableMatchesModel(t *testing.T) { runCutModel(t, 60, 512) }

// runCutModel runs the model with the metadata cut at cut bytes over 20
// seeds (400 under SIEVEKV_SOAK), each range deletion spanning up to
// rangeKeys keys.
func runCutModel(t *testing.T, rangeKeys int, cut uint64) {
	lowerMetadataCut(t, cut)
	seeds := 20
	if testutil.Soak() {
		seeds = 400
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { cutModelRun(t, int64(seed), rangeKeys) })
	}
}

// cutModelRun runs one seed of the model; a range deletion spans up to
// rangeKeys keys.
func cutModelRun(t *testing.T, seed int64, rangeKeys int) {
	rng := rand.New(rand.NewSource(seed))
	fs := vfs.NewMem()
	opts := func() *Options {
		return &Options{MemTableSize: 64 << 10, BlockSize: 256, L0CompactionThreshold: 2, DisableAutomaticCompactions: rng.Intn(2) == 0}
	}
	d := openMem(t, fs, opts())
	defer func() { d.Close() }()
	// Long keys, some followed by their successors (k+"\x00", the bounds
	// a split table ends at), and the empty key, where ranges may start.
	keys := []string{""}
	for i := range 60 {
		k := string(append(fmt.Appendf(nil, "k%03d", i), bytes.Repeat([]byte{0xff}, rng.Intn(1500))...))
		keys = append(keys, k)
		if rng.Intn(4) == 0 {
			keys = append(keys, k+"\x00", k+"\x00\x00")
		}
	}
	sort.Strings(keys)
	nkeys := len(keys)
	m := rdModel{}
	type snap struct {
		s *Snapshot
		m rdModel
	}
	var snaps []snap
	for step := range 400 {
		switch r := rng.Intn(100); {
		case r < 50:
			k := keys[rng.Intn(nkeys)]
			v := fmt.Sprintf("v%d-%d", seed, step)
			if err := d.Set([]byte(k), []byte(v), nil); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		case r < 62:
			k := keys[rng.Intn(nkeys)]
			if err := d.Delete([]byte(k), nil); err != nil {
				t.Fatal(err)
			}
			delete(m, k)
		case r < 70:
			i := rng.Intn(nkeys)
			j := min(nkeys-1, i+rng.Intn(rangeKeys))
			s, e := keys[i], keys[j]
			if rng.Intn(2) == 0 {
				e = s + "\x00"
			}
			if s >= e {
				continue
			}
			if err := d.DeleteRange([]byte(s), []byte(e), nil); err != nil {
				t.Fatal(err)
			}
			m.deleteRange(s, e)
		case r < 75:
			snaps = append(snaps, snap{d.NewSnapshot(), m.clone()})
		case r < 79 && len(snaps) > 0:
			i := rng.Intn(len(snaps))
			checkAgainst(t, fmt.Sprintf("step %d snapshot", step), snaps[i].s, snaps[i].m, keys, "", "")
			snaps[i].s.Close()
			snaps = append(snaps[:i], snaps[i+1:]...)
		case r < 88:
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		case r < 93:
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
		case r < 96:
			for _, s := range snaps {
				s.s.Close()
			}
			snaps = nil
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = openMem(t, fs, opts())
		default:
			checkAgainst(t, fmt.Sprintf("step %d", step), d, m, keys, "", "")
		}
	}
	checkAgainst(t, "end", d, m, keys, "", "")
	for i, s := range snaps {
		checkAgainst(t, fmt.Sprintf("end snapshot %d", i), s.s, s.m, keys, "", "")
		s.s.Close()
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, opts())
	checkAgainst(t, "reopened", d, m, keys, "", "")
	t.Logf("tables at the end: %d", tableCount(d))
	d.Close()
	if _, err := Check("db", &Options{FS: fs}); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// lowerMetadataCut sets metadataCut to n for the rest of the test, so that
// keys of a few KB reach it.
func lowerMetadataCut(t *testing.T, n uint64) {
	saved := metadataCut
	metadataCut = n
	t.Cleanup(func() { metadataCut = saved })
}

// tableCount is the number of tables in d's current version.
func tableCount(d *DB) int {
	v := refCurrent(d)
	defer v.Unref()
	n := 0
	for _, l := range v.Levels {
		n += len(l)
	}
	return n
}
