package kv

import (
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// BenchmarkCompactL0: one op is a manual compaction of overlapping L0
// tables (200k random 16-byte keys with 100-byte values, one table per
// 1 MiB memtable, on the in-memory file system) into the bottom level:
// the merge, table writes and filter builds a compaction costs, without
// disk time. The load is untimed; MB/s counts the user bytes merged.
func BenchmarkCompactL0(b *testing.B) {
	const n = 200_000
	k, v := make([]byte, 16), make([]byte, 100)
	b.SetBytes(n * int64(len(k)+len(v)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		d, err := Open("db", &Options{FS: vfs.NewMem(), DisableWAL: true, DisableAutomaticCompactions: true,
			MemTableSize: 1 << 20, L0StopWritesThreshold: 1000})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range n {
			setRandomKey(b, d, rng, k, v, NoSync)
		}
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := d.Compact(nil, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
