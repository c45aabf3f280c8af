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
