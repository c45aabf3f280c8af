package sstable

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/vfs"
)

// holeyIDEntries returns entries for user%08d ids laid out in runs and
// holes, the keys range filters are for.
func holeyIDEntries(rng *rand.Rand, span int) []kv {
	gen := func(rng *rand.Rand, i int) []byte {
		// ids advance in runs with every other id kept, then jump a hole.
		return []byte(fmt.Sprintf("user%08d", i*2+(i/50)*700))
	}
	return makeEntries(rng, span, gen, func() int { return 20 })
}

// TestRangeFilterTableIdentical checks T10: a table with a range filter
// answers every bounded walk and seek exactly as the same table without
// one, and a range filter that rules a range out saves every data-block
// read of that positioning call.
func TestRangeFilterTableIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 10))
	for name, entries := range map[string][]kv{
		"ids":    holeyIDEntries(rng, 3000),
		"binary": makeEntries(rng, 1500, keyGens["binary"], func() int { return 8 }),
	} {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			writeTable(t, fs, "/plain.sst", entries, WriterOptions{BlockSize: 512})
			md := writeTable(t, fs, "/range.sst", entries, WriterOptions{BlockSize: 512, RangeFilterBitsPerKey: 16})
			if md.Properties.RangeFilterSize == 0 {
				t.Fatal("no range filter written")
			}
			stats := &Stats{}
			plain := openTable(t, fs, "/plain.sst", ReaderOptions{})
			withRF := openTable(t, fs, "/range.sst", ReaderOptions{Stats: stats})
			if plain.HasRangeFilter() || !withRF.HasRangeFilter() {
				t.Fatal("range filter presence wrong after Open")
			}
			bound := func() []byte {
				if rng.IntN(8) == 0 {
					return nil
				}
				e := entries[rng.IntN(len(entries))].key.UserKey
				if rng.IntN(2) == 0 {
					return slices.Clone(e)
				}
				return append(slices.Clone(e[:rng.IntN(len(e)+1)]), byte(rng.IntN(256)))
			}
			for q := 0; q < 300; q++ {
				lower, upper := bound(), bound()
				want := inBounds(entries, lower, upper)
				it := withRF.NewIter(lower, upper)
				checkWalks(t, it, want)
				checkSeeks(t, it, want, func() base.InternalKey {
					k := bound()
					if k == nil {
						k = []byte{}
					}
					return base.MakeInternalKey(k, base.SeqNum(rng.IntN(4000)), base.KindSet)
				}, 10)
				it.Close()
			}
			if stats.RangeFilterChecks.Load() == 0 || stats.RangeFilterNegatives.Load() == 0 {
				t.Fatalf("range filter never consulted or never negative: %d checks, %d negatives",
					stats.RangeFilterChecks.Load(), stats.RangeFilterNegatives.Load())
			}
			// An empty range costs no data-block read (a fresh reader: the
			// walks above may have taught this one that its filter seldom
			// pays, rangeFilterUse).
			withRF = openTable(t, fs, "/range.sst", ReaderOptions{Stats: stats})
			before := stats.Snapshot()
			lower, upper := []byte("user00000001"), []byte("user00000002")
			it := withRF.NewIter(lower, upper)
			if it.First() || it.Last() || it.SeekGE(base.MakeSearchKey(lower, base.SeqNumMax)) {
				t.Fatal("found a key in an empty range")
			}
			it.Close()
			if d := stats.Snapshot().Sub(before); name == "ids" && (d.DataBlockReads != 0 || d.RangeFilterNegatives != 3) {
				t.Errorf("empty range: %d data-block reads, %d negatives; want 0 and 3", d.DataBlockReads, d.RangeFilterNegatives)
			}
		})
	}
}

// TestRangeFilterTableWithoutFilterReadsAsBefore checks that a table written
// without a range filter has no properties field 16 (its bytes are those
// of tables written before range filters existed) and never consults one.
func TestRangeFilterTableWithoutFilterReadsAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 11))
	entries := holeyIDEntries(rng, 200)
	fs := vfs.NewMem()
	md := writeTable(t, fs, "/t.sst", entries, WriterOptions{})
	p := md.Properties
	p.RangeFilterSize = 0
	if got := md.Properties.encode(); string(got) != string(p.encode()) || md.Properties.RangeFilterSize != 0 {
		t.Fatal("a table without a range filter records one")
	}
	stats := &Stats{}
	r := openTable(t, fs, "/t.sst", ReaderOptions{Stats: stats})
	it := r.NewIter([]byte("user00000001"), []byte("user00000002"))
	it.First()
	it.Close()
	if stats.RangeFilterChecks.Load() != 0 || !r.MayContainRange(nil, nil) {
		t.Error("a table without a range filter consulted one")
	}
}

