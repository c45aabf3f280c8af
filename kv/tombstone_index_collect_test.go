package kv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// TestTombstoneCollector: the collector keeps its own copy of each key in
// the order written (the writer's caller reuses its key buffer), and its
// hashes are filters.Hash of the keys whether the writer hashed them for a
// filter or built none and left the hashing to the collector.
func TestTombstoneCollector(t *testing.T) {
	for _, ft := range []FilterType{FilterBloom, FilterNone} {
		t.Run(fmt.Sprint(ft), func(t *testing.T) {
			f, err := vfs.NewMem().Create("t")
			if err != nil {
				t.Fatal(err)
			}
			w := sstable.NewWriter(f, sstable.WriterOptions{Filter: ft, BloomBitsPerKey: 10})
			c := &tombstoneCollector{wantHashes: true}
			var want [][]byte
			buf := make([]byte, 0, 16)
			for i := 0; i < 100; i++ {
				buf = fmt.Appendf(buf[:0], "key%03d", i)
				kind := base.KindSet
				if i%3 == 0 {
					kind = base.KindDelete
				}
				if err := w.Add(base.MakeInternalKey(buf, base.SeqNum(1000-i), kind), nil); err != nil {
					t.Fatal(err)
				}
				if kind == base.KindDelete {
					c.add(buf, w)
					want = append(want, bytes.Clone(buf))
				}
			}
			w.Abort()
			got := collectedKeys(c)
			if len(got) != len(want) || len(c.hashes) != len(want) {
				t.Fatalf("collected %d keys and %d hashes, want %d", len(got), len(c.hashes), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("key %d: %q, want %q", i, got[i], want[i])
				}
				if c.hashes[i] != filters.Hash(want[i]) {
					t.Fatalf("key %q: hash %#x, want filters.Hash %#x", want[i], c.hashes[i], filters.Hash(want[i]))
				}
			}
			keysOnly := &tombstoneCollector{}
			keysOnly.add(want[0], w)
			if len(keysOnly.hashes) != 0 || keysOnly.len() != 1 {
				t.Fatal("a collector not asked for hashes collected some")
			}
		})
	}
}

// TestTombstoneIndexWithoutTableFilters: a table built without a filter
// gives the flush no key hashes, so the collector hashes its tombstones
// itself; the index must still report every one (K7).
func TestTombstoneIndexWithoutTableFilters(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{Filter: FilterNone, DisableAutomaticCompactions: true})
	defer d.Close()
	key := func(i int) []byte { return []byte(fmt.Sprintf("nofilter%04d", i)) }
	for i := 0; i < 500; i++ {
		if err := d.Set(key(i), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i += 2 {
		if err := d.Delete(key(i), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	checkTombstoneIndex(t, d, "after a flush of deletes into a table without a filter")
}

// collectedKeys is every key c collected, in order.
func collectedKeys(c *tombstoneCollector) [][]byte {
	ks := make([][]byte, c.len())
	for i := range ks {
		ks[i] = c.key(i)
	}
	return ks
}
