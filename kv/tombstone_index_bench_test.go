package kv

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// BenchmarkTombstoneIndexDeleteCPU is kvbench's deleterandom phase with
// the tombstone index on and off, charged by process CPU time so that the
// sides see the same machine load: each iteration (a round) loads three
// identical, compacted DBs (uncharged), the index on in the first and the
// third and off in the second, then deletes 30% of the keys in random
// order on one after another, rotating which goes first, each phase
// ending when its flush, the compactions it made due and any index growth
// are done. Only one DB works at a time, so each phase's CPU is its own.
// It reports each side's CPU time per delete, the ratio on / off (the
// index pays its way on the delete path at <= 1) summed over rounds and
// its median over rounds, and the same for the first DB against the third
// (an A/A control: two identical DBs, whose ratio's distance from 1 is
// what the benchmark resolves), and the time the index itself spent
// inserting and removing.
var benchDeleteKeys = 100_000

func BenchmarkTombstoneIndexDeleteCPU(b *testing.B) {
	n := benchDeleteKeys
	rng := rand.New(rand.NewPCG(19, 3))
	keys, val := benchKeysAndValue(rng, n)
	deleted := keys[:n*3/10]
	load := func(disabled bool) *DB {
		d, err := Open("db", &Options{FS: vfs.NewMem(), DisableWAL: true, DisableTombstoneIndex: disabled,
			MemTableSize: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			if err := d.Set(k, val, NoSync); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Compact(nil, nil); err != nil {
			b.Fatal(err)
		}
		return d
	}
	deletePhase := func(d *DB) {
		for _, k := range deleted {
			if err := d.Delete(k, NoSync); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
		settle(b, d)
	}
	var spent [3]time.Duration // [0] index on, [1] off, [2] on again (the control)
	var onOff, aa []float64    // per round: on/off and on/control CPU
	var peakBytesPerTombstone float64
	var rebuilds uint64
	var rebuildTime, updateTime time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		dbs := [3]*DB{load(false), load(true), load(false)}
		b.StartTimer()
		var round [3]time.Duration
		for k := range dbs {
			side := (i + k) % len(dbs)
			// No side pays for collecting another's garbage.
			runtime.GC()
			start := testutil.ProcessCPUTime(b)
			deletePhase(dbs[side])
			round[side] = testutil.ProcessCPUTime(b) - start
			spent[side] += round[side]
		}
		onOff = append(onOff, float64(round[0])/float64(round[1]))
		aa = append(aa, float64(round[0])/float64(round[2]))
		m := dbs[0].Metrics()
		peakBytesPerTombstone = m.TombstoneIndex.PeakBytesPerTombstone
		rebuilds += m.TombstoneIndex.Rebuilds
		rebuildTime += m.TombstoneIndex.RebuildTime
		updateTime += time.Duration(dbs[0].tombstones.updateNanos.Load())
		for _, d := range dbs {
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	dels := float64(b.N * len(deleted))
	b.ReportMetric(float64(spent[0].Nanoseconds())/dels, "on-cpu-ns/delete")
	b.ReportMetric(float64(spent[1].Nanoseconds())/dels, "off-cpu-ns/delete")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "ratio")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "aa-ratio")
	b.ReportMetric(roundsMedian(onOff), "median-ratio")
	b.ReportMetric(roundsMedian(aa), "median-aa-ratio")
	b.ReportMetric(peakBytesPerTombstone, "index-B/tombstone")
	b.ReportMetric(float64(rebuilds)/float64(b.N), "index-rebuilds/phase")
	b.ReportMetric(float64(rebuildTime.Nanoseconds())/dels, "index-rebuild-ns/delete")
	// The index's own inserts and removes (fills from empty included),
	// timed inside it. Wall time: on a loaded machine it includes the
	// flush goroutine's waits for a core, so it bounds the cost from above.
	b.ReportMetric(float64(updateTime.Nanoseconds())/dels, "index-update-wall-ns/delete")
}

// benchKeysAndValue makes n random 16-byte keys, distinct by their
// suffix, and a 100-byte value, half random and half zeros, so values
// compress to about half, as kvbench's.
func benchKeysAndValue(rng *rand.Rand, n int) ([][]byte, []byte) {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, rng.Uint64()), uint64(i))
	}
	val := make([]byte, 100)
	for i := range val[:50] {
		val[i] = byte(rng.Uint32())
	}
	return keys, val
}

// settle waits until d runs no compaction and no index growth twice in a
// row (a compaction may start just after another ends).
func settle(b *testing.B, d *DB) {
	b.Helper()
	for quiet := 0; quiet < 2; {
		time.Sleep(2 * time.Millisecond)
		if d.Metrics().Compaction.InProgress || d.tombstones.isRebuilding() {
			quiet = 0
			continue
		}
		quiet++
	}
}

// BenchmarkTombstoneIndexFirstFlush is the index's whole work for the
// first flush of deletes after a load, the bulk of its cost in
// BenchmarkTombstoneIndexDeleteCPU: addAll of one flush's tombstone hashes
// into the empty index Open made, which then grows in place. CPU-bound
// and single-threaded, so it resolves what the paired benchmark cannot;
// it reports process CPU per tombstone. The hashes are made outside the timer: the
// flush takes them from the table writer (tombstoneCollector).
func BenchmarkTombstoneIndexFirstFlush(b *testing.B) {
	rng := rand.New(rand.NewPCG(19, 5))
	hs := make([]uint64, 30_000) // kvbench -quick's deleterandom flush
	for i := range hs {
		hs[i] = rng.Uint64()
	}
	start := testutil.ProcessCPUTime(b)
	for b.Loop() {
		ti := &tombstoneIndex{on: true}
		ti.mu.Lock()
		if err := ti.fillLocked(nil, tombstoneIndexMinCapacity); err != nil {
			b.Fatal(err)
		}
		ti.mu.Unlock()
		ti.mu.Lock()
		err := ti.addAllLocked(hs, nil, 0)
		ti.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
	// Process CPU, not wall time: the machine's other load must not count.
	spent := testutil.ProcessCPUTime(b) - start
	b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*len(hs)), "cpu-ns/tombstone")
}

// roundsMedian is the middle of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func roundsMedian(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
