package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// entryListSource is an entrySource over keys, each with the value val.
type entryListSource struct {
	keys []base.InternalKey
	val  []byte
	i    int
}

func (s *entryListSource) Next() bool            { s.i++; return s.i <= len(s.keys) }
func (s *entryListSource) Key() base.InternalKey { return s.keys[s.i-1] }
func (s *entryListSource) Value() []byte         { return s.val }
func (s *entryListSource) Error() error          { return nil }

// TestCarriedTombstonesBoundedByWhatTablesWrite: a second review found
// nested range deletions, each carrying less than the fixed share of the
// metadata cut that refused a cut, written whole into every small table:
// with the cut at 64 KiB and tables split at 4 KiB of points (the ratio of
// 256 MiB to the 2 MiB default target), tombstone bytes grew with the
// number of tables. With the carry weighed against what each table wrote
// itself, the bytes written stay within twice the input and one cut.
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
	var outBytes uint64
	for _, m := range out {
		err := d.tables.withReader(m, func(r *sstable.Reader) error {
			for _, tm := range r.RangeDels() {
				outBytes += sstable.RangeDelSize(tm)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if outBytes > 2*inBytes+metadataCut {
		t.Errorf("%d tombstone bytes written for %d in (%d tables)", outBytes, inBytes, len(out))
	}
}
