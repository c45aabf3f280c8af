package kv

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestLongKeysCutTablesBeforeTheirMetadataOutgrowsAReader: a break-it
// review flushed two 540 MiB keys, one a prefix of the other and all 0xff
// so that no separator could shorten them, and got a table whose index
// block was past the 1 GiB a reader accepts: every entry of the flush
// was lost. Keys are now bounded (MaxKeySize) and a table ends once its
// metadata nears the limit, a flush's too. With the cut brought down to
// 16 KiB here, keys of 1-2 KiB made the same way must spread a flush and
// then a compaction over several tables, none with an index past the cut
// and one key's entries, and every key must read back, before and after
// a reopen.
func TestLongKeysCutTablesBeforeTheirMetadataOutgrowsAReader(t *testing.T) {
	lowerMetadataCut(t, 16<<10)
	fs := vfs.NewMem()
	opts := &Options{MemTableSize: 4 << 20, BlockSize: 256, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	const n = 120
	key := func(i int) []byte {
		// Each key is the previous one's 'k's, eight more, then its
		// index: the shortest separator of two neighbours is as long as
		// the first (base.ShortSeparator), so the index holds the keys.
		return fmt.Appendf(bytes.Repeat([]byte{'k'}, 1000+8*i), "%04d", i)
	}
	for i := range n {
		if err := d.Set(key(i), []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(stage string, wantLevel int) {
		t.Helper()
		v := refCurrent(d)
		defer v.Unref()
		var tables []*manifest.TableMetadata
		for l, ts := range v.Levels {
			if len(ts) > 0 && l != wantLevel {
				t.Fatalf("%s: %d tables at L%d, want them all at L%d", stage, len(ts), l, wantLevel)
			}
			tables = append(tables, ts...)
		}
		if len(tables) < 4 {
			t.Fatalf("%s: %d tables; the metadata cut should have made at least 4", stage, len(tables))
		}
		for _, tm := range tables {
			if tm.Props != nil && tm.Props.IndexSize > metadataCut+4<<10 {
				t.Errorf("%s: table %06d has a %d-byte index, past the %d-byte cut and one key", stage, tm.FileNum, tm.Props.IndexSize, metadataCut)
			}
		}
		for i := range n {
			if v, err := d.Get(key(i)); err != nil || !bytes.Equal(v, []byte{byte(i)}) {
				t.Fatalf("%s: Get(key %d) = %v, %v", stage, i, v, err)
			}
		}
		it := d.NewIter(nil)
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			if !bytes.Equal(it.Key(), key(i)) {
				t.Fatalf("%s: scan entry %d is not key %d", stage, i, i)
			}
			i++
		}
		if err := it.Close(); err != nil || i != n {
			t.Fatalf("%s: scan saw %d keys, %v", stage, i, err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check("after the flush", 0)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("after Compact", NumLevels-1)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, opts)
	defer d.Close()
	check("after a reopen", NumLevels-1)
}

// TestKeyLimit: a key of MaxKeySize bytes is written and read back; one
// byte more, as a key or as either end of a range deletion, is
// ErrInvalidArgument and writes nothing of its batch.
func TestKeyLimit(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	long := bytes.Repeat([]byte{'k'}, MaxKeySize+1)
	if err := d.Set(long[:MaxKeySize], []byte("v"), nil); err != nil {
		t.Fatalf("Set of a %d-byte key: %v", MaxKeySize, err)
	}
	for name, write := range map[string]func(b *Batch){
		"Set":               func(b *Batch) { b.Set(long, nil) },
		"Delete":            func(b *Batch) { b.Delete(long) },
		"DeleteRange start": func(b *Batch) { b.DeleteRange(long, []byte("z")) },
		"DeleteRange end":   func(b *Batch) { b.DeleteRange([]byte("a"), long) },
	} {
		b := d.NewBatch()
		b.Set([]byte("first"), []byte("1"))
		write(b)
		if err := d.Apply(b, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s of a %d-byte key: %v, want ErrInvalidArgument", name, len(long), err)
		}
	}
	if _, err := d.Get([]byte("first")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused batch wrote its first entry: %v", err)
	}
	// The error names the key's length, not the value's: it said "a
	// 5242880-byte key" of a key one byte over the limit with a 5 MiB value.
	err := d.Set(long, make([]byte, 5<<20), nil)
	if want := fmt.Sprintf("a %d-byte key exceeds", len(long)); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Set of a %d-byte key and a 5 MiB value = %v, want %q", len(long), err, want)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get(long[:MaxKeySize]); err != nil || string(v) != "v" {
		t.Fatalf("Get of the %d-byte key after a flush: %q, %v", MaxKeySize, v, err)
	}
}

// TestDisjointRangeDeletionsCutTables caught the metadata cut never
// applying to range deletions (a review): a table ended only at a point's
// turn, and tombstones past the last point all went into the last table,
// so 550 legal DeleteRanges with 1 MiB ends, disjoint, in two batches,
// made a flush's range-deletion block past the 1 GiB a reader accepts:
// the flush failed, the DB turned read-only, and every reopen replayed the
// WAL into the same failure. A table now also ends between two disjoint
// tombstones once its metadata reaches the cut. With the cut at 16 KiB,
// 100 disjoint ranges of 2 KB keys (about 400 KB) must spread over several
// tables, and hide exactly the keys they cover, before and after a
// compaction and a reopen.
func TestDisjointRangeDeletionsCutTables(t *testing.T) {
	lowerMetadataCut(t, 16<<10)
	fs := vfs.NewMem()
	opts := &Options{MemTableSize: 4 << 20, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	const n, klen = 100, 2000
	key := func(i int) []byte {
		return append(fmt.Appendf(nil, "a%06d", i), bytes.Repeat([]byte{0xff}, klen-7)...)
	}
	// Points at every even and odd index; the ranges [2i, 2i+1) delete
	// the even ones only.
	for i := range 2 * n {
		if err := d.Set(key(i), []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := d.DeleteRange(key(2*i), key(2*i+1), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(stage string, minTables int) {
		t.Helper()
		v := refCurrent(d)
		tables := 0
		for _, ts := range v.Levels {
			tables += len(ts)
		}
		if l0 := len(v.Levels[0]); minTables > 0 && l0 < minTables {
			t.Errorf("%s: %d L0 tables for %d bytes of range deletions; the cut at %d should have made at least %d", stage, l0, 2*n*klen, metadataCut, minTables)
		}
		v.Unref()
		for i := range 2 * n {
			v, err := d.Get(key(i))
			if i%2 == 0 && !errors.Is(err, ErrNotFound) || i%2 == 1 && (err != nil || !bytes.Equal(v, []byte{byte(i)})) {
				t.Fatalf("%s: Get(key %d) = %v, %v", stage, i, v, err)
			}
		}
	}
	check("after the flush", 4)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, opts)
	defer d.Close()
	check("after a reopen", 4)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	check("after Compact", 0)
}

// TestLongKeysUnderARangeDeletionBoundedByTheMemTable caught a flush that
// could not end a table (a review): a table could not end inside a range
// deletion covering the keys written after it, so one batch of a
// DeleteRange and 1,000 keys of 1 MiB inside it, within every per-write
// limit, made a 1 GiB index: the flush failed, and every reopen replayed
// the WAL into the same failure. Tables now end inside range deletions
// (rangeDelOutput), and the keys of a flush are bounded besides, for what
// still cannot be cut (one key's versions, range deletions sharing a
// start): a memtable rotates once its keys reach memTableKeyLimit, a
// batch's keys are bounded (maxBatchKeyBytes), and a flush merges
// memtables only up to four times the limit of keys. With the limit at
// 16 KiB, 2 KB keys under one range deletion must spread over flushes
// whose indexes stay within that bound, and read back after a reopen.
func TestLongKeysUnderARangeDeletionBoundedByTheMemTable(t *testing.T) {
	saved := memTableKeyLimit
	memTableKeyLimit = 16 << 10
	defer func() { memTableKeyLimit = saved }()
	fs := vfs.NewMem()
	opts := &Options{MemTableSize: 64 << 20, BlockSize: 256, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	if err := d.DeleteRange([]byte("a"), []byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	const n, klen = 120, 2000
	key := func(i int) []byte {
		return append(fmt.Appendf(nil, "a%06d", i), bytes.Repeat([]byte{0xff}, klen-7)...)
	}
	for i := range n {
		if err := d.Set(key(i), []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	v := refCurrent(d)
	if len(v.Levels[0]) < 4 {
		t.Errorf("%d L0 tables for %d bytes of keys with memtables rotating at %d", len(v.Levels[0]), n*klen, memTableKeyLimit)
	}
	// A flush takes at most 4x the limit of keys, plus the memtable that
	// crossed it (the limit, one batch, a commit group: a key here).
	bound := uint64(5*memTableKeyLimit + 2*klen + 64*50)
	for _, tm := range v.Levels[0] {
		if tm.Props.IndexSize > bound {
			t.Errorf("table %06d has a %d-byte index, past the %d bytes its flush's keys bound", tm.FileNum, tm.Props.IndexSize, bound)
		}
	}
	v.Unref()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, opts)
	defer d.Close()
	for i := range n {
		if v, err := d.Get(key(i)); err != nil || !bytes.Equal(v, []byte{byte(i)}) {
			t.Fatalf("Get(key %d) after a reopen = %v, %v", i, v, err)
		}
	}
	if _, err := d.Get([]byte("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(a), deleted by the range, = %v", err)
	}
}

// TestBatchKeyBytesBounded: a batch whose keys pass maxBatchKeyBytes is
// ErrInvalidArgument and writes nothing; it is refused before it copies
// the key that would pass the bound.
func TestBatchKeyBytesBounded(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	key := make([]byte, MaxKeySize)
	b := d.NewBatch()
	for i := range maxBatchKeyBytes / MaxKeySize {
		key[0] = byte(i)
		b.Set(key, nil)
	}
	before := b.Len()
	key[0] = 0xff
	b.Set(key, nil)
	if b.Len() != before {
		t.Fatalf("the batch copied the key past its bound: %d bytes, was %d", b.Len(), before)
	}
	if err := d.Apply(b, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Apply of a batch of more than %d bytes of keys = %v, want ErrInvalidArgument", maxBatchKeyBytes, err)
	}
	key[0] = 0
	if _, err := d.Get(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused batch wrote its first key: %v", err)
	}
	b.Reset()
	b.Set(key, nil)
	if err := d.Apply(b, nil); err != nil {
		t.Fatalf("a reset batch with one key: %v", err)
	}
}

// TestFlushPrefixBoundsItsKeys: a flush merges the oldest memtables while
// their keys stay within four times memTableKeyLimit, and always takes
// at least one.
func TestFlushPrefixBoundsItsKeys(t *testing.T) {
	mems := func(keys ...int64) []*memTable {
		ms := make([]*memTable, len(keys))
		for i, k := range keys {
			ms[i] = &memTable{}
			ms[i].keyBytes.Store(k)
		}
		return ms
	}
	l := memTableKeyLimit
	for _, tc := range []struct {
		keys []int64
		want int
	}{
		{[]int64{1}, 1},
		{[]int64{1, 2, 3}, 3},
		{[]int64{2 * l, 2 * l, 1}, 2},
		{[]int64{5 * l, 1}, 1},
		{[]int64{l, 3 * l, 1}, 2},
		{[]int64{l, 3*l + 1, 1}, 1},
	} {
		if got := flushPrefixLocked(mems(tc.keys...)); got != tc.want {
			t.Errorf("memtables with %v bytes of keys: a flush takes %d, want %d", tc.keys, got, tc.want)
		}
	}
}
