package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// tableRangeDels returns the range tombstones table m holds.
func tableRangeDels(t *testing.T, d *DB, m *manifest.TableMetadata) []rangedel.Tombstone {
	t.Helper()
	var out []rangedel.Tombstone
	if err := d.tables.withReader(m, func(r *sstable.Reader) error {
		out = append(out, r.RangeDels()...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkDisjoint fails unless out's tables are in order and share no user
// key, as tables of one level must.
func checkDisjoint(t *testing.T, out []*manifest.TableMetadata) {
	t.Helper()
	for i := 1; i < len(out); i++ {
		if base.CompareUserKeys(out[i-1].Largest.UserKey, out[i].Smallest.UserKey) >= 0 {
			t.Fatalf("table %d ends at %q, table %d starts at %q", i-1, out[i-1].Largest.UserKey, i, out[i].Smallest.UserKey)
		}
	}
}

// TestCutBoundsAreShortSeparators: a third review found the bound a table
// ended at inside range deletions, the successor of its last 2000-byte
// key, written twice into every tombstone split there (the piece left
// behind ends at it, the piece carried on starts at it): 40 range
// deletions of 36 bytes became 160 KB of them in each table, 10x the
// metadata cut, and with 1 MiB keys a block past what a reader accepts.
// The bound is now the successor of the shortest key between the table's
// last and the next table's first.
func TestCutBoundsAreShortSeparators(t *testing.T) {
	lowerMetadataCut(t, 16<<10)
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	var in []rangedel.Tombstone
	for i := range 40 {
		in = append(in, rangedel.Tombstone{Start: fmt.Appendf(nil, "a%04d", i), End: []byte("z"), Seq: base.SeqNum(10000 + i)})
	}
	src := &entryListSource{val: []byte("v")}
	for i := range 400 {
		// Keys that differ in their sixth byte, then share a 0xff tail.
		k := append(fmt.Appendf(nil, "b%05d", i), bytes.Repeat([]byte{0xff}, 1994)...)
		src.keys = append(src.keys, base.MakeInternalKey(k, base.SeqNum(i+1), base.KindSet))
	}
	out, err := d.writeTables(src, outputSpec{rangeDels: in, split: func(_ []byte, size uint64) bool { return size >= 4<<10 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 4 {
		t.Fatalf("%d tables; the split at 4 KiB should have made more", len(out))
	}
	checkDisjoint(t, out)
	for i, m := range out {
		var size uint64
		for _, tm := range tableRangeDels(t, d, m) {
			size += sstable.RangeDelSize(tm)
			if len(tm.Start) > 7 || len(tm.End) > 7 {
				t.Fatalf("table %d: tombstone piece [%.12q, %.12q) holds a long bound", i, tm.Start, tm.End)
			}
		}
		if size > metadataCut {
			t.Fatalf("table %d holds %d bytes of range deletions, past the %d-byte metadata cut", i, size, metadataCut)
		}
	}
}

// TestCutBoundStaysBelowTheNextTombstone: a tombstone starting between a
// table's last point and the next point goes into the next table, so the
// bound, short as it is, must not pass its start: here the shortest key
// between "a1" and "a9" is "a2", where a tombstone starts, and a bound of
// "a2\x00" would leave both tables claiming "a2".
func TestCutBoundStaysBelowTheNextTombstone(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	in := []rangedel.Tombstone{
		{Start: []byte("a0"), End: []byte("zz"), Seq: 100},
		{Start: []byte("a2"), End: []byte("a3"), Seq: 101},
	}
	src := &entryListSource{val: []byte("v"), keys: []base.InternalKey{
		base.MakeInternalKey([]byte("a1"), 1, base.KindSet),
		base.MakeInternalKey([]byte("a9"), 2, base.KindSet),
	}}
	out, err := d.writeTables(src, outputSpec{rangeDels: in, split: func(k []byte, _ uint64) bool { return string(k) == "a9" }})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d tables, want the cut before a9 to make 2", len(out))
	}
	checkDisjoint(t, out)
}

// TestCutBoundsAreShortSeparatorsDB is the review's case through the API:
// range deletions under a snapshot, long keys written after them, and a
// compaction into small tables.
func TestCutBoundsAreShortSeparatorsDB(t *testing.T) {
	lowerMetadataCut(t, 16<<10)
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 4 << 20, TargetFileSize: 4 << 10, DisableAutomaticCompactions: true})
	defer d.Close()
	key := func(i int) []byte { return append(fmt.Appendf(nil, "b%05d", i), bytes.Repeat([]byte{0xff}, 1994)...) }
	if err := d.Set([]byte("a"), []byte("old"), nil); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	for i := range 40 {
		if err := d.DeleteRange(fmt.Appendf(nil, "a%04d", i), []byte("z"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 400 {
		if err := d.Set(key(i), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	v := refCurrent(d)
	defer v.Unref()
	for l, ts := range v.Levels {
		checkDisjoint(t, ts)
		for _, m := range ts {
			var size uint64
			for _, tm := range tableRangeDels(t, d, m) {
				size += sstable.RangeDelSize(tm)
			}
			if size > metadataCut {
				t.Fatalf("L%d table %06d holds %d bytes of range deletions, past the %d-byte metadata cut", l, m.FileNum, size, metadataCut)
			}
		}
	}
	for i := range 400 {
		if got, err := d.Get(key(i)); err != nil || string(got) != "v" {
			t.Fatalf("Get(key %d) = %q, %v", i, got, err)
		}
	}
	if got, err := snap.Get([]byte("a")); err != nil || string(got) != "old" {
		t.Fatalf("snapshot Get(a) = %q, %v", got, err)
	}
}
