package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sievekv/sievekv/kv"
)

// BenchmarkCompactWholeTree: one op is a manual compaction of a whole
// leveled tree on disk, sievekv's Compact(nil, nil) beside Pebble's
// Compact of every key, each engine on a tree its own background
// compactions shaped from the same untimed load (300k random 16-byte
// keys, 100-byte values, WAL off, default options, settled before the
// timer starts). compact-B/tree-B is the table bytes the compaction wrote
// over the bytes the tree held before it: 1 when every table is read and
// written once, more when a manual compaction stops at every level and
// writes what moves down again at each stop. The trees' shapes vary with
// the background compactions' timing, so run a few ops and compare the
// two side by side, as ratios:
//
//	go test ./tests -run '^$' -bench CompactWholeTree -benchtime 3x
func BenchmarkCompactWholeTree(b *testing.B) {
	const n = 300_000
	const valueSize = 100
	// A small base level makes the tree three levels deep.
	const lbase = 2 << 20
	load := func(set func(k, v []byte) error) {
		rng := rand.New(rand.NewPCG(1, 2))
		v := make([]byte, valueSize)
		for range n {
			k := fmt.Appendf(nil, "%016x", rng.Uint64())
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			if err := set(k, v); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("sievekv", func(b *testing.B) {
		var written, tree uint64
		for b.Loop() {
			b.StopTimer()
			d, err := kv.Open(b.TempDir(), &kv.Options{DisableWAL: true, LBaseMaxBytes: lbase})
			if err != nil {
				b.Fatal(err)
			}
			load(func(k, v []byte) error { return d.Set(k, v, kv.NoSync) })
			if err := d.Flush(); err != nil {
				b.Fatal(err)
			}
			settle(b, func() bool { return !d.Metrics().Compaction.InProgress })
			m := d.Metrics()
			before := m.TableBytesWritten
			for _, l := range m.Levels {
				tree += l.Bytes
			}
			b.StartTimer()
			if err := d.Compact(nil, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			written += d.Metrics().TableBytesWritten - before
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(written)/float64(tree), "compact-B/tree-B")
	})
	b.Run("pebble", func(b *testing.B) {
		var written, tree uint64
		for b.Loop() {
			b.StopTimer()
			d, err := pebble.Open(b.TempDir(), &pebble.Options{DisableWAL: true, LBaseMaxBytes: lbase, Logger: quietLogger{}})
			if err != nil {
				b.Fatal(err)
			}
			load(func(k, v []byte) error { return d.Set(k, v, pebble.NoSync) })
			if err := d.Flush(); err != nil {
				b.Fatal(err)
			}
			settle(b, func() bool { return d.Metrics().Compact.NumInProgress == 0 })
			m := d.Metrics()
			before := pebbleCompacted(d)
			for _, l := range m.Levels {
				tree += uint64(l.TablesSize)
			}
			b.StartTimer()
			if err := d.Compact(context.Background(), nil, []byte{0xff}, true); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			written += pebbleCompacted(d) - before
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(written)/float64(tree), "compact-B/tree-B")
	})
}

// settle waits until idle has held for 200 ms (background compactions
// pick again when one ends), or fails after a minute.
func settle(b *testing.B, idle func() bool) {
	deadline := time.Now().Add(time.Minute)
	for quiet := time.Duration(0); quiet < 200*time.Millisecond; {
		if time.Now().After(deadline) {
			b.Fatal("background compactions still running after a minute")
		}
		time.Sleep(10 * time.Millisecond)
		if idle() {
			quiet += 10 * time.Millisecond
		} else {
			quiet = 0
		}
	}
}

// pebbleCompacted sums the table bytes Pebble's compactions have written
// into every level.
func pebbleCompacted(d *pebble.DB) uint64 {
	var n uint64
	for _, l := range d.Metrics().Levels {
		n += l.TableBytesCompacted
	}
	return n
}
