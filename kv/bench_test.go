package kv

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
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
	benchGets(b, d, keys)
}

// BenchmarkGetHot reads 1,000 present keys of BenchmarkGet's DB over and
// over, so their blocks stay cached: the path where a Get's own costs,
// Get's copy of the value among them, are all there is, with Get and with
// GetAppend into a reused buffer.
func BenchmarkGetHot(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	hot := keys[:1000]
	b.Run("get", func(b *testing.B) { benchPresentGets(b, d, hot) })
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 128)
		for i := 0; b.Loop(); i++ {
			v, err := d.GetAppend(buf[:0], hot[(i*7919)%len(hot)])
			if err != nil {
				b.Fatal(err)
			}
			buf = v
		}
	})
}

// benchPresentGets is b's loop of Gets of keys, every one present in d,
// taken with a prime stride so that neighbours in the loop are not
// neighbours in the tree.
func benchPresentGets(b *testing.B, d *DB, keys [][]byte) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := d.Get(keys[(i*7919)%len(keys)]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchGets runs the "present" and "absent" Get sub-benchmarks on keys, each
// of them in d: an absent key is a present one made odd, which benchDB
// never writes.
func benchGets(b *testing.B, d *DB, keys [][]byte) {
	b.Run("present", func(b *testing.B) { benchPresentGets(b, d, keys) })
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

// BenchmarkGetParallel is BenchmarkGet's present keys from many
// goroutines at once (-cpu 2,4,8): what readers pay for the state they
// share (read state, table cache, block cache shards, counters).
func BenchmarkGetParallel(b *testing.B) {
	d, keys := benchDB(b, 200_000)
	defer d.Close()
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) * 104729
		for pb.Next() {
			i++
			if _, err := d.Get(keys[(i*7919)%len(keys)]); err != nil {
				b.Error(err)
				return
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

// setRandomKey is one write of the random-fill benchmarks: it fills the
// 16-byte k from rng and sets it to v with opts.
func setRandomKey(b *testing.B, d *DB, rng *rand.Rand, k, v []byte, opts *WriteOptions) {
	binary.BigEndian.PutUint64(k, rng.Uint64())
	binary.BigEndian.PutUint64(k[8:], rng.Uint64())
	if err := d.Set(k, v, opts); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSet is a random fill through the whole write path (batch, WAL,
// memtable, flushes and compactions behind it), as kvbench's fillrandom:
// 16-byte keys, 100-byte values, 1 MiB memtables. B/op here is the Go heap
// one Set costs; TestSetAllocationBound pins its bound.
func BenchmarkSet(b *testing.B) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"wal", Options{MemTableSize: 1 << 20}},
		{"nowal", Options{MemTableSize: 1 << 20, DisableWAL: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			opts := c.opts
			d, err := Open(b.TempDir(), &opts)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			k, v := make([]byte, 16), make([]byte, 100)
			b.ReportAllocs()
			b.SetBytes(int64(len(k) + len(v)))
			for b.Loop() {
				setRandomKey(b, d, rng, k, v, NoSync)
			}
		})
	}
}

// BenchmarkSetBesideGets is BenchmarkSet's WAL-less writer while one
// reader, locked to its OS thread as kvbench's while-writing readers are,
// Gets keys in a loop: what a reader costs the writer through the
// memtable they share. ns/op is the writer's per Set. absent: keys no
// Set writes (17 bytes), which the memtable's key filter answers without
// its lock (MT11). present: keys among the writer's last 1,000, mostly in
// the mutable memtable, so a Get takes its read lock beside the writer.
func BenchmarkSetBesideGets(b *testing.B) {
	for _, present := range []bool{false, true} {
		name := "absent"
		if present {
			name = "present"
		}
		b.Run(name, func(b *testing.B) { benchSetBesideGets(b, present) })
	}
}

// besideKey is the writer's i-th key in BenchmarkSetBesideGets: 16 bytes
// that the reader can make again from i.
func besideKey(k []byte, i uint64) {
	binary.BigEndian.PutUint64(k, i*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint64(k[8:], i)
}

func benchSetBesideGets(b *testing.B, present bool) {
	d, err := Open(b.TempDir(), &Options{MemTableSize: 1 << 20, DisableWAL: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	var stop atomic.Bool
	var gets, written atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		rng := rand.New(rand.NewPCG(3, 4))
		k := make([]byte, 17) // 17 bytes: no 16-byte key the writer sets
		if present {
			k = k[:16]
		}
		for n := int64(0); !stop.Load(); n++ {
			want := ErrNotFound
			if w := written.Load(); present && w > 0 {
				besideKey(k, uint64(max(w-1000, 0)+rng.Int64N(min(w, 1000))))
				want = nil
			} else {
				binary.BigEndian.PutUint64(k, rng.Uint64())
			}
			if _, err := d.Get(k); err != want {
				b.Errorf("Get: %v, want %v", err, want)
				return
			}
			gets.Store(n)
		}
	}()
	k, v := make([]byte, 16), make([]byte, 100)
	var i uint64
	for b.Loop() {
		besideKey(k, i)
		if err := d.Set(k, v, NoSync); err != nil {
			b.Fatal(err)
		}
		i++
		written.Store(int64(i))
	}
	stop.Store(true)
	<-done
	b.ReportMetric(float64(gets.Load())/float64(b.N), "gets/set")
}

// BenchmarkSetSyncParallel is 8 goroutines writing with Sync: what group
// commit makes of concurrent durable writes (one fdatasync per group).
func BenchmarkSetSyncParallel(b *testing.B) {
	d, err := Open(b.TempDir(), &Options{MemTableSize: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.ReportAllocs()
	b.SetParallelism(8)
	var seed atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 2))
		k, v := make([]byte, 16), make([]byte, 100)
		for pb.Next() {
			setRandomKey(b, d, rng, k, v, Sync)
		}
	})
}

// BenchmarkScanRange is kvbench's scanrange on one engine: a seek to a random
// present key and 100 Nexts, each in a fresh iterator.
func BenchmarkScanRange(b *testing.B) {
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

// BenchmarkTombstoneProbes is what a flush pays per tombstone before it
// writes it: the elision check, which also makes the shadowed-bytes
// estimate (probeBelow), over a fully compacted tree of about 100 bottom
// tables, for keys the tree holds (a delete of a live key) and keys it
// does not (a delete the filters let the flush drop).
func BenchmarkTombstoneProbes(b *testing.B) {
	const n = 200_000
	d, err := Open(b.TempDir(), &Options{DisableWAL: true, TargetFileSize: 32 << 10})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	keys := make([][]byte, n)
	val := make([]byte, 100)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15&^1)
		if err := d.Set(keys[i], val, NoSync); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	v := refCurrent(d)
	defer v.Unref()
	b.Logf("bottom tables: %d", len(v.Levels[NumLevels-1]))
	for _, present := range []bool{true, false} {
		name := "present"
		if !present {
			name = "absent"
		}
		b.Run(name, func(b *testing.B) {
			k := make([]byte, 8)
			for i := 0; b.Loop(); i++ {
				copy(k, keys[(i*7919)%n])
				if !present {
					k[7] |= 1
				}
				if _, mayHold := d.probeBelow(v, 0, k); present && !mayHold {
					b.Fatal("a key the tree holds reads as absent")
				}
			}
		})
	}
}
