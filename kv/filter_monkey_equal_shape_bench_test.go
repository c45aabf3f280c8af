package kv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// equalShapeResult is what one fill of fillEqualShape measured.
type equalShapeResult struct {
	reads, predicted, bitsPerKey float64
	shape                        string
	// l0Tables and l0FP: L0's tables and the FP sum their filters predict.
	l0Tables int
	l0FP     float64
	// compactedReads and compactedPredicted are the same once a full
	// compaction has left one run.
	compactedReads, compactedPredicted float64
}

// predictedFP is the FP sum the filters of m's levels predict for an
// absent-key Get.
func predictedFP(m *Metrics) float64 {
	var fp float64
	for _, l := range m.Levels {
		fp += l.FilterFP
	}
	return fp
}

// fillEqualShape loads keys random keys in flushes of flushKeys, running
// the due compactions after each, then flushes l0Left more without
// compacting (the L0 tables a live tree holds between compactions), and
// measures gets absent-key Gets on that shape: the data block reads
// (filter false positives) per Get, the FP sum the filters predict, and
// the filter bits per key. Every flush and compaction runs on the
// caller's goroutine, so the shape depends on the keys, not on timing.
func fillEqualShape(tb testing.TB, o Options, seed uint64, keys, flushKeys, l0Left, gets int) equalShapeResult {
	o.FS = vfs.NewMem()
	o.DisableAutomaticCompactions, o.DisableWAL = true, true
	o.MemTableSize, o.TargetFileSize, o.BlockCacheSize = 64<<20, 128<<10, 1<<20
	if o.LBaseMaxBytes == 0 {
		o.LBaseMaxBytes = 2 << 20 // 250k keys then fill L4, L5 and L6
	}
	d, err := Open("db", &o)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(seed, 20))
	v := make([]byte, 100)
	total := keys + l0Left*flushKeys
	for i := 1; i <= total; i++ {
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		if err := d.Set([]byte(fmt.Sprintf("%016x0", rng.Uint64())), v, NoSync); err != nil {
			tb.Fatal(err)
		}
		if i%flushKeys != 0 {
			continue
		}
		if err := d.Flush(); err != nil {
			tb.Fatal(err)
		}
		if i <= keys {
			if err := d.CompactDue(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	readsPerGet := func() float64 {
		m0 := d.Metrics()
		for range gets {
			// Keys end in '0'; these end in '1', inside every table's range.
			if _, err := d.Get([]byte(fmt.Sprintf("%016x1", rng.Uint64()))); err != ErrNotFound {
				tb.Fatal(err)
			}
		}
		return float64(d.Metrics().Filter.FalsePositives-m0.Filter.FalsePositives) / float64(gets)
	}
	var r equalShapeResult
	r.reads = readsPerGet()
	m1 := d.Metrics()
	var filterKeys uint64
	for l, lm := range m1.Levels {
		filterKeys += lm.FilterKeys
		r.predicted += lm.FilterFP
		if lm.Tables > 0 {
			r.shape += fmt.Sprintf(" L%d:%dt/%dk@%.1fb", l, lm.Tables, lm.FilterKeys/1000, lm.FilterBitsPerKey())
		}
	}
	r.bitsPerKey = bitsPerKey(m1.Filter.Bytes, filterKeys)
	r.l0Tables, r.l0FP = m1.Levels[0].Tables, m1.Levels[0].FilterFP
	if err := d.Compact(nil, nil); err != nil {
		tb.Fatal(err)
	}
	r.compactedReads = readsPerGet()
	m2 := d.Metrics()
	r.compactedPredicted = predictedFP(&m2)
	return r
}

// BenchmarkFilterMonkeyEqualShape compares Monkey with uniform allocation
// at 10 bits per key on the same multi-level tree: 250k random keys in
// flushes of 1,040 (the tables a 256 KiB memtable makes), the due
// compactions run after each, and six more flushes left in L0, built with
// no background work so both allocations get the same shape. Each
// allocation runs over three seeds and reports medians; Monkey's reads
// against uniform's is the Monkey goal of docs/design.md, "Filter budget":
//
//	go test ./kv -run '^$' -bench FilterMonkeyEqualShape -benchtime 1x -v
func BenchmarkFilterMonkeyEqualShape(b *testing.B) {
	seeds := []uint64{1, 2, 3}
	for _, c := range []struct {
		name  string
		alloc FilterAllocation
	}{
		{"auto-uniform-10", FilterAllocationUniform},
		{"auto-monkey-10", FilterAllocationMonkey},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				var reads, predicted, bits, compacted []float64
				for _, seed := range seeds {
					r := fillEqualShape(b, Options{FilterAllocation: c.alloc}, seed, 250_000, 1040, 6, 100_000)
					b.Logf("seed %d: %.5f reads/absent-get, %.5f predicted, %.2f bits/key,%s; compacted %.5f", seed,
						r.reads, r.predicted, r.bitsPerKey, r.shape, r.compactedReads)
					reads, predicted, bits = append(reads, r.reads), append(predicted, r.predicted), append(bits, r.bitsPerKey)
					compacted = append(compacted, r.compactedReads)
				}
				b.ReportMetric(median(reads), "reads/absent-get")
				b.ReportMetric(median(predicted), "predicted-fp/absent-get")
				b.ReportMetric(median(bits), "filter-bits/key")
				b.ReportMetric(median(compacted), "compacted-reads/absent-get")
			}
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
