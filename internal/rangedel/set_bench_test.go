package rangedel

import (
	"fmt"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// BenchmarkSetCover times Cover over n tombstones, disjoint (prefix
// deletes of distinct prefixes, the common case) and nested.
func BenchmarkSetCover(b *testing.B) {
	for _, n := range []int{16, 1000} {
		disjoint := make([]Tombstone, n)
		for i := range disjoint {
			disjoint[i] = Tombstone{Start: fmt.Appendf(nil, "k%06d", 2*i), End: fmt.Appendf(nil, "k%06d", 2*i+1), Seq: base.SeqNum(i + 1)}
		}
		for name, ts := range map[string][]Tombstone{"disjoint": disjoint, "nested": nested(n)} {
			s := NewSet(ts)
			keys := make([][]byte, 256)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "k%06d", (i*7919)%(2*n))
			}
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				var sink base.SeqNum
				for i := range b.N {
					sink += s.Cover(keys[i%len(keys)], base.SeqNum(n/2))
				}
				_ = sink
			})
		}
	}
}
