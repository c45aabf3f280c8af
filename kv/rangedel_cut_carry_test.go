package kv

import (
	"bytes"
	"fmt"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestFewCarriedTombstonesDoNotStopTheIndexCut: TestCompactionEndsTablesInsideARangeDeletion
// with the range deleted 5 times instead of once. Each carried piece counts
// len(bound) (a 2 KB point key) + 24 + len(End), so 5 tombstones carry
// ~10 KB >= metadataCut/2 and cutBound refuses every cut, the metadata
// (index) cut included: the compaction writes one table whose index is
// many times the cut. At production scale (cut 256 MiB, reader limit
// 1 GiB = 4x the cut, keys 1 MiB) 128 DeleteRanges do the same and the
// compaction fails with ErrBlockTooLarge, as before 00f1146.
func TestFewCarriedTombstonesDoNotStopTheIndexCut(t *testing.T) {
	lowerMetadataCut(t, 16<<10)
	fs := vfs.NewMem()
	opts := &Options{MemTableSize: 4 << 20, BlockSize: 256, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	defer d.Close()
	const n, klen = 120, 2000
	key := func(i int) []byte {
		return append(fmt.Appendf(nil, "5%06d", i), bytes.Repeat([]byte{0xff}, klen-7)...)
	}
	for i := 0; i < n; i += 2 {
		if err := d.Set(key(i), []byte("old"), nil); err != nil {
			t.Fatal(err)
		}
	}
	before := d.NewSnapshot()
	defer before.Close()
	for range 5 {
		if err := d.DeleteRange([]byte("0"), []byte("9"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < n; i += 2 {
		if err := d.Set(key(i), []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	v := refCurrent(d)
	defer v.Unref()
	for _, ts := range v.Levels {
		for _, tm := range ts {
			if tm.Props != nil && tm.Props.IndexSize > metadataCut+4<<10 {
				t.Errorf("table %06d (%d bytes) has a %d-byte index (%.1fx the %d-byte cut; the reader limit is 4x)", tm.FileNum, tm.Size, tm.Props.IndexSize, float64(tm.Props.IndexSize)/float64(metadataCut), metadataCut)
			}
		}
	}
}

type entryListSource struct {
	keys []base.InternalKey
	val  []byte
	i    int
}

func (s *entryListSource) Next() bool            { s.i++; return s.i <= len(s.keys) }
func (s *entryListSource) Key() base.InternalKey { return s.keys[s.i-1] }
func (s *entryListSource) Value() []byte         { return s.val }
func (s *entryListSource) Error() error          { return nil }

// TestCarriedTombstonesBoundedByWhatTablesWrite: the refusal bounds the carry at
// metadataCut/2 per cut, not at anything related to TargetFileSize. With
// the cut at 64 KiB and tables split at 4 KiB of points (production: 256
// MiB vs a 2 MiB default target, the same 64x ratio), nested tombstones
// carrying just under 32 KiB are written whole into every table: tombstone
// bytes written grow with the number of tables (~8x the points' bytes).
func TestCarriedTombstonesBoundedByWhatTablesWrite(t *testing.T) {
	lowerMetadataCut(t, 64<<10)
	d := openMem(t, vfs.NewMem(), &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	end := append([]byte("z"), bytes.Repeat([]byte{'e'}, 100)...)
	var in []rangedel.Tombstone
	var inBytes uint64
	for i := range 200 {
		tm := rangedel.Tombstone{Start: fmt.Appendf(nil, "a%04d", i), End: end, Seq: base.SeqNum(10000 + i)}
		in = append(in, tm)
		inBytes += sstable.RangeDelSize(tm)
	}
	src := &entryListSource{val: bytes.Repeat([]byte{'v'}, 100)}
	for i := range 2000 {
		src.keys = append(src.keys, base.MakeInternalKey(fmt.Appendf(nil, "b%05d", i), base.SeqNum(i+1), base.KindSet))
	}
	out, err := d.writeTables(src, outputSpec{rangeDels: in, split: func(_ []byte, size uint64) bool { return size >= 4<<10 }})
	if err != nil {
		t.Fatal(err)
	}
	var outBytes, pointBytes uint64
	frags := 0
	for _, m := range out {
		pointBytes += m.Size
		d.tables.withReader(m, func(r *sstable.Reader) error {
			for _, tm := range r.RangeDels() {
				outBytes += sstable.RangeDelSize(tm)
				frags++
			}
			return nil
		})
	}
	t.Logf("%d tables, %d fragments for 200 tombstones; tombstone bytes in %d, out %d; table bytes %d", len(out), frags, inBytes, outBytes, pointBytes)
	if outBytes > 2*inBytes+metadataCut {
		t.Errorf("%d tombstone bytes written for %d in (%d tables)", outBytes, inBytes, len(out))
	}
}
