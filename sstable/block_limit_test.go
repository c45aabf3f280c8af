package sstable

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// TestLargeEntryCutsTheBlockBeforeIt caught a data block past the reader's
// limit: a block is cut only once it reaches BlockSize, which may be up to
// 1 MiB, so with a BlockSize above the entry limit's 64 KiB margin the
// largest write the DB takes, added to a nearly full block, made a block
// over 1 GiB; the table was written, and every entry in that block was
// lost (a break-it review, at full size). With the limit brought down to
// 8 KiB here, a 4 KiB entry after 6 KB of small ones in a 16 KiB block
// must start a block of its own, and every entry reads back.
func TestLargeEntryCutsTheBlockBeforeIt(t *testing.T) {
	saved := dataBlockLimit
	dataBlockLimit = 8 << 10
	defer func() { dataBlockLimit = saved }()
	fs := vfs.NewMem()
	f, _ := fs.Create("/000001.sst")
	w := NewWriter(f, WriterOptions{BlockSize: 16 << 10})
	value := func(i int) []byte {
		if i == 10 {
			return bytes.Repeat([]byte{'L'}, 4<<10)
		}
		return bytes.Repeat([]byte{byte(i)}, 600)
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	const n = 12
	for i := 0; i < n; i++ {
		if err := w.Add(base.MakeInternalKey(key(i), 1, base.KindSet), value(i)); err != nil {
			t.Fatal(err)
		}
	}
	md, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	p := md.Properties
	// 10 small entries, then the large one cuts: [0-9] [10 11].
	if p.NumDataBlocks != 2 || p.UncompressedDataSize > 2*uint64(dataBlockLimit) {
		t.Fatalf("%d data blocks, %d bytes; want 2 blocks, none past %d bytes", p.NumDataBlocks, p.UncompressedDataSize, dataBlockLimit)
	}
	r := openTable(t, fs, "/000001.sst", ReaderOptions{FileNum: 1, Cache: NewCache(1 << 20)})
	for i := 0; i < n; i++ {
		v, _, ok, err := r.Get(key(i), 1)
		if err != nil || !ok || !bytes.Equal(v, value(i)) {
			t.Fatalf("Get(%s): %v %v, %d bytes", key(i), ok, err, len(v))
		}
	}
	it := r.NewIter(nil, nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key().UserKey, key(i)) {
			t.Fatalf("entry %d is %s", i, it.Key().UserKey)
		}
		i++
	}
	if i != n {
		t.Fatalf("iterated %d entries; want %d", i, n)
	}
}
