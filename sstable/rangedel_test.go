package sstable

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

func goldenRangeDels() []rangedel.Tombstone {
	return []rangedel.Tombstone{
		{Start: []byte("golden-05"), End: []byte("golden-09"), Seq: 120},
		{Start: []byte("golden-00"), End: []byte("golden-03"), Seq: 110},
		{Start: []byte("zz"), End: []byte("zzz"), Seq: 130},
	}
}

func footerVersion(t *testing.T, fs vfs.FS, name string, size uint64) uint32 {
	t.Helper()
	f, _ := fs.Open(name)
	defer f.Close()
	b := make([]byte, FooterLen)
	f.ReadAt(b, int64(size-FooterLen))
	return binary.LittleEndian.Uint32(b[48:])
}

// TestRangeDelsRoundTrip: a table's range tombstones come back from Open,
// in memory, with their coverage answered without reads; the table is
// format 2, its points are unchanged, and a table without tombstones stays
// format 1.
func TestRangeDelsRoundTrip(t *testing.T) {
	fs := vfs.NewMem()
	md := writeTable(t, fs, "/r", goldenEntries(), WriterOptions{BlockSize: 256}, goldenRangeDels()...)
	if v := footerVersion(t, fs, "/r", md.Size); v != FormatVersion {
		t.Fatalf("table with range tombstones is format %d, want %d", v, FormatVersion)
	}
	if md.Properties.NumRangeDeletions != 3 || md.Properties.LargestSeqNum != 130 {
		t.Fatalf("properties %+v: want 3 range deletions and seqnums up to 130", md.Properties)
	}
	r := openTable(t, fs, "/r", ReaderOptions{})
	defer r.Close()
	if got, want := fmt.Sprint(r.RangeDels()), "[[\"golden-00\", \"golden-03\")#110 [\"golden-05\", \"golden-09\")#120 [\"zz\", \"zzz\")#130]"; got != want {
		t.Fatalf("RangeDels = %s, want %s", got, want)
	}
	before := r.Stats().Snapshot()
	for _, c := range []struct {
		key  string
		seq  base.SeqNum
		want base.SeqNum
	}{
		{"golden-00", 200, 110}, {"golden-02", 200, 110}, {"golden-03", 200, 0},
		{"golden-07", 200, 120}, {"golden-07", 119, 0}, {"zz", 130, 130}, {"zzz", 200, 0},
	} {
		if got := r.RangeDelCover([]byte(c.key), c.seq); got != c.want {
			t.Errorf("RangeDelCover(%s, %d) = %d, want %d", c.key, c.seq, got, c.want)
		}
	}
	if after := r.Stats().Snapshot(); after.BytesRead != before.BytesRead {
		t.Fatalf("RangeDelCover read %d bytes; range tombstones must be resident", after.BytesRead-before.BytesRead)
	}
	checkWalks(t, r.NewIter(nil, nil), goldenEntries())

	md1 := writeTable(t, fs, "/p", goldenEntries(), WriterOptions{})
	if v := footerVersion(t, fs, "/p", md1.Size); v != formatVersionPointsOnly {
		t.Fatalf("table without range tombstones is format %d, want %d", v, formatVersionPointsOnly)
	}
	if r1 := openTable(t, fs, "/p", ReaderOptions{}); len(r1.RangeDels()) != 0 || r1.RangeDelCover([]byte("golden-01"), base.SeqNumMax) != 0 {
		t.Fatal("a format 1 table reports range tombstones")
	}
}

// TestRangeDelsOnlyTable: a table may hold range tombstones and no point
// entry (a flushed memtable that only deleted a range).
func TestRangeDelsOnlyTable(t *testing.T) {
	fs := vfs.NewMem()
	md := writeTable(t, fs, "/t", nil, WriterOptions{}, goldenRangeDels()[:1]...)
	if p := md.Properties; p.NumEntries != 0 || p.SmallestSeqNum != 120 || p.LargestSeqNum != 120 {
		t.Fatalf("properties %+v", p)
	}
	r := openTable(t, fs, "/t", ReaderOptions{})
	defer r.Close()
	if r.RangeDelCover([]byte("golden-06"), 500) != 120 {
		t.Fatal("tombstone lost")
	}
	if _, _, found, err := r.Get([]byte("golden-06"), 500); found || err != nil {
		t.Fatalf("Get in a table without points: found=%v err=%v", found, err)
	}
}

// TestRangeDelsCorruption: every byte of a format 2 table's range-deletion
// block and properties is checked: flipping any one makes Open fail with a
// corruption error, never a panic or a silently different tombstone.
func TestRangeDelsCorruption(t *testing.T) {
	fs := vfs.NewMem()
	md := writeTable(t, fs, "/c", goldenEntries()[:3], WriterOptions{}, goldenRangeDels()...)
	f, _ := fs.Open("/c")
	orig := make([]byte, md.Size)
	f.ReadAt(orig, 0)
	f.Close()
	p := md.Properties
	for off := p.RangeDelOffset; off < md.Size-FooterLen; off++ {
		r, err := openFlipped(t, fs, "/bad", orig, off)
		if err == nil {
			r.Close()
			t.Fatalf("flipping byte %d (range-deletion block at %d) went unnoticed", off, p.RangeDelOffset)
		}
		if !base.IsCorruption(err) {
			t.Fatalf("byte %d: %v is not a corruption error", off, err)
		}
	}
}

// TestSplitRangeDels: a writer ending its table at a key keeps only the
// parts of its tombstones below it, returns the rest with keys of their
// own, and counts only what it keeps in MetadataSize.
func TestSplitRangeDels(t *testing.T) {
	fs := vfs.NewMem()
	f, err := fs.Create("/s")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, WriterOptions{})
	for _, rd := range goldenRangeDels() {
		if err := w.AddRangeDel(rd); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range goldenEntries()[:7] {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatal(err)
		}
	}
	full := w.rangeDelBytes
	bound := []byte("golden-06\x00")
	rest := w.SplitRangeDels(bound)
	bound[0] = 'X' // the writer must not alias the caller's key
	if got, want := fmt.Sprint(rest), `[["golden-06\x00", "golden-09")#120 ["zz", "zzz")#130]`; got != want {
		t.Fatalf("SplitRangeDels = %s, want %s", got, want)
	}
	if w.rangeDelBytes >= full {
		t.Fatalf("range-deletion bytes %d after the split, %d before: the parts returned are still counted", w.rangeDelBytes, full)
	}
	md, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	r := openTable(t, fs, "/s", ReaderOptions{})
	defer r.Close()
	if got, want := fmt.Sprint(r.RangeDels()), `[["golden-00", "golden-03")#110 ["golden-05", "golden-06\x00")#120]`; got != want {
		t.Fatalf("table's RangeDels = %s, want %s", got, want)
	}
	if md.Properties.NumRangeDeletions != 2 {
		t.Fatalf("properties count %d range deletions, want 2", md.Properties.NumRangeDeletions)
	}
}
