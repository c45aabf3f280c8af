package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// TestCompactionEndsTablesInsideARangeDeletion: a break-it review held a
// snapshot, deleted the range ["0", "9"), wrote 1,200 keys of 1 MiB
// inside it, and compacted: a table could not end inside a tombstone that
// covered keys after its end, so the compaction put every key into one
// table and failed on its 1.13 GB index (sstable.ErrBlockTooLarge),
// leaving that data uncompactable. Tables now end inside tombstones,
// which are split at the bound. With the metadata cut at 16 KiB, 2 KB
// keys under a range deletion a snapshot holds must spread over several
// tables, none with an index past the cut and one key, and read as
// before at the snapshot and after it, across a reopen.
func TestCompactionEndsTablesInsideARangeDeletion(t *testing.T) {
	compactUnderRangeDeletions(t, 1)
}

// TestFewCarriedTombstonesDoNotStopTheIndexCut: the same with the range
// deleted five times. A second review found a cut refused whenever the
// tombstones it would carry came to half the metadata cut: five pieces
// beginning at a 2 KB key did, every cut was refused, the index cut
// included, and the compaction wrote one table with an index 8.4 times
// the cut (at full size, 128 DeleteRanges and 1 MiB keys: ErrBlockTooLarge
// again). The carry is now weighed against what the table wrote itself.
func TestFewCarriedTombstonesDoNotStopTheIndexCut(t *testing.T) {
	compactUnderRangeDeletions(t, 5)
}

