package sstable

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
)

// drainSpareRangeBuilders empties the free list, so a test starts from a
// known state.
func drainSpareRangeBuilders() {
	for {
		select {
		case <-spareBuilders:
		default:
			return
		}
	}
}

// TestRangeBuilderKeptAcrossGC pins that a finished table's range filter
// builder, with the memory it grew, is still there for the next table
// after garbage collections, which empty a sync.Pool: flushes and
// compactions allocate enough to run a GC every few tables, and a builder
// regrown for each table was a tenth of the range filter's build cost.
func TestRangeBuilderKeptAcrossGC(t *testing.T) {
	drainSpareRangeBuilders()
	defer drainSpareRangeBuilders()
	w := NewWriter(&discardFile{}, WriterOptions{RangeFilterBitsPerKey: 16})
	value := make([]byte, 10)
	const n = 20000
	for i := range n {
		key := base.MakeInternalKey(fmt.Appendf(nil, "user%010d", i*50000+i%7), 1, base.KindSet)
		if err := w.Add(key, value); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		runtime.GC()
	}
	rb := newRangeFilterBuilder(16)
	if rb.err != nil {
		t.Fatal(rb.err)
	}
	defer rb.release()
	// 8 bytes per key of codes alone, plus the keys' arena.
	if got := rb.b.RetainedBytes(); got < 8*n {
		t.Fatalf("builder after GC retains %d bytes, want >= %d: the last table's builder was dropped", got, 8*n)
	}
	if rb.b.Len() != 0 {
		t.Fatalf("kept builder holds %d keys, want a reset builder", rb.b.Len())
	}
}

// TestRangeBuilderFreeListBounded checks that the free list holds at most
// spareRangeBuilders builders and none larger than
// maxSpareRangeBuilderBytes: what it keeps is never collected.
func TestRangeBuilderFreeListBounded(t *testing.T) {
	drainSpareRangeBuilders()
	defer drainSpareRangeBuilders()
	big, err := filters.NewRangeBuilder(16)
	if err != nil {
		t.Fatal(err)
	}
	defer func(limit int) { maxSpareRangeBuilderBytes = limit }(maxSpareRangeBuilderBytes)
	maxSpareRangeBuilderBytes = 256 << 10
	// About 11 bytes per key once built: 2^15 keys pass 256 KiB.
	for i := range 1 << 15 {
		big.Add(fmt.Appendf(nil, "k%012d", i))
	}
	if _, err := big.Finish(); err != nil {
		t.Fatal(err)
	}
	if big.RetainedBytes() <= maxSpareRangeBuilderBytes {
		t.Fatalf("built a builder of only %d bytes, want one past %d", big.RetainedBytes(), maxSpareRangeBuilderBytes)
	}
	putRangeBuilder(big)
	if len(spareBuilders) != 0 {
		t.Fatalf("a builder of %d bytes went to the free list (limit %d)", big.RetainedBytes(), maxSpareRangeBuilderBytes)
	}
	for range spareRangeBuilders + 2 {
		b, err := filters.NewRangeBuilder(16)
		if err != nil {
			t.Fatal(err)
		}
		putRangeBuilder(b)
	}
	if got := len(spareBuilders); got != spareRangeBuilders {
		t.Fatalf("free list holds %d builders, want %d", got, spareRangeBuilders)
	}
}
