package rangedel

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// nested returns n tombstones each inside the one before, the newest
// innermost: fragment i of the 2n-1 is covered by min(i, 2n-2-i)+1 of
// them, so a Set listing every covering sequence number per fragment
// holds n² of them.
func nested(n int) []Tombstone {
	ts := make([]Tombstone, n)
	for i := range ts {
		ts[i] = Tombstone{
			Start: fmt.Appendf(nil, "k%06d", i),
			End:   fmt.Appendf(nil, "k%06d", 2*n-i),
			Seq:   base.SeqNum(i + 1),
		}
	}
	return ts
}

// TestNestedSetMemoryIsNotQuadratic caught 4000 nested DeleteRanges
// costing ~64 MB of fragments, every fragment listing every tombstone
// over it: a Set holds each tombstone's sequence number O(log n) times.
func TestNestedSetMemoryIsNotQuadratic(t *testing.T) {
	const n = 4000
	ts := nested(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewSet(ts)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	// n log2 n sequence numbers twice over, the boundaries and the node
	// offsets: about 2 MB; n² would be 128 MB.
	if limit := uint64(4 << 20); alloc > limit {
		t.Fatalf("NewSet of %d nested tombstones allocated %d bytes; want at most %d", n, alloc, limit)
	}
	if b := s.Bytes(); b <= 0 || uint64(b) > alloc {
		t.Fatalf("Bytes = %d; want a positive figure no larger than what NewSet allocated (%d)", b, alloc)
	}
	// Still the definition's answers (R3).
	for _, i := range []int{0, 1, n / 2, n - 1, n, n + 1, 2*n - 1, 2 * n} {
		key := fmt.Appendf(nil, "k%06d", i)
		for _, rs := range []base.SeqNum{0, 1, n / 3, n - 1, n, base.SeqNumMax} {
			if got, want := s.Cover(key, rs), naiveCover(ts, key, rs); got != want {
				t.Fatalf("Cover(%s, %d) = %d, want %d", key, rs, got, want)
			}
			if got, want := s.CoverAbove(key, rs), naiveCoverAbove(ts, key, rs); got != want {
				t.Fatalf("CoverAbove(%s, %d) = %d, want %d", key, rs, got, want)
			}
		}
	}
}

// TestLargeSetCoverMatchesDefinition: the segment tree over hundreds of
// fragments answers as the definition does, for overlapping, nested and
// duplicate tombstones alike.
func TestLargeSetCoverMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	key := func(i int) []byte { return fmt.Appendf(nil, "%04d", i) }
	for round := range 30 {
		n := 1 + r.IntN(300)
		ts := make([]Tombstone, n)
		for i := range ts {
			a, b := r.IntN(500), r.IntN(500)
			if a > b {
				a, b = b, a
			}
			// a == b leaves an empty range, which covers nothing.
			ts[i] = Tombstone{Start: key(a), End: key(b), Seq: base.SeqNum(1 + r.IntN(2*n))}
		}
		s := NewSet(ts)
		for range 300 {
			k, rs := key(r.IntN(510)), base.SeqNum(r.IntN(2*n+2))
			if got, want := s.Cover(k, rs), naiveCover(ts, k, rs); got != want {
				t.Fatalf("round %d: Cover(%s, %d) = %d, want %d", round, k, rs, got, want)
			}
			if got, want := s.CoverAbove(k, rs), naiveCoverAbove(ts, k, rs); got != want {
				t.Fatalf("round %d: CoverAbove(%s, %d) = %d, want %d", round, k, rs, got, want)
			}
		}
	}
}
