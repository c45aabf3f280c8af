package filters

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
)

// BenchmarkRangeBuild builds a range filter of 100k sorted keys, the range
// filter's share of a table build, on the key shapes of sstable's
// BenchmarkBuildRangeFilter: "bench" ("bench-" and a big-endian counter),
// "ids" (user%08d in runs and holes, exact mode) and "sparse" (user%010d
// over 10^10, hashed mode). It reports process CPU time per build beside
// wall time, which on a shared machine measures the load.
func BenchmarkRangeBuild(b *testing.B) {
	shapes := []struct {
		name string
		key  func(i int) []byte
	}{
		{"bench", func(i int) []byte {
			k := make([]byte, 16)
			copy(k, "bench-")
			binary.BigEndian.PutUint64(k[8:], uint64(i)*2)
			return k
		}},
		{"ids", func(i int) []byte { return fmt.Appendf(nil, "user%08d", i*2+(i/50)*700) }},
		{"sparse", func(i int) []byte { return fmt.Appendf(nil, "user%010d", i*50000+int(uint32(i)*2654435761%50000)) }},
	}
	for _, shape := range shapes {
		keys := make([][]byte, 100_000)
		for i := range keys {
			keys[i] = shape.key(i)
		}
		b.Run(shape.name, func(b *testing.B) {
			rb, _ := NewRangeBuilder(16)
			b.ReportAllocs()
			start := testutil.ProcessCPUTime(b)
			for b.Loop() {
				for _, k := range keys {
					rb.Add(k)
				}
				if _, err := rb.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, not wall time: the machine is shared.
			b.ReportMetric(float64((testutil.ProcessCPUTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
