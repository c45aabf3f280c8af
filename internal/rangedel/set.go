package rangedel

import (
	"bytes"
	"slices"
	"sort"

	"github.com/sievekv/sievekv/internal/base"
)

// Set is a list of tombstones fragmented for lookup (R3). The zero Set and
// a nil *Set are empty.
type Set struct {
	frags []fragment
	n     int // tombstones it was built from
}

// fragment is [start, end) with the sequence numbers of every tombstone
// covering all of it, newest first.
type fragment struct {
	start, end []byte
	seqs       []base.SeqNum
}

// NewSet fragments ts (R3). The Set aliases the tombstones' keys; ts itself
// is not modified or kept.
func NewSet(ts []Tombstone) *Set {
	if len(ts) == 0 {
		return &Set{}
	}
	// Every start and end is a fragment boundary; between two adjacent
	// boundaries the covering tombstones do not change.
	bounds := make([][]byte, 0, 2*len(ts))
	for _, t := range ts {
		bounds = append(bounds, t.Start, t.End)
	}
	slices.SortFunc(bounds, bytes.Compare)
	bounds = slices.CompactFunc(bounds, bytes.Equal)
	frags := make([]fragment, len(bounds)-1)
	for i := range frags {
		frags[i] = fragment{start: bounds[i], end: bounds[i+1]}
	}
	for _, t := range ts {
		if bytes.Compare(t.Start, t.End) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(bounds, t.Start, bytes.Compare)
		for ; i < len(frags) && bytes.Compare(frags[i].start, t.End) < 0; i++ {
			frags[i].seqs = append(frags[i].seqs, t.Seq)
		}
	}
	out := frags[:0]
	for _, f := range frags {
		if len(f.seqs) == 0 {
			continue
		}
		slices.SortFunc(f.seqs, func(a, b base.SeqNum) int {
			switch {
			case a > b:
				return -1
			case a < b:
				return 1
			}
			return 0
		})
		out = append(out, f)
	}
	return &Set{frags: out, n: len(ts)}
}

// Empty reports whether the set holds no tombstone.
func (s *Set) Empty() bool { return s == nil || len(s.frags) == 0 }

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
	f := s.fragment(key)
	if f == nil {
		return 0
	}
	for _, seq := range f.seqs {
		if seq <= readSeq {
			return seq
		}
	}
	return 0
}

// Bytes approximates the memory the set holds, for metrics.
func (s *Set) Bytes() int64 {
	if s == nil {
		return 0
	}
	var n int64
	for _, f := range s.frags {
		n += int64(len(f.start)+len(f.end)) + 8*int64(len(f.seqs)) + 72
	}
	return n
}

// CoverAbove returns the smallest sequence number above seq of a tombstone
// covering key, or 0 if none: the oldest tombstone that deletes key#seq
// (R1). Compaction compares its snapshot stripe with the entry's to decide
// whether any read can still see the entry.
func (s *Set) CoverAbove(key []byte, seq base.SeqNum) base.SeqNum {
	f := s.fragment(key)
	if f == nil {
		return 0
	}
	var best base.SeqNum
	for _, t := range f.seqs { // newest first
		if t <= seq {
			break
		}
		best = t
	}
	return best
}

// fragment returns the fragment holding key, or nil.
func (s *Set) fragment(key []byte) *fragment {
	if s.Empty() {
		return nil
	}
	// The last fragment starting at or before key.
	i := sort.Search(len(s.frags), func(i int) bool { return bytes.Compare(s.frags[i].start, key) > 0 }) - 1
	if i < 0 || bytes.Compare(key, s.frags[i].end) >= 0 {
		return nil
	}
	return &s.frags[i]
}
