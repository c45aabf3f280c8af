package sstable

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// TestWriterReusesScratchAcrossTables pins that a Writer's per-table
// scratch (the write buffer and the key hashes its filter is built from)
// comes from the pools once an earlier table has finished, as a flush or
// compaction writing table after table needs: the second table of 20,000
// keys allocates well under the 256 KiB write buffer and the ~320 KiB a
// hash slice grown by doubling to 20,000 entries costs (59 bytes per entry
// without the pools, 13 with them when written). What remains is the
// Bloom filter's bit array and its copies into the envelope (about 8 bytes
// per key at 10 bits), the per-writer block and compression buffers and
// the index entries.
func TestWriterReusesScratchAcrossTables(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a GC would empty the pools
	policy, err := filters.NewPolicy(filters.TypeBloom, filters.PolicyParams{BloomBitsPerKey: 10})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	keys := make([]base.InternalKey, n)
	for i := range keys {
		keys[i] = base.MakeInternalKey([]byte(fmt.Sprintf("key%09d", i)), base.SeqNum(i+1), base.KindSet)
	}
	value := make([]byte, 100)
	write := func() {
		w := NewWriter(&discardFile{}, WriterOptions{FilterPolicy: policy})
		for _, k := range keys {
			if err := w.Add(k, value); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	write() // fills the pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	write()
	runtime.ReadMemStats(&after)
	perEntry := float64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("%.1f heap bytes per entry for the second table", perEntry)
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops puts at random")
	}
	const budget = 20
	if perEntry > budget {
		t.Errorf("second table allocated %.1f heap bytes per entry, want <= %d (pools not reused?)", perEntry, budget)
	}
}

// TestWriterAbortReleasesScratch checks that an abandoned table gives its
// write buffer back clean: the next table written with it holds none of
// the abandoned table's unflushed bytes.
func TestWriterAbortReleasesScratch(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	value := make([]byte, 100)
	abandoned := NewWriter(&discardFile{}, WriterOptions{})
	for i := range 100 {
		if err := abandoned.Add(base.MakeInternalKey([]byte(fmt.Sprintf("a%05d", i)), 1, base.KindSet), value); err != nil {
			t.Fatal(err)
		}
	}
	if err := abandoned.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := abandoned.Abort(); err != nil { // a second Abort is a no-op
		t.Fatal(err)
	}
	fs := vfs.NewMem()
	entries := []kv{{base.MakeInternalKey([]byte("b"), 1, base.KindSet), []byte("v")}}
	writeTable(t, fs, "t", entries, WriterOptions{})
	r := openTable(t, fs, "t", ReaderOptions{})
	defer r.Close()
	checkWalks(t, r.NewIter(nil, nil), entries)
}
