package memtable

import (
	"math"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// TestNewSizedHintOutOfRange: NewSized's hint only sizes the first key
// filter, yet a hint of 1<<40 made it allocate 1.5 TB (a fatal out of
// memory, not even a panic), and math.MaxInt overflowed the word count to
// an empty filter whose first probe indexed out of range. A hint past any
// memtable's size must leave a working memtable of bounded size.
func TestNewSizedHintOutOfRange(t *testing.T) {
	for _, n := range []int{math.MinInt, -1, 1 << 40, math.MaxInt / 12, math.MaxInt} {
		m := NewSized(nil, n)
		if sz := m.ApproximateSize(); sz > 64<<20 {
			t.Fatalf("NewSized(%d): ApproximateSize %d", n, sz)
		}
		m.Set([]byte("k"), 1, []byte("v"))
		if v, _, ok := m.Get([]byte("k"), base.SeqNumMax); !ok || string(v) != "v" {
			t.Fatalf("NewSized(%d): Get %q %v", n, v, ok)
		}
		if _, _, ok := m.Get([]byte("absent"), base.SeqNumMax); ok {
			t.Fatalf("NewSized(%d): found an absent key", n)
		}
		m.Release()
	}
}
