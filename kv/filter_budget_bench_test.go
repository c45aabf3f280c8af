package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// BenchmarkFilterBudgetLiveShape loads 600k random keys through a 1 MiB
// memtable (L0 tables, L5 and L6, no full compaction) under each filter
// configuration at 10 bits per key and reports the data block reads
// (filter false positives) per absent-key Get, the FP rate the filters
// predict for the shape (the sum of the levels' FilterFP: L0 tables left
// by background timing differ between runs, so compare this alongside
// them) and the filter bits per key, side by side (docs/design.md,
// "Filter budget"):
//
//	go test ./kv -run '^$' -bench FilterBudgetLiveShape -benchtime 1x
func BenchmarkFilterBudgetLiveShape(b *testing.B) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"bloom-10", Options{Filter: FilterBloom, BloomBitsPerKey: 10}},
		{"binary-fuse-8", Options{Filter: FilterBinaryFuse8}},
		{"auto-uniform-10", Options{FilterAllocation: FilterAllocationUniform}},
		{"auto-monkey-10", Options{FilterAllocation: FilterAllocationMonkey}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				o := c.o
				o.MemTableSize, o.BlockCacheSize, o.DisableWAL = 1<<20, 1<<20, true
				d := openMemB(b, &o)
				rng := rand.New(rand.NewPCG(1, 2))
				v := make([]byte, 100)
				for range 600_000 {
					for j := range v {
						v[j] = byte(rng.Uint32())
					}
					if err := d.Set([]byte(fmt.Sprintf("%016x0", rng.Uint64())), v, NoSync); err != nil {
						b.Fatal(err)
					}
				}
				if err := d.Flush(); err != nil {
					b.Fatal(err)
				}
				// The shape the fill left, once its compactions end; false
				// positives, not disk reads, so that no compaction read counts.
				for d.Metrics().Compaction.InProgress {
					time.Sleep(20 * time.Millisecond)
				}
				m0 := d.Metrics()
				const gets = 200_000
				for range gets {
					// Keys end in '0'; these end in '1', inside every range.
					if _, err := d.Get([]byte(fmt.Sprintf("%016x1", rng.Uint64()))); err != ErrNotFound {
						b.Fatal(err)
					}
				}
				m1 := d.Metrics()
				var keys uint64
				var predicted float64
				for _, l := range m1.Levels {
					keys += l.FilterKeys
					predicted += l.FilterFP
				}
				b.ReportMetric(predicted, "predicted-fp/absent-get")
				b.ReportMetric(float64(m1.Filter.FalsePositives-m0.Filter.FalsePositives)/gets, "reads/absent-get")
				b.ReportMetric(float64(m1.Filter.Checks-m0.Filter.Checks)/gets, "probes/absent-get")
				b.ReportMetric(bitsPerKey(m1.Filter.Bytes, keys), "filter-bits/key")
				b.ReportMetric(float64(m1.Levels[0].Tables), "L0-tables")
				d.Close()
			}
		})
	}
}

func openMemB(b *testing.B, o *Options) *DB {
	o.FS = vfs.NewMem()
	d, err := Open("db", o)
	if err != nil {
		b.Fatal(err)
	}
	return d
}
