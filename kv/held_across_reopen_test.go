package kv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestIteratorsAndSnapshotsHeldAcrossReopen holds iterators and snapshots
// of a DB over tables a compaction made obsolete, closes the DB without
// closing them, opens the directory again in the same process, writes,
// flushes and compacts there, and only then uses and closes the old
// handles: they must report ErrClosed and release nothing the new DB
// reads.
func TestIteratorsAndSnapshotsHeldAcrossReopen(t *testing.T) {
	opts := &Options{MemTableSize: 1 << 10, DisableAutomaticCompactions: true}
	d := openMem(t, vfs.NewMem(), opts) // sets opts.FS, which the reopen uses
	put := func(d *DB, from, to int, tag string) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := d.Set(fmt.Appendf(nil, "k%04d", i), []byte(tag), NoSync); err != nil {
				t.Fatal(err)
			}
		}
		mustFlush(t, d)
	}
	put(d, 0, 200, "a")
	put(d, 100, 300, "b")
	it := d.NewIter(nil)
	if !it.First() {
		t.Fatal(it.Error())
	}
	snap := d.NewSnapshot()
	// The compaction makes every table the iterator pins obsolete.
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	d2 := reopen(t, d, "db", opts)
	defer d2.Close()
	put(d2, 0, 50, "c")
	if err := d2.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	put(d2, 50, 60, "d")

	if it.Next() || !errors.Is(it.Error(), ErrClosed) {
		t.Fatalf("old iterator Next after its DB closed: valid %v, %v", it.Valid(), it.Error())
	}
	if err := it.Close(); err != nil && !errors.Is(err, ErrClosed) {
		t.Fatalf("old iterator Close: %v", err)
	}
	if _, err := snap.Get([]byte("k0001")); !errors.Is(err, ErrClosed) {
		t.Fatalf("old snapshot Get: %v", err)
	}
	sit := snap.NewIter(nil)
	if sit.First() || !errors.Is(sit.Error(), ErrClosed) {
		t.Fatalf("old snapshot iterator: %v", sit.Error())
	}
	sit.Close()
	snap.Close()

	for i := 0; i < 300; i++ {
		want := map[bool]string{true: "b", false: "a"}[i >= 100]
		switch {
		case i < 50:
			want = "c"
		case i < 60:
			want = "d"
		}
		v, err := d2.Get(fmt.Appendf(nil, "k%04d", i))
		if err != nil || string(v) != want {
			t.Fatalf("k%04d = %q, %v; want %q", i, v, err, want)
		}
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check("db", opts); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("Check: %v %v", err, rep.Problems)
	}
}
