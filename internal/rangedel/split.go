package rangedel

import (
	"bytes"
	"cmp"
	"slices"
)

// SplitAt splits ts at user key k: before keeps, in ts's own backing
// array, each tombstone's part below k, and after holds each part at or
// above k. A tombstone lying across k becomes two fragments with its
// sequence number, [Start, k) and [k, End): together they delete exactly
// what it deleted (R1), so a table may end at k with the first and the
// next table begin with the second. The fragments alias k and ts's keys.
func SplitAt(ts []Tombstone, k []byte) (before, after []Tombstone) {
	before = ts[:0]
	for _, t := range ts {
		switch {
		case bytes.Compare(t.End, k) <= 0:
			before = append(before, t)
		case bytes.Compare(t.Start, k) >= 0:
			after = append(after, t)
		default:
			before = append(before, Tombstone{Start: t.Start, End: k, Seq: t.Seq})
			after = append(after, Tombstone{Start: k, End: t.End, Seq: t.Seq})
		}
	}
	return before, after
}

// Coalesce joins the tombstones of one sequence number that overlap or
// meet end to start into one, so that a tombstone split at table
// boundaries (SplitAt) is whole again once a compaction takes its pieces
// together: each cut would otherwise stay a fragment boundary for good,
// and every later cut add one more. The result deletes exactly what ts did
// (R1), holds no two tombstones of one sequence number that touch, and is
// sorted by Compare; ts is reordered, and the keys are aliased.
func Coalesce(ts []Tombstone) []Tombstone {
	if len(ts) < 2 {
		return ts
	}
	slices.SortFunc(ts, func(a, b Tombstone) int {
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return bytes.Compare(a.Start, b.Start)
	})
	out := ts[:1]
	for _, t := range ts[1:] {
		last := &out[len(out)-1]
		if t.Seq == last.Seq && bytes.Compare(t.Start, last.End) <= 0 {
			if bytes.Compare(t.End, last.End) > 0 {
				last.End = t.End
			}
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, Compare)
	return out
}
