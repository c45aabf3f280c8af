package kv

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/vfs"
)

// BenchmarkRangeFilterScan runs kvbench's scanshort and scanempty on two
// DBs holding the same user%08d ids in runs and holes, one without range
// filters and one at 16 bits per key. "layered": most ids in the bottom
// level, the rest in three L0 tables that span the whole key range, and a
// 1 MiB block cache. "cached": every id in the bottom level and every
// block in the cache, where a range filter can save no read and its check
// is pure cost. Each round scans a chunk of
// ranges on one DB then the same chunk on the other, alternating which goes
// first, and charges each its process CPU time, so both see the same
// machine load. It reports each side's time per scan, their ratio (with
// range filters / without: the goal for short scans is <= 1.05, ops/s
// within 5%) and data-block reads per scan (the goal for empty ones is <=
// 0.05 with range filters; docs/design.md, "Range filters").
func BenchmarkRangeFilterScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(22, 40))
	var ids []int
	for id := 0; len(ids) < 100_000; {
		for end := id + 1 + rng.IntN(500); id < end; id++ {
			if rng.IntN(2) == 0 {
				ids = append(ids, id)
			}
		}
		id += 1 + rng.IntN(1000)
	}
	span := ids[len(ids)-1] + 1
	anyIn := func(lo, hi int) bool {
		i, _ := slices.BinarySearch(ids, lo)
		return i < len(ids) && ids[i] < hi
	}
	widths := []int{1, 9, 180, 400}
	for _, layout := range []struct {
		name    string
		layered bool
		empty   []bool
	}{{"layered", true, []bool{false, true}}, {"cached", false, []bool{false}}} {
		dbs := [2]*DB{}
		for side, bits := range []float64{0, 16} {
			dbs[side] = rangeBenchDB(b, ids, bits, layout.layered)
			defer dbs[side].Close()
		}
		for _, empty := range layout.empty {
			name := layout.name + "/short"
			if empty {
				name = layout.name + "/empty"
			}
			// The ranges kvbench's scan workloads ask: a key and widths of 1
			// to 400 ids (short), or widths holding no key (empty).
			var ranges [][2][]byte
			for len(ranges) < 4096 {
				w := widths[len(ranges)%len(widths)]
				lo := rng.IntN(span)
				if !empty {
					lo = ids[rng.IntN(len(ids))]
				}
				if anyIn(lo, lo+w) != empty {
					ranges = append(ranges, [2][]byte{idKey(lo), idKey(lo + w)})
				}
			}
			scan := func(b *testing.B, d *DB, rs [][2][]byte) {
				for _, r := range rs {
					it := d.NewIter(&IterOptions{LowerBound: r[0], UpperBound: r[1]})
					n := 0
					for ok := it.First(); ok && n < 100; ok = it.Next() {
						n++
					}
					if err := it.Close(); err != nil {
						b.Fatal(err)
					}
					if (n == 0) != empty {
						b.Fatalf("scan [%s, %s) found %d keys", r[0], r[1], n)
					}
				}
			}
			b.Run(name, func(b *testing.B) {
				const chunk = 64
				var spent [2]time.Duration
				var reads [2]uint64
				checksBefore := dbs[1].Metrics().Filter.RangeChecks
				for i := 0; b.Loop(); i++ {
					rs := ranges[(i*chunk)%len(ranges):][:chunk]
					for k := range 2 {
						side := (i + k) % 2
						d := dbs[side]
						before := d.Metrics().DiskReads.DataBlocks
						start := testutil.ProcessCPUTime(b)
						scan(b, d, rs)
						spent[side] += testutil.ProcessCPUTime(b) - start
						reads[side] += d.Metrics().DiskReads.DataBlocks - before
					}
				}
				scans := float64(b.N * chunk)
				b.ReportMetric(float64(spent[0].Nanoseconds())/scans, "plain-cpu-ns/scan")
				b.ReportMetric(float64(spent[1].Nanoseconds())/scans, "range16-cpu-ns/scan")
				b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
				b.ReportMetric(float64(reads[0])/scans, "plain-reads/scan")
				b.ReportMetric(float64(reads[1])/scans, "range16-reads/scan")
				b.ReportMetric(float64(dbs[1].Metrics().Filter.RangeChecks-checksBefore)/scans, "range-checks/scan")
			})
		}
	}
}

// rangeBenchDB opens a DB of ids at bits bits per key of range filter:
// layered as BenchmarkRangeFilterScan describes, or all in the bottom level
// with a cache holding every block (warmed by one scan of everything).
func rangeBenchDB(b *testing.B, ids []int, bits float64, layered bool) *DB {
	cache := int64(1 << 20)
	if !layered {
		cache = 64 << 20
	}
	d, err := Open("db", &Options{FS: vfs.NewMem(), RangeFilterBitsPerKey: bits, BlockCacheSize: cache,
		DisableWAL: true, DisableAutomaticCompactions: true})
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 100)
	parts := 1
	if layered {
		parts = 4
	}
	// Layered: 70% of ids compacted to the bottom level, the rest flushed
	// into three L0 tables.
	for part := 0; part < parts; part++ {
		for _, id := range ids {
			p := int(uint32(id)*2654435761>>24) % 10
			if !layered || (part == 0 && p < 7) || (part > 0 && p == 6+part) {
				if err := d.Set(idKey(id), val, NoSync); err != nil {
					b.Fatal(err)
				}
			}
		}
		if part == 0 {
			err = d.Compact(nil, nil)
		} else {
			err = d.Flush()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if !layered {
		it := d.NewIter(nil)
		for ok := it.First(); ok; ok = it.Next() {
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return d
}
