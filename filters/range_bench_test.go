package filters

import (
	"encoding/binary"
	"testing"
)

// BenchmarkRangeBuild builds a range filter of 100k sorted keys shaped as
// sstable's benchmark keys ("bench-" and a big-endian counter): the range
// filter's share of a table build.
func BenchmarkRangeBuild(b *testing.B) {
	keys := make([][]byte, 100_000)
	for i := range keys {
		k := make([]byte, 16)
		copy(k, "bench-")
		binary.BigEndian.PutUint64(k[8:], uint64(i)*2)
		keys[i] = k
	}
	rb, _ := NewRangeBuilder(16)
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range keys {
			rb.Add(k)
		}
		if _, err := rb.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}