// compactUnderRangeDeletions runs TestCompactionEndsTablesInsideARange-
// Deletion with the range ["0", "9") deleted deletions times.
func compactUnderRangeDeletions(t *testing.T, deletions int) {
	lowerMetadataCut(t, 16<<10)
	fs := vfs.NewMem()
	opts := &Options{MemTableSize: 4 << 20, BlockSize: 256, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	const n, klen = 120, 2000
	key := func(i int) []byte {
		// A long shared prefix: separators as long as the keys.
		return fmt.Appendf(append([]byte("5"), bytes.Repeat([]byte{'k'}, klen-7)...), "%06d", i)
	}
	// Older keys the range deletes, then the deletion under a snapshot,
	// then the keys written after it.
	for i := 0; i < n; i += 2 {
		if err := d.Set(key(i), []byte("old"), nil); err != nil {
			t.Fatal(err)
		}
	}
	before := d.NewSnapshot()
	defer before.Close()
	for range deletions {
		if err := d.DeleteRange([]byte("0"), []byte("9"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < n; i += 2 {
		if err := d.Set(key(i), []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(stage string) {
		t.Helper()
		for i := range n {
			v, err := d.Get(key(i))
			if i%2 == 0 && !errors.Is(err, ErrNotFound) || i%2 == 1 && (err != nil || !bytes.Equal(v, []byte{byte(i)})) {
				t.Fatalf("%s: Get(key %d) = %q, %v", stage, i, v, err)
			}
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	v := refCurrent(d)
	tables := 0
	for _, ts := range v.Levels {
		for _, tm := range ts {
			tables++
			if tm.Props != nil && tm.Props.IndexSize > metadataCut+4<<10 {
				t.Errorf("table %06d has a %d-byte index, past the %d-byte cut and one key", tm.FileNum, tm.Props.IndexSize, metadataCut)
			}
		}
	}
	v.Unref()
	if tables < 4 {
		t.Errorf("%d tables for %d bytes of keys; the cut at %d should have made at least 4", tables, n*klen, metadataCut)
	}
	check("after Compact")
	for i := range n {
		v, err := before.Get(key(i))
		if i%2 == 0 && (err != nil || string(v) != "old") || i%2 == 1 && !errors.Is(err, ErrNotFound) {
			t.Fatalf("snapshot Get(key %d) = %q, %v", i, v, err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, opts)
	check("after a reopen")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Check("db", &Options{FS: fs}); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// TestWideRangeDeletionKeepsOutputsAtTargetSize: a range deletion that a
// snapshot holds and that covers keys written after it no longer keeps a
// compaction's output in one table (a table could not end inside it):
// outputs end at TargetFileSize, every table's bounds hold its
// tombstones' keys (Check), and reads at the snapshot and after it
// answer as before.
func TestWideRangeDeletionKeepsOutputsAtTargetSize(t *testing.T) {
	fs := vfs.NewMem()
	const target = 32 << 10
	opts := &Options{MemTableSize: 1 << 20, TargetFileSize: target, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	const n = 600
	key := func(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }
	value := func(i int, gen string) []byte {
		// Incompressible, so that table sizes are the bytes written.
		v := make([]byte, 1000)
		rand.New(rand.NewSource(int64(i))).Read(v)
		return append([]byte(gen), v...)
	}
	for i := range n {
		if err := d.Set(key(i), value(i, "old"), nil); err != nil {
			t.Fatal(err)
		}
	}
	before := d.NewSnapshot()
	if err := d.DeleteRange([]byte(""), []byte("z"), nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 3 {
		if err := d.Set(key(i), value(i, "new"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	v := refCurrent(d)
	var tables int
	var total uint64
	for _, ts := range v.Levels {
		for _, tm := range ts {
			tables++
			total += tm.Size
			if tm.Size > 2*target {
				t.Errorf("table %06d is %d bytes, past twice the %d-byte target", tm.FileNum, tm.Size, target)
			}
		}
	}
	v.Unref()
	if min := int(total / (2 * target)); tables < min || tables < 2 {
		t.Errorf("%d tables for %d bytes at a %d-byte target", tables, total, target)
	}
	check := func(stage string) {
		t.Helper()
		for i := range n {
			got, err := d.Get(key(i))
			if i%3 == 0 && (err != nil || !bytes.Equal(got, value(i, "new"))) || i%3 != 0 && !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%s) = %.8q, %v", stage, key(i), got, err)
			}
			got, err = before.Get(key(i))
			if err != nil || !bytes.Equal(got, value(i, "old")) {
				t.Fatalf("%s: snapshot Get(%s) = %.8q, %v", stage, key(i), got, err)
			}
		}
	}
	check("after Compact")
	before.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Check("db", &Options{FS: fs}); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// rangeDelFragments counts d's tables and the range tombstones they hold.
func rangeDelFragments(t *testing.T, d *DB) (tables, fragments int) {
	t.Helper()
	v := refCurrent(d)
	defer v.Unref()
	for _, l := range v.Levels {
		for _, tm := range l {
			tables++
			err := d.tables.withReader(tm, func(r *sstable.Reader) error {
				fragments += len(r.RangeDels())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return tables, fragments
}

// TestSplitTombstonesRejoinInCompactions caught fragments piling up (a
// review of the split): a compaction took both pieces of a tombstone that
// an earlier output had split and wrote them as two, so every cut stayed
// a fragment boundary for good; 40 wide range deletions a snapshot kept
// grew to 157 tombstones a table over eight compactions. Pieces of one
// sequence number that meet are joined again (rangedel.Coalesce): no
// table may hold more tombstones than there are range deletions.
func TestSplitTombstonesRejoinInCompactions(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true, TargetFileSize: 16 << 10})
	defer d.Close()
	rng := rand.New(rand.NewSource(1))
	snap := d.NewSnapshot()
	defer snap.Close()
	const ranges = 40
	for i := range ranges {
		if err := d.DeleteRange(fmt.Appendf(nil, "a%03d", i), []byte("z"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 8 {
		for range 100 {
			v := make([]byte, 1000)
			rng.Read(v)
			if err := d.Set(fmt.Appendf(nil, "k%06d", rng.Intn(1000000)), v, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
		if tables, fragments := rangeDelFragments(t, d); fragments > ranges*tables {
			t.Fatalf("round %d: %d tombstones in %d tables for %d range deletions: pieces were not joined again", round, fragments, tables, ranges)
		}
	}
}

// TestNestedRangeDeletionsAreNotCutQuadratically caught the metadata cut
// writing tombstones quadratically often (the same review): range
// deletions with nested starts and one far end, kept by a snapshot, are
// all carried into whatever table a cut starts, so once they passed the
// cut every further start ended a table carrying all the earlier ones:
// 200 became 19,635 fragments in 170 tables at the flush, and each
// compaction added 15,000 more. A cut whose carried part is half the cut
// or more is now refused: it would shrink no block.
func TestNestedRangeDeletionsAreNotCutQuadratically(t *testing.T) {
	lowerMetadataCut(t, 4<<10)
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	snap := d.NewSnapshot()
	defer snap.Close()
	const ranges = 200
	end := append([]byte("z"), bytes.Repeat([]byte{'e'}, 100)...)
	for i := range ranges {
		if err := d.DeleteRange(fmt.Appendf(nil, "k%04d", i), end, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for stage := range 4 {
		if _, fragments := rangeDelFragments(t, d); fragments > 2*ranges {
			t.Fatalf("after %d compactions: %d tombstones written for %d range deletions", stage, fragments, ranges)
		}
		if err := d.Compact(nil, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRangeDelOutputWritesTombstonesLinearly: for random range deletions,
// nested, overlapping and disjoint, with keys of a few bytes or up to 300 and
// the metadata cut at 4 KiB, writeTables' outputs delete exactly what the
// input did (their pieces coalesce to the input's tombstones), and the
// range-deletion bytes they hold, as MetadataSize counts them, are at most
// twice the input's and one cut: a cut carries less than half the cut, so
// each table holds at least as much new as carried.
func TestRangeDelOutputWritesTombstonesLinearly(t *testing.T) {
	lowerMetadataCut(t, 4<<10)
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	rng := rand.New(rand.NewSource(7))
	pad := 0
	key := func() []byte {
		return append(fmt.Appendf(nil, "%03d", rng.Intn(1000)), bytes.Repeat([]byte{'x'}, rng.Intn(pad+1))...)
	}
	for round := range 40 {
		pad = []int{0, 300}[round%2] // short keys: the varints weigh most
		var in []rangedel.Tombstone
		var inBytes uint64
		for i := range 50 + rng.Intn(400) {
			s, e := key(), key()
			switch rng.Intn(3) {
			case 0:
				e = []byte("zzz") // nested: one far end
			case 1:
				e = append(bytes.Clone(s), 0)
			}
			if bytes.Compare(s, e) >= 0 {
				continue
			}
			tm := rangedel.Tombstone{Start: s, End: e, Seq: base.SeqNum(i + 1)}
			in = append(in, tm)
			inBytes += sstable.RangeDelSize(tm)
		}
		out, err := d.writeTables(&entryListSource{}, outputSpec{rangeDels: in})
		if err != nil {
			t.Fatal(err)
		}
		var got []rangedel.Tombstone
		var outBytes uint64
		for _, m := range out {
			err := d.tables.withReader(m, func(r *sstable.Reader) error {
				for _, tm := range r.RangeDels() {
					got = append(got, tm.Clone())
					outBytes += sstable.RangeDelSize(tm)
					if base.CompareUserKeys(tm.Start, m.Smallest.UserKey) < 0 || base.CompareUserKeys(tombstoneLargest(tm).UserKey, m.Largest.UserKey) > 0 {
						t.Fatalf("round %d: table %06d [%s, %s] holds %v outside its bounds", round, m.FileNum, m.Smallest, m.Largest, tm)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i < len(out); i++ {
			if base.CompareUserKeys(out[i-1].Largest.UserKey, out[i].Smallest.UserKey) >= 0 {
				t.Fatalf("round %d: tables %06d and %06d share a user key", round, out[i-1].FileNum, out[i].FileNum)
			}
		}
		if want, have := fmt.Sprint(rangedel.Coalesce(slices.Clone(in))), fmt.Sprint(rangedel.Coalesce(got)); have != want {
			t.Fatalf("round %d: %d tables hold tombstones that coalesce to\n%s\nwant\n%s", round, len(out), have, want)
		}
		if outBytes > 2*inBytes+metadataCut {
			t.Fatalf("round %d: %d tables hold %d bytes of tombstones for %d bytes of input", round, len(out), outBytes, inBytes)
		}
	}
}

// TestCutsResumePastNestedRangeDeletions: a cut refused because the
// tombstones it would carry are too many must not stop later cuts once the
// keys pass those tombstones' ends: 300 nested range deletions ending at
// "m", kept by a snapshot, then 400 KB of keys after "m", compacted at a
// 32 KiB target, must still make tables near the target.
func TestCutsResumePastNestedRangeDeletions(t *testing.T) {
	lowerMetadataCut(t, 4<<10)
	const target = 32 << 10
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true, TargetFileSize: target})
	defer d.Close()
	snap := d.NewSnapshot()
	defer snap.Close()
	for i := range 300 {
		if err := d.DeleteRange(fmt.Appendf(nil, "a%04d", i), []byte("m"), nil); err != nil {
			t.Fatal(err)
		}
		if err := d.Set(fmt.Appendf(nil, "a%04d", i), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewSource(3))
	for i := range 400 {
		v := make([]byte, 1000)
		rng.Read(v)
		if err := d.Set(fmt.Appendf(nil, "n%04d", i), v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	v := refCurrent(d)
	defer v.Unref()
	for _, ts := range v.Levels {
		for _, tm := range ts {
			if tm.Size > 3*target {
				t.Errorf("table %06d [%s, %s] is %d bytes at a %d-byte target", tm.FileNum, tm.Smallest, tm.Largest, tm.Size, target)
			}
		}
	}
}
