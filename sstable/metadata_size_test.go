package sstable

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/vfs"
)

// TestMetadataSizeBoundsEveryMetaBlock checks the promise kv's table cut
// relies on: MetadataSize, asked before Finish, is at least the index,
// range-deletion and properties blocks Finish then writes. Keys are of
// random lengths, many all 0xff so no separator can shorten them, with
// runs of versions of one key (an index entry inside one user key is the
// whole key), tiny blocks, and range deletions.
func TestMetadataSizeBoundsEveryMetaBlock(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		fs := vfs.NewMem()
		f, _ := fs.Create("/t.sst")
		blockSize, nkeys := 64+rng.IntN([]int{512, 64 << 10}[seed%3/2]), 1+rng.IntN(200)
		if seed%4 == 3 {
			// One block of a few long keys: the properties, with their
			// smallest and largest keys, are the largest block.
			blockSize, nkeys = 64<<10, 1+rng.IntN(3)
		}
		w := NewWriter(f, WriterOptions{BlockSize: blockSize, BlockRestartInterval: 1 + rng.IntN(16)})
		var keys [][]byte
		for range nkeys {
			k := make([]byte, rng.IntN([]int{300, 3000}[seed%2]))
			if rng.IntN(2) == 0 {
				for i := range k {
					k[i] = 0xff
				}
			} else {
				for i := range k {
					k[i] = byte(rng.IntN(256))
				}
			}
			if seed%4 == 3 {
				// A long smallest key too.
				k = append(bytes.Repeat([]byte{'p'}, 1200), k...)
			}
			keys = append(keys, k)
		}
		slices.SortFunc(keys, bytes.Compare)
		keys = slices.CompactFunc(keys, bytes.Equal)
		for _, k := range keys {
			for v := 1 + rng.IntN(4); v > 0; v-- {
				if err := w.Add(base.MakeInternalKey(k, base.SeqNum(v), base.KindSet), make([]byte, rng.IntN(200))); err != nil {
					t.Fatal(err)
				}
			}
		}
		var dels []rangedel.Tombstone
		for range rng.IntN(5) {
			s := bytes.Repeat([]byte{byte(rng.IntN(255))}, rng.IntN(400))
			d := rangedel.Tombstone{Start: s, End: append(slices.Clone(s), 0xff), Seq: 9}
			dels = append(dels, d)
			if err := w.AddRangeDel(d); err != nil {
				t.Fatal(err)
			}
		}
		bound := w.MetadataSize()
		md, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		p := md.Properties
		if p.IndexSize > bound || uint64(len(p.encode())) > bound || uint64(len(rangedel.Encode(nil, dels))) > bound {
			t.Fatalf("seed %d: MetadataSize %d before Finish; index %d, properties %d, range deletions %d bytes",
				seed, bound, p.IndexSize, len(p.encode()), len(rangedel.Encode(nil, dels)))
		}
	}
}

// TestFinishRefusesABlockReadersRefuse: a table whose index would pass
// what a reader accepts is never written as if it were good; Finish says
// so, with ErrBlockTooLarge, and the writer stays failed. (At full size
// this was two 540 MiB keys no separator could shorten: the table was
// written and every entry of it lost.)
func TestFinishRefusesABlockReadersRefuse(t *testing.T) {
	saved := writeBlockLimit
	writeBlockLimit = 4 << 10
	defer func() { writeBlockLimit = saved }()
	fs := vfs.NewMem()
	f, _ := fs.Create("/t.sst")
	w := NewWriter(f, WriterOptions{BlockSize: 64})
	for i := range 3 {
		k := append(bytes.Repeat([]byte{0xff}, 1500), byte(i))
		if err := w.Add(base.MakeInternalKey(k, 1, base.KindSet), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if w.MetadataSize() <= uint64(writeBlockLimit) {
		t.Fatalf("MetadataSize %d does not show the index past %d bytes", w.MetadataSize(), writeBlockLimit)
	}
	if _, err := w.Finish(); !errors.Is(err, ErrBlockTooLarge) {
		t.Fatalf("Finish = %v, want ErrBlockTooLarge", err)
	}
}
