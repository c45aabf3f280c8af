package rangedel

import (
	"bytes"
	"slices"

	"github.com/sievekv/sievekv/internal/base"
)

// Set is a list of tombstones fragmented for lookup (R3). The zero Set and
// a nil *Set are empty.
//
// Every start and end is a fragment boundary; between two adjacent
// boundaries the covering tombstones do not change. Listing each
// fragment's covering sequence numbers would cost n² of them for n nested
// tombstones (users who delete ever narrower ranges), so they are kept in
// a segment tree over the fragments instead: a tombstone spanning
// fragments [l, r) is listed at the O(log n) nodes that tile [l, r), and
// the tombstones covering fragment i are those listed on the path from
// leaf i to the root. O(n log n) sequence numbers, O(log² n) per lookup.
type Set struct {
	// bounds are the distinct boundaries, ascending; fragment i is
	// [bounds[i], bounds[i+1]).
	bounds [][]byte
	// leaves is a power of two at least len(bounds)-1: node 1 is the root,
	// node k's children are 2k and 2k+1, fragment i's leaf is leaves+i.
	leaves int
	// Node k lists seqs[off[k]:off[k+1]], newest first.
	off  []int32
	seqs []base.SeqNum
	// up[k] is the nearest of node k and its ancestors that lists any,
	// 0 if none: a lookup visits only those, usually one or two when the
	// tombstones barely overlap.
	up   []int32
	n    int // tombstones it was built from
	live int // of which with Start < End
}

// NewSet fragments ts (R3). The Set aliases the tombstones' keys; ts itself
// is not modified or kept.
func NewSet(ts []Tombstone) *Set {
	s := &Set{n: len(ts)}
	// Newest first, so each node's list comes out newest first.
	var order []int
	for i, t := range ts {
		if bytes.Compare(t.Start, t.End) < 0 {
			order = append(order, i)
		}
	}
	s.live = len(order)
	if s.live == 0 {
		return s
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ts[a].Seq > ts[b].Seq:
			return -1
		case ts[a].Seq < ts[b].Seq:
			return 1
		}
		return 0
	})
	bounds := make([][]byte, 0, 2*len(order))
	for _, i := range order {
		bounds = append(bounds, ts[i].Start, ts[i].End)
	}
	slices.SortFunc(bounds, bytes.Compare)
	s.bounds = slices.Clip(slices.CompactFunc(bounds, bytes.Equal))
	s.leaves = 1
	for s.leaves < len(s.bounds)-1 {
		s.leaves *= 2
	}
	// Two passes over the canonical nodes: count, then place.
	span := func(t Tombstone) (int, int) {
		l, _ := slices.BinarySearchFunc(s.bounds, t.Start, bytes.Compare)
		r, _ := slices.BinarySearchFunc(s.bounds, t.End, bytes.Compare)
		return l, r
	}
	count := make([]int32, 2*s.leaves+1)
	for _, i := range order {
		l, r := span(ts[i])
		s.tile(l, r, func(k int) { count[k+1]++ })
	}
	for k := 1; k < len(count); k++ {
		count[k] += count[k-1]
	}
	s.off = count
	s.seqs = make([]base.SeqNum, count[len(count)-1])
	next := slices.Clone(count[:len(count)-1])
	for _, i := range order {
		l, r := span(ts[i])
		s.tile(l, r, func(k int) {
			s.seqs[next[k]] = ts[i].Seq
			next[k]++
		})
	}
	s.up = make([]int32, 2*s.leaves)
	for k := 1; k < len(s.up); k++ {
		if s.off[k] < s.off[k+1] {
			s.up[k] = int32(k)
		} else {
			s.up[k] = s.up[k/2]
		}
	}
	return s
}

// tile calls visit with each node of the fewest whose leaves are exactly
// fragments [l, r).
func (s *Set) tile(l, r int, visit func(node int)) {
	for lo, hi := l+s.leaves, r+s.leaves; lo < hi; lo, hi = lo/2, hi/2 {
		if lo%2 == 1 {
			visit(lo)
			lo++
		}
		if hi%2 == 1 {
			hi--
			visit(hi)
		}
	}
}

// Empty reports whether the set holds no tombstone.
func (s *Set) Empty() bool { return s == nil || s.live == 0 }

// Len is the number of tombstones the set was built from.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Cover returns the largest sequence number at or below readSeq of a
// tombstone covering key, or 0 if none (R3). The entry key#p is deleted
// for a read at readSeq exactly when p < Cover(key, readSeq) (R1).
func (s *Set) Cover(key []byte, readSeq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for k := s.leaf(key); k != 0; k = s.up[k/2] {
		list := s.seqs[s.off[k]:s.off[k+1]]
		// The first at or below readSeq is the node's newest visible one.
		if j := firstAtOrBelow(list, readSeq); j < len(list) {
			best = max(best, list[j])
		}
	}
	return best
}

// CoverAbove returns the smallest sequence number above seq of a tombstone
// covering key, or 0 if none: the oldest tombstone that deletes key#seq
// (R1). Compaction compares its snapshot stripe with the entry's to decide
// whether any read can still see the entry.
func (s *Set) CoverAbove(key []byte, seq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for k := s.leaf(key); k != 0; k = s.up[k/2] {
		list := s.seqs[s.off[k]:s.off[k+1]]
		// The one before the first at or below seq is the node's oldest
		// above it.
		if j := firstAtOrBelow(list, seq); j > 0 && (best == 0 || list[j-1] < best) {
			best = list[j-1]
		}
	}
	return best
}

// firstAtOrBelow is the index of the first of list (newest first) at or
// below seq, len(list) if none.
func firstAtOrBelow(list []base.SeqNum, seq base.SeqNum) int {
	lo, hi := 0, len(list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if list[m] <= seq {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// leaf is the nearest node listing any tombstone on the path from the
// leaf of the fragment holding key to the root: the first of the nodes
// whose lists together hold every tombstone covering key. 0 if none.
func (s *Set) leaf(key []byte) int32 {
	if s.Empty() {
		return 0
	}
	// The last fragment starting at or before key.
	lo, hi := 0, len(s.bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(s.bounds[m], key) > 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	i := lo - 1
	if i < 0 || i >= len(s.bounds)-1 {
		return 0
	}
	return s.up[i+s.leaves]
}

// Bytes approximates the memory the set holds, for metrics and memtable
// accounting: the boundaries (their keys included, though aliased, as the
// tombstones they came from are the set's to keep alive), the node
// offsets and the sequence numbers.
func (s *Set) Bytes() int64 {
	if s == nil {
		return 0
	}
	n := int64(64)
	for _, b := range s.bounds {
		n += int64(len(b)) + 24
	}
	return n + 4*int64(len(s.off)+len(s.up)) + 8*int64(len(s.seqs))
}
