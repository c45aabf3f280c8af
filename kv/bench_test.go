package kv

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// benchDB loads n keys into a fully compacted DB on the OS file system.
func benchDB(b *testing.B, n int) (*DB, [][]byte) {
	b.Helper()
	d, err := Open(b.TempDir(), &Options{DisableWAL: true})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, n)
	val := make([]byte, 100)
	for i := range keys {
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, rand.Uint64())
		binary.BigEndian.PutUint64(k[8:], uint64(i)<<1)
		keys[i] = k
		if err := d.Set(k, val, NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	return d, keys
}

func BenchmarkGet(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	b.Run("present", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := d.Get(keys[(i*7919)%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("absent", func(b *testing.B) {
		b.ReportAllocs()
		k := make([]byte, 16)
		for i := 0; b.Loop(); i++ {
			copy(k, keys[(i*7919)%len(keys)])
			k[15] |= 1
			if _, err := d.Get(k); err != ErrNotFound {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDeleteHeavy loads keys, deletes 30% of them, flushes and
// compacts, with the tombstone index on and off: what maintaining the
// index costs on the write side, and what Gets of deleted and kept keys
// cost (the Get path does not consult the index; see docs/design.md).
func BenchmarkDeleteHeavy(b *testing.B) {
	for _, disabled := range []bool{false, true} {
		name := "index-on"
		if disabled {
			name = "index-off"
		}
		b.Run(name, func(b *testing.B) {
			const n = 100_000
			for b.Loop() {
				d, err := Open(b.TempDir(), &Options{DisableWAL: true, DisableTombstoneIndex: disabled, MemTableSize: 1 << 20})
				if err != nil {
					b.Fatal(err)
				}
				val := make([]byte, 100)
				key := func(i int) []byte {
					k := make([]byte, 16)
					binary.BigEndian.PutUint64(k, uint64(i)*0x9e3779b97f4a7c15)
					return k
				}
				for i := 0; i < n; i++ {
					d.Set(key(i), val, NoSync)
				}
				d.Flush()
				for i := 0; i < n; i += 3 {
					d.Delete(key(i), NoSync)
				}
				if err := d.Flush(); err != nil {
					b.Fatal(err)
				}
				for i := 0; i < n; i++ {
					_, err := d.Get(key(i))
					if (i%3 == 0) != (err == ErrNotFound) {
						b.Fatalf("key %d: %v", i, err)
					}
				}
				m := d.Metrics()
				b.ReportMetric(float64(m.DiskReads.DataBlocks)/n, "blockreads/get")
				b.ReportMetric(float64(m.TombstoneIndex.Bytes), "index-bytes")
				d.Close()
			}
		})
	}
}

// BenchmarkScan is kvbench's scanrange on one engine: a seek to a random
// present key and 100 Nexts, each in a fresh iterator.
func BenchmarkScan(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		it := d.NewIter(nil)
		n := 0
		for ok := it.SeekGE(keys[(i*7919)%len(keys)]); ok && n < 100; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
