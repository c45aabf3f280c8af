package kv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestCompactStepsAgainstAModel drives a tree several levels deep (the
// leveled policy run by CompactDue, tables of a few KiB, the metadata cut
// lowered so that flushes and compactions end tables inside range
// deletions) with random Sets, Deletes, DeleteRanges, snapshots, Flushes
// and Compacts of random ranges, narrow and wide, and holds every Get and
// scan, of the DB and of each open snapshot, against a map. After each
// Compact(lo, hi) it checks the level-by-level steps (compaction's P7):
// the levels stay sorted and disjoint (manifest's V2), no table above the
// bottom meets [lo, hi], and with no snapshot open no bottom table meeting
// it keeps a tombstone or a numbered entry.
func TestCompactStepsAgainstAModel(t *testing.T) {
	rounds, steps := 6, 3000
	switch {
	case raceEnabled:
		// One goroutine: the race detector has nothing to find here.
		rounds, steps = 1, 1000
	case testing.Short():
		rounds = 2
	}
	for round := range rounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			compactStepsModelRound(t, uint64(round), steps)
		})
	}
}

func compactStepsModelRound(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 77))
	if seed%2 == 1 {
		lowerMetadataCut(t, 1<<10)
	}
	opts := &Options{MemTableSize: 4 << 10, LBaseMaxBytes: 1 << 10, TargetFileSize: 1 << 10,
		L0CompactionThreshold: 2, DisableAutomaticCompactions: true}
	d := openMem(t, vfs.NewMem(), opts)
	defer func() { d.Close() }()
	const nKeys = 2000
	var keys []string
	for i := range nKeys {
		keys = append(keys, fmt.Sprintf("k%04d", i))
	}
	key := func() string { return keys[r.IntN(nKeys)] }
	// span returns a range [a, b] (a <= b): mostly narrow, some wide.
	span := func() (string, string) {
		i := r.IntN(nKeys)
		w := 1 + r.IntN(8)
		if r.IntN(4) == 0 {
			w = r.IntN(nKeys)
		}
		return keys[i], keys[min(i+w, nKeys-1)]
	}
	m := rdModel{}
	type snapModel struct {
		s *Snapshot
		m rdModel
	}
	var snaps []snapModel
	defer func() {
		for _, s := range snaps {
			s.s.Close()
		}
	}()
	checkTree := func(what string, lo, hi []byte) {
		t.Helper()
		v := refCurrent(d)
		defer v.Unref()
		if err := v.CheckOrdering(); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, describeLevels(v))
		}
		for l := 0; l < NumLevels-1; l++ {
			for _, tm := range v.Levels[l] {
				if tm.Overlaps(lo, hi) {
					t.Fatalf("%s: L%d table %06d [%s, %s] meets the compacted range [%s, %s]\n%s",
						what, l, tm.FileNum, tm.Smallest, tm.Largest, lo, hi, describeLevels(v))
				}
			}
		}
		if len(snaps) > 0 {
			return
		}
		for _, tm := range v.Levels[NumLevels-1] {
			if tm.Overlaps(lo, hi) && (tm.NumDeletions() > 0 || tm.Props.NumRangeDeletions > 0 || tm.LargestSeq > 0) {
				t.Fatalf("%s: bottom table %06d [%s, %s] meets the compacted range [%s, %s] with %d tombstones, %d range deletions, largest seq %d",
					what, tm.FileNum, tm.Smallest, tm.Largest, lo, hi, tm.NumDeletions(), tm.Props.NumRangeDeletions, tm.LargestSeq)
			}
		}
	}
	var depth levelsSeen
	for step := range steps {
		what := fmt.Sprintf("seed %d step %d", seed, step)
		switch op := r.IntN(100); {
		case op < 50:
			k := key()
			v := fmt.Sprintf("v%d.%s", step, strings.Repeat("x", r.IntN(100)))
			if err := d.Set([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		case op < 60:
			k := key()
			if err := d.Delete([]byte(k), NoSync); err != nil {
				t.Fatal(err)
			}
			delete(m, k)
		case op < 65:
			a, b := span()
			if a == b {
				continue
			}
			if err := d.DeleteRange([]byte(a), []byte(b), NoSync); err != nil {
				t.Fatal(err)
			}
			m.deleteRange(a, b)
		case op < 68:
			snaps = append(snaps, snapModel{d.NewSnapshot(), m.clone()})
		case op < 71 && len(snaps) > 0:
			i := r.IntN(len(snaps))
			if err := snaps[i].s.Close(); err != nil {
				t.Fatal(err)
			}
			snaps = slices.Delete(snaps, i, i+1)
		case op < 76:
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		case op < 82:
			if err := d.CompactDue(); err != nil {
				t.Fatal(err)
			}
		case op < 86:
			var lo, hi []byte
			switch r.IntN(10) {
			case 0: // the whole key space
			case 1:
				a, _ := span()
				lo = []byte(a)
			case 2:
				_, b := span()
				hi = []byte(b)
			default:
				a, b := span()
				lo, hi = []byte(a), []byte(b)
			}
			depth.add(refCurrent(d))
			if err := d.Compact(lo, hi); err != nil {
				t.Fatalf("%s: Compact(%q, %q): %v", what, lo, hi, err)
			}
			checkTree(fmt.Sprintf("%s: Compact(%q, %q)", what, lo, hi), lo, hi)
		case op < 88:
			checkAgainst(t, what, d, m, keys, "", "")
			for i, s := range snaps {
				checkAgainst(t, fmt.Sprintf("%s snapshot %d", what, i), s.s, s.m, keys, "", "")
			}
		}
	}
	t.Logf("levels holding tables when Compact was called: %v", depth)
	checkAgainst(t, "end", d, m, keys, "", "")
	for i, s := range snaps {
		checkAgainst(t, fmt.Sprintf("end snapshot %d", i), s.s, s.m, keys, "", "")
	}
}

// describeLevels lists v's tables by level, for failure messages.
func describeLevels(v *manifest.Version) string {
	var b strings.Builder
	for l, ts := range v.Levels {
		for _, tm := range ts {
			fmt.Fprintf(&b, "L%d %06d [%s, %s]\n", l, tm.FileNum, tm.Smallest, tm.Largest)
		}
	}
	return b.String()
}

// levelsSeen counts, per level, the versions seen with tables there.
type levelsSeen [NumLevels]int

func (s *levelsSeen) add(v *manifest.Version) {
	for l, ts := range v.Levels {
		if len(ts) > 0 {
			s[l]++
		}
	}
	v.Unref()
}
