package kv

import (
	"bytes"
	"errors"
	"fmt"
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
	saved := metadataCut
	metadataCut = 16 << 10
	defer func() { metadataCut = saved }()
	fs := vfs.NewMem()
	opts := &Options{MemTableSize: 4 << 20, BlockSize: 256, DisableAutomaticCompactions: true}
	d := openMem(t, fs, opts)
	const n = 120
	key := func(i int) []byte {
		// Each key is a prefix of the next, all 0xff after the index:
		// separators and successors are the keys themselves.
		return append(fmt.Appendf(nil, "%04d", i), bytes.Repeat([]byte{0xff}, 1000+8*i)...)
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
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get(long[:MaxKeySize]); err != nil || string(v) != "v" {
		t.Fatalf("Get of the %d-byte key after a flush: %q, %v", MaxKeySize, v, err)
	}
}
