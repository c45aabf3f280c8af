package kv

import (
	"errors"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestDeleteRangeFromEmptyKeyTableReads: range tombstones from the empty
// key with small sequence numbers encode in 4 or 5 bytes each, below what
// the range-deletion block's decoder once assumed of every tombstone. A
// flushed table of three such tombstones read as corrupt, on every read
// of it and at every Open after, which rebuilt the tombstone index from
// it.
func TestDeleteRangeFromEmptyKeyTableReads(t *testing.T) {
	opts := &Options{}
	d := openMem(t, vfs.NewMem(), opts) // sets opts.FS, which the reopen uses
	for _, k := range []string{"0", "a0", "b0", "c0"} {
		if err := d.Set([]byte(k), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range [][2]string{{"", "a"}, {"a", "b"}, {"b", "c"}} {
		if err := d.DeleteRange([]byte(r[0]), []byte(r[1]), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(at string) {
		t.Helper()
		for _, k := range []string{"0", "a0", "b0"} {
			if _, err := d.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%q) = %v, want ErrNotFound", at, k, err)
			}
		}
		if v, err := d.Get([]byte("c0")); err != nil || string(v) != "v" {
			t.Fatalf("%s: Get(c0) = %q, %v", at, v, err)
		}
	}
	check("after the flush")
	d = reopen(t, d, "db", opts)
	defer d.Close()
	check("after reopening")
}
