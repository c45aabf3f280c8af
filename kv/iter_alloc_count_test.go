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
	// Automatic compactions off: one could empty L0 before the check.
	d := openMem(t, vfs.NewMem(), &Options{MemTableSize: 64 << 10, DisableWAL: true, DisableAutomaticCompactions: true})
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

// TestTombstoneCollectorReusedWithoutAllocating: a flush's or compaction's
// tombstone collector comes from a pool and goes back emptied, so
// collecting a table's worth of tombstones again allocates nothing (made
// fresh, its buffers' growth was half of what a delete-heavy phase
// allocated), and a reused collector starts with no key, estimate, probe
// or hash of the last one's.
func TestTombstoneCollectorReusedWithoutAllocating(t *testing.T) {
	keys := make([][]byte, 5000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("tombstone%06d", i))
	}
	collect := func() {
		c := newTombstoneCollector(false, nil)
		if c.len() != 0 || c.hashes != nil || c.probed {
			t.Fatalf("a pooled collector starts with %d keys, %d hashes, probed %v", c.len(), len(c.hashes), c.probed)
		}
		for _, k := range keys {
			c.add(k, nil)
		}
		if c.len() != len(keys) || string(c.key(len(keys)-1)) != string(keys[len(keys)-1]) {
			t.Fatalf("collected %d keys ending %q", c.len(), c.key(c.len()-1))
		}
		c.release()
	}
	if n := testing.AllocsPerRun(20, collect); n != 0 {
		t.Fatalf("collecting %d tombstones with a pooled collector allocates %v times, want 0", len(keys), n)
	}
	// A collector the pool hands out too small (or new) is reserved for
	// the tombstones the flush's memtables or the compaction's inputs
	// hold: each of its three buffers grows once, not by doubling.
	fresh := func() {
		c := &tombstoneCollector{}
		c.reserve(len(keys))
		for _, k := range keys {
			c.add(k, nil)
		}
	}
	if n := testing.AllocsPerRun(20, fresh); n != 3 {
		t.Fatalf("collecting %d tombstones in a reserved new collector allocates %v times, want 3", len(keys), n)
	}
}
