package sstable

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/testutil"
)

// BenchmarkBuildRangeFilter builds the same 100k-entry table without and
// with a 16 bits/key range filter, on the default point filter, one after
// the other in each round (alternating which goes first), so both see the
// same machine load; separate sub-benchmarks on a shared machine do not.
// It reports each build's process CPU time (testutil.ProcessCPUTime), the
// median of the rounds' ratios and the ratio of the totals: the range
// filter's build cost (goal: <= 1.3x, docs/design.md, "Range filters"). Keys are made before the clock starts, as a flush or a
// compaction has them already: "bench" is the other benchmarks' binary
// counter keys, "ids" user%08d ids in runs and holes (both stored exactly),
// "sparse" ids spread over 10^10 (hashed).
func BenchmarkBuildRangeFilter(b *testing.B) {
	vals := benchValues()
	shapes := []struct {
		name string
		key  func(i int) []byte
	}{
		{"bench", benchKey},
		{"ids", func(i int) []byte { return fmt.Appendf(nil, "user%08d", i*2+(i/50)*700) }},
		{"sparse", func(i int) []byte { return fmt.Appendf(nil, "user%010d", i*50000+int(uint32(i)*2654435761%50000)) }},
	}
	for _, shape := range shapes {
		keys := make([]base.InternalKey, len(vals))
		for i := range keys {
			keys[i] = base.MakeInternalKey(shape.key(i), base.SeqNum(i+1), base.KindSet)
		}
		build := func(b *testing.B, bits float64) time.Duration {
			start := testutil.ProcessCPUTime(b)
			w := NewWriter(&discardFile{}, WriterOptions{RangeFilterBitsPerKey: bits})
			for i, v := range vals {
				if err := w.Add(keys[i], v); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
			return testutil.ProcessCPUTime(b) - start
		}
		b.Run(shape.name, func(b *testing.B) {
			b.SetBytes(2 * benchRawBytes)
			var plain, withRange time.Duration
			var ratios []float64
			for i := 0; b.Loop(); i++ {
				var p, r time.Duration
				if i%2 == 0 {
					p = build(b, 0)
					r = build(b, 16)
				} else {
					r = build(b, 16)
					p = build(b, 0)
				}
				plain += p
				withRange += r
				ratios = append(ratios, float64(r)/float64(max(p, 1)))
			}
			slices.Sort(ratios)
			b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "plain-cpu-ns/build")
			b.ReportMetric(float64(withRange.Nanoseconds())/float64(b.N), "range16-cpu-ns/build")
			b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
			b.ReportMetric(float64(withRange)/float64(plain), "ratio-total")
		})
	}
}
