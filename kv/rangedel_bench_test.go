package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
)

// BenchmarkGetRangeDeleted measures what range tombstones cost a Get: the
// same fully compacted DB as BenchmarkGet, plus one newer L0 table holding
// a range tombstone over 1/16 of the key space and a few point writes.
// "present" and "absent" read keys outside the tombstone (the cost of
// asking each source for its cover); "covered" reads keys it deletes
// (answered at the L0 table, without reading the deep tables). Compare
// with BenchmarkGet for the price of the check on a DB without tombstones.
func BenchmarkGetRangeDeleted(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	start, end := []byte{0xf0}, []byte{0xff}
	if err := d.DeleteRange(start, end, NoSync); err != nil {
		b.Fatal(err)
	}
	if err := d.Set([]byte{0xf8, 1}, []byte("v"), NoSync); err != nil {
		b.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	var live, covered [][]byte
	for _, k := range keys {
		if bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0 {
			covered = append(covered, k)
		} else {
			live = append(live, k)
		}
	}
	benchGets(b, d, live)
	b.Run("covered", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := d.Get(covered[(i*7919)%len(covered)]); err != ErrNotFound {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteNestedRangeDeletions measures writing one table of many
// range deletions that all reach one far end, past the metadata cut (here
// lowered to 4 KiB) and too many to cut among (rangeDelOutput.cutBound):
// each refused cut scans the table's tombstones, so without the pause
// after a refusal the write grew quadratically (20,000 tombstones: 60x
// the time).
func BenchmarkWriteNestedRangeDeletions(b *testing.B) {
	saved := metadataCut
	metadataCut = 4 << 10
	defer func() { metadataCut = saved }()
	ts := make([]rangedel.Tombstone, 20_000)
	for i := range ts {
		ts[i] = rangedel.Tombstone{Start: fmt.Appendf(nil, "k%06d", i), End: []byte("z"), Seq: base.SeqNum(i + 1)}
	}
	d := openMemB(b, &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	b.ResetTimer()
	for range b.N {
		out, err := d.writeTables(&entryListSource{}, outputSpec{rangeDels: ts})
		if err != nil {
			b.Fatal(err)
		}
		if len(out) != 1 {
			b.Fatalf("%d tables for nested range deletions; cutting among them shrinks no block", len(out))
		}
	}
}
