//go:build !race

// The race detector makes sync.Pool drop items at random, so the pooled
// iterator memory would be reallocated and these counts would not hold.

package kv

import (
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestShortScanAllocations pins what a short scan allocates over a DB with
// a memtable, L0 tables and a level: the Iterator handle, nothing else
// (iter_alloc.go; built fresh, the same scan allocated 20 objects). The
// copies Key and Value hand out are the handle's too, and grow with the
// keys and values read, so the scan here steps without reading them.
func TestShortScanAllocations(t *testing.T) {
	d, err := Open("db", &Options{FS: vfs.NewMem(), MemTableSize: 64 << 10, DisableWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 6000 {
		if err := d.Set([]byte(fmt.Sprintf("key%05d", i)), make([]byte, 50), NoSync); err != nil {
			t.Fatal(err)
		}
		if i == 3000 {
			if err := d.Compact(nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Set([]byte("key00100x"), []byte("in the memtable"), NoSync); err != nil {
		t.Fatal(err)
	}
	rs, _, err := d.loadLatestReadState()
	if err != nil {
		t.Fatal(err)
	}
	l0, deeper := len(rs.v.Levels[0]), len(rs.v.Levels)-1
	for deeper > 0 && len(rs.v.Levels[deeper]) == 0 {
		deeper--
	}
	rs.unref()
	if l0 == 0 || deeper == 0 {
		t.Fatalf("the DB has %d L0 tables and its deepest level is L%d; the test wants both", l0, deeper)
	}
	seek := []byte("key00098")
	scan := func() {
		it := d.NewIter(nil)
		n := 0
		for ok := it.SeekGE(seek); ok && n < 5; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil || n != 5 {
			t.Fatalf("the scan read %d keys, %v", n, err)
		}
	}
	if n := testing.AllocsPerRun(200, scan); n != 1 {
		t.Fatalf("a short scan allocates %v times, want 1 (the Iterator handle)", n)
	}
}
