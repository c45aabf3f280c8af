package kv

import (
	"fmt"
	"testing"
)

// BenchmarkGetMemRangeDels measures what many range tombstones in the
// memtable cost a read: a DB of 20k keys, plus 10k DeleteRanges of
// disjoint session prefixes (as a user deleting sessions, queue segments
// or TTL buckets by prefix leaves them) that cover none of the keys read.
// "memtable" reads with the tombstones in the memtable, "flushed" after
// they were flushed to a table; their ratio is the memtable's overhead.
// "get" is a Get of a present key (after one untimed Get, which builds
// the memtable's index, K13), "seek" an iterator's creation, one SeekGE
// and Close. "memtable/delete-get" alternates a DeleteRange of a new
// prefix with a Get, so every Get finds the index one tombstone behind:
// what a workload mixing prefix deletes with reads pays (it adds b.N
// tombstones, so run it with a fixed -benchtime Nx). Automatic compactions are off: an idle DB flushes a
// memtable holding tombstones within seconds (delete_aware.go), which
// would move the tombstones out from under "memtable".
func BenchmarkGetMemRangeDels(b *testing.B) {
	d, err := Open(b.TempDir(), &Options{DisableWAL: true, DisableAutomaticCompactions: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	keys := make([][]byte, 20_000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user/%016x", uint64(i)*0x9e3779b97f4a7c15)
		if err := d.Set(keys[i], make([]byte, 100), NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		start, end := fmt.Sprintf("session/%05d/", i), fmt.Sprintf("session/%05d0", i)
		if err := d.DeleteRange([]byte(start), []byte(end), NoSync); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B) {
		b.Run("get", func(b *testing.B) {
			if _, err := d.Get(keys[0]); err != nil {
				b.Fatal(err)
			}
			benchPresentGets(b, d, keys)
		})
		b.Run("seek", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				it := d.NewIter(nil)
				if !it.SeekGE(keys[(i*7919)%len(keys)]) {
					b.Fatal("SeekGE found nothing")
				}
				if err := it.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("memtable", run)
	b.Run("memtable/delete-get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			start, end := fmt.Sprintf("queue/%08d/", i), fmt.Sprintf("queue/%08d0", i)
			if err := d.DeleteRange([]byte(start), []byte(end), NoSync); err != nil {
				b.Fatal(err)
			}
			if _, err := d.Get(keys[(i*7919)%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Run("flushed", run)
}
