package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/memtable"
	"github.com/sievekv/sievekv/vfs"
)

// TestFlushMergesQueuedMemTables checks that one flush writes every
// memtable waiting when it starts into a single L0 table: versions of a
// key in two memtables collapse (C1), a tombstone with nothing older below
// is elided, both WALs are removed, and the result survives a reopen.
func TestFlushMergesQueuedMemTables(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{DisableAutomaticCompactions: true})
	set := func(k, v string) {
		t.Helper()
		if err := d.Set([]byte(k), []byte(v), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	// rotate freezes the mutable memtable without starting a flush, so
	// two memtables queue up as they do when flushes fall behind.
	rotate := func() {
		t.Helper()
		if err := d.asLeader(d.rotateMemTableLocked); err != nil {
			t.Fatal(err)
		}
	}
	set("a", "1")
	set("b", "1")
	set("c", "1")
	rotate()
	set("b", "2")
	if err := d.Delete([]byte("c"), NoSync); err != nil {
		t.Fatal(err)
	}
	set("d", "2")
	rotate()
	d.mu.Lock()
	queued := len(d.imm)
	logs := []fileNum{d.imm[0].logNum, d.imm[1].logNum}
	d.mu.Unlock()
	if queued != 2 {
		t.Fatalf("%d memtables queued, want 2", queued)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	m := d.Metrics()
	if m.Levels[0].Tables != 1 || m.Flushes != 2 {
		t.Fatalf("L0 has %d tables from %d memtables flushed, want 1 table from 2", m.Levels[0].Tables, m.Flushes)
	}
	// a, b#2 and d: b#1 is shadowed in the same stripe, and c's tombstone
	// (with c#1 under it) hides nothing older.
	if m.Levels[0].Entries != 3 {
		t.Fatalf("L0 table holds %d entries, want 3", m.Levels[0].Entries)
	}
	for _, n := range logs {
		if _, err := fs.Stat(d.path(fileKindLog, n)); err == nil {
			t.Errorf("WAL %06d still exists after its memtable was flushed", n)
		}
	}
	check := func(d *DB) {
		t.Helper()
		for k, want := range map[string]string{"a": "1", "b": "2", "d": "2"} {
			if v, err := d.Get([]byte(k)); err != nil || string(v) != want {
				t.Errorf("Get(%s) = %q, %v; want %q", k, v, err, want)
			}
		}
		if _, err := d.Get([]byte("c")); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(c) after its delete: %v, want ErrNotFound", err)
		}
	}
	check(d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, &Options{DisableAutomaticCompactions: true})
	defer d.Close()
	check(d)
}

// TestMemTableRotatesOnLogicalSize checks that MemTableSize bounds the
// memtable's logical size (memtable's MT7: keys, values and
// LogicalEntryOverhead per entry), not its memory charge, so an L0 table
// holds as many entries as an arena memtable of that size would.
func TestMemTableRotatesOnLogicalSize(t *testing.T) {
	const limit = 64 << 10
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: limit, DisableAutomaticCompactions: true})
	defer d.Close()
	d.mu.Lock()
	first := d.mem
	d.mu.Unlock()
	rotated := func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.mem != first
	}
	key := make([]byte, 16)
	val := make([]byte, 100)
	// The memtable itself is counted, not the first L0 table: a flush
	// that starts late writes every queued memtable into one table.
	for i := 0; !rotated(); i++ {
		if i > 10*limit/len(val) {
			t.Fatal("no rotation after ten memtables' worth of writes")
		}
		copy(key, fmt.Sprintf("key%013d", i))
		if err := d.Set(key, val, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	per := int64(len(key) + len(val))
	want := (limit + per + memtable.LogicalEntryOverhead - 1) / (per + memtable.LogicalEntryOverhead)
	if got := int64(first.Len()); got != want {
		t.Fatalf("first memtable holds %d entries, want %d (a %d-byte limit at %d+%d bytes per entry)",
			got, want, limit, per, memtable.LogicalEntryOverhead)
	}
}