// TestRangeFilterTableCorruption checks that damage to the range filter
// block or its recorded size fails Open with ErrCorruption.
func TestRangeFilterTableCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 12))
	entries := holeyIDEntries(rng, 500)
	for _, ft := range []filters.Type{filters.TypeBinaryFuse8, filters.TypeNone} {
		fs := vfs.NewMem()
		writeTable(t, fs, "/t.sst", entries, WriterOptions{Filter: ft, RangeFilterBitsPerKey: 12})
		r := openTable(t, fs, "/t.sst", ReaderOptions{})
		orig := make([]byte, r.Size())
		r.file.ReadAt(orig, 0)
		start := r.rangeFilterStart
		end := start + r.props.RangeFilterSize + blockTrailerLen
		for _, off := range []uint64{start, start + 20, (start + end) / 2, end - 5, end - 1} {
			if _, err := openFlipped(t, fs, "/bad.sst", orig, off); !errors.Is(err, base.ErrCorruption) {
				t.Errorf("%s: flip at %d of range filter [%d, %d): Open = %v, want corruption", ft, off, start, end, err)
			}
		}
	}
	if _, err := decodeProperties(append((&Properties{}).encode(), 0)); err == nil {
		t.Error("properties with a zero range filter size decode")
	}
}

// TestRangeFilterWriterRejectsBadBudget checks that an out-of-range budget
// fails Finish with the filters package's typed error.
func TestRangeFilterWriterRejectsBadBudget(t *testing.T) {
	fs := vfs.NewMem()
	f, _ := fs.Create("/t.sst")
	w := NewWriter(f, WriterOptions{RangeFilterBitsPerKey: 1})
	w.Add(base.MakeInternalKey([]byte("a"), 1, base.KindSet), nil)
	if _, err := w.Finish(); !errors.Is(err, filters.ErrInvalidArgument) {
		t.Fatalf("Finish = %v, want ErrInvalidArgument", err)
	}
}

// TestRangeFilterAskedWhenItPays checks rangeFilterUse and where a
// positioning call asks. A table whose filter keeps answering "may hold
// keys" is asked up front about one time in rangeSampleEvery after its
// warm-up, and not otherwise, whether its blocks are in the cache or not.
// When its ranges turn empty, it reads blocks only until a sampled check
// first answers "empty": from then on calls that do not ask up front ask
// before their first data-block read, and the table soon goes back to
// asking up front every time.
// Answers are exact throughout (TestRangeFilterTableIdentical).
func TestRangeFilterAskedWhenItPays(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 13))
	entries := holeyIDEntries(rng, 3000)
	fs := vfs.NewMem()
	writeTable(t, fs, "/t.sst", entries, WriterOptions{BlockSize: 512, RangeFilterBitsPerKey: 16})
	for _, cached := range []bool{true, false} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			stats := &Stats{}
			opts := ReaderOptions{Stats: stats}
			if cached {
				opts.Cache = NewCache(64 << 20)
			}
			r := openTable(t, fs, "/t.sst", opts)
			scan := func(lower, upper []byte) bool {
				it := r.NewIter(lower, upper)
				defer it.Close()
				return it.First()
			}
			if cached { // every block into the cache
				it := r.NewIter(nil, nil)
				for ok := it.First(); ok; ok = it.Next() {
				}
				it.Close()
			}
			checks := func() int64 { return stats.RangeFilterChecks.Load() }
			// Ranges that start at a key: the filter never pays.
			const n int64 = 4000
			reads := stats.Snapshot().DataBlockReads
			for i := int64(0); i < n; i++ {
				if k := entries[rng.IntN(len(entries))].key.UserKey; !scan(k, nil) {
					t.Fatalf("no key at or after %s", k)
				}
			}
			// Cached or not: the unsampled calls do not ask, not even
			// before a read, since every answer was "holds keys".
			want := rangeWarmup + (n-rangeWarmup)/rangeSampleEvery
			if c := checks(); c < want-1 || c > want+1 {
				t.Errorf("%d ranges holding keys: filter asked %d times, want about %d", n, c, want)
			}
			if d := stats.Snapshot().DataBlockReads - reads; cached != (d == 0) {
				t.Errorf("%d ranges holding keys: %d data-block reads (cached %v)", n, d, cached)
			}
			// Ranges in a hole: every sampled answer is "empty", so the
			// table returns to asking up front every time.
			empty := func(i int) ([]byte, []byte) {
				lo := 100 + 800*(i%50) // in a hole: holeyIDEntries keeps ids 800j to 800j+98
				return fmt.Appendf(nil, "user%08d", lo), fmt.Appendf(nil, "user%08d", lo+1+i%300)
			}
			reads = stats.Snapshot().DataBlockReads
			for i := 0; i < 3000; i++ {
				if scan(empty(i)) {
					t.Fatalf("key in empty range %d", i)
				}
			}
			// At most the reads before the first sampled "empty": from it
			// on, a call that did not ask up front asks before its read.
			if d := stats.Snapshot().DataBlockReads - reads; d > rangeSampleEvery-1 {
				t.Errorf("3000 empty ranges: %d data-block reads, want at most %d", d, rangeSampleEvery-1)
			}
			before := checks()
			negatives := stats.RangeFilterNegatives.Load()
			for i := 0; i < 200; i++ {
				if scan(empty(i)) {
					t.Fatalf("key in empty range %d", i)
				}
			}
			if c, neg := checks()-before, stats.RangeFilterNegatives.Load()-negatives; c != 200 || neg != 200 {
				t.Errorf("after the ranges turned empty: filter asked %d times of 200, %d negative", c, neg)
			}
		})
	}
}
