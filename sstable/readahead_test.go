package sstable

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestReadaheadLongScan scans a table of a few hundred blocks with no
// block cache and checks that the forward scan reads it in large windows
// (BM3): far fewer ReadAt calls than blocks, every entry still right, while
// a short scan of a few blocks reads only those (no window it would not
// use) and a backward scan, which readahead does not serve, still reads
// right.
func TestReadaheadLongScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	entries := makeEntries(rng, 20000, keyGens["plain"], func() int { return 50 + rng.IntN(100) })
	fs := vfs.NewCounting(vfs.NewMem())
	writeTable(t, fs, "/t", entries, WriterOptions{})
	r := openTable(t, fs, "/t", ReaderOptions{})
	defer r.Close()
	blocks := int64(len(r.index))
	if blocks < 200 {
		t.Fatalf("only %d blocks: the test needs a long table", blocks)
	}
	before := fs.Reads("/t")
	it := r.NewIter(nil, nil)
	checkWalks(t, it, entries)
	it.Close()
	calls := fs.Reads("/t").Calls - before.Calls
	// A forward and a backward walk: the backward one reads block by
	// block, the forward one in windows of up to 256 KiB.
	if fwd := calls - blocks; fwd > blocks/8 {
		t.Fatalf("forward scan of %d blocks made %d reads, want readahead to make at most %d", blocks, fwd, blocks/8)
	}

	before = fs.Reads("/t")
	short := r.NewIter(nil, nil)
	n := 0
	for ok := short.First(); ok && n < 100; ok = short.Next() { // about three blocks
		n++
	}
	short.Close()
	if got := fs.Reads("/t").Bytes - before.Bytes; got >= readaheadMin {
		t.Fatalf("a 100-entry scan read %d bytes: readahead started on a short scan", got)
	}
}

// maxReadFile records the furthest byte any ReadAt reached.
type maxReadFile struct {
	vfs.File
	end atomic.Int64
}

func (f *maxReadFile) ReadAt(p []byte, off int64) (int, error) {
	if e := off + int64(len(p)); e > f.end.Load() {
		f.end.Store(e)
	}
	return f.File.ReadAt(p, off)
}

// TestReadaheadStopsBeforeRangeFilter: a forward scan of a table with a
// range filter reads no byte past the last data block (BM3); the window
// was cut at the footer's data end, which lies past the range filter
// block, so a long scan read that block too.
func TestReadaheadStopsBeforeRangeFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	entries := makeEntries(rng, 5000, keyGens["plain"], func() int { return 50 })
	fs := vfs.NewMem()
	writeTable(t, fs, "/t", entries, WriterOptions{RangeFilterBitsPerKey: 40})
	f, err := fs.Open("/t")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	mf := &maxReadFile{File: f}
	r, err := Open(mf, st.Size(), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.HasRangeFilter() {
		t.Fatal("no range filter")
	}
	mf.end.Store(0)
	it := r.NewIter(nil, nil)
	checkForwardWalk(t, it, entries)
	it.Close()
	if got, data := mf.end.Load(), int64(r.dataEnd()); got > data {
		t.Fatalf("a forward scan read up to byte %d of a %d-byte data region", got, data)
	}
}
