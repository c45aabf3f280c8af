package rangedel

import "bytes"

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
