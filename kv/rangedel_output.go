package kv

import (
	"bytes"
	"container/heap"
	"slices"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
)

// rangeDelOutput places range tombstones into the tables writeTables cuts.
// A tombstone goes into the table being written when the point stream
// reaches its start (or into the last table). A table may end inside a
// tombstone: the table ends at a bound b = m+"\x00", the successor of a
// short key m at or above the largest key it holds or a tombstone of it
// starts at and below the next table's first (cutBound), the tombstone is
// split at b (rangedel.SplitAt), and its part from b on is carried into
// the next table. A tombstone [s, m+"\x00") covers no key above m, so the
// table claims only up to m (tombstoneLargest) and the next one, starting
// at b or later, shares no user key with it: tables of a sorted level stay
// disjoint, every key a tombstone covers lies within the bounds of the
// table holding it (K8), and no tombstone, however wide, keeps a
// compaction's output from ending at its target size or its metadata cut.
type rangeDelOutput struct {
	pending []rangedel.Tombstone // sorted by Start; not yet in a table
	// carry holds the parts of the last table's tombstones at or past the
	// bound it ended at; they go first into the next table.
	carry []rangedel.Tombstone
	// Of the table being written:
	added    []rangedel.Tombstone
	maxStart []byte
	// reaching holds the ends of added's tombstones that may still reach
	// past a cut bound, as a min-heap, and reachingEndBytes sums their
	// lengths: what a cut would carry, kept up as the bounds rise (they
	// only rise within a table), so that cutBound costs O(log n)
	// amortized, not a scan of every tombstone at every key.
	reaching         endHeap
	reachingEndBytes uint64
	// addedBytes is added's tombstones as MetadataSize counts them, and
	// carriedInBytes the part of it carried in from the last table.
	addedBytes, carriedInBytes uint64
}

// endHeap is a min-heap of tombstone ends (container/heap).
type endHeap [][]byte

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return bytes.Compare(h[i], h[j]) < 0 }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.([]byte)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// newRangeDelOutput coalesces ts first: the pieces of a tombstone that
// earlier outputs split, meeting again in one compaction, become one, so
// cuts do not accumulate as fragments over the compactions a snapshot or
// a level above the bottom keeps a tombstone through (a review: 40 wide
// range deletions grew to 157 fragments a table in eight compactions).
func newRangeDelOutput(ts []rangedel.Tombstone) *rangeDelOutput {
	return &rangeDelOutput{pending: rangedel.Coalesce(slices.Clone(ts))}
}

// addStartingBy adds every carried tombstone and every pending one
// starting at or before userKey, each to the writer into gives it.
func (o *rangeDelOutput) addStartingBy(into tombstoneWriter, userKey []byte) error {
	return o.addWhile(into, func(t rangedel.Tombstone) bool { return bytes.Compare(t.Start, userKey) <= 0 })
}

// addRest adds every tombstone left: those past the last point.
func (o *rangeDelOutput) addRest(into tombstoneWriter) error {
	return o.addWhile(into, func(rangedel.Tombstone) bool { return true })
}

// tombstoneWriter returns the writer tombstone t goes into: the table
// being written, or a new one (writeTables may end a table before t,
// which calls endAt and finishTable).
type tombstoneWriter func(t rangedel.Tombstone) (*sstable.Writer, error)

func (o *rangeDelOutput) addWhile(into tombstoneWriter, ok func(rangedel.Tombstone) bool) error {
	for {
		var t rangedel.Tombstone
		carried := false
		// Taken off its list before into runs, which may end the table
		// and fill carry anew.
		switch {
		case len(o.carry) > 0:
			t, o.carry, carried = o.carry[0], o.carry[1:], true
		case len(o.pending) > 0 && ok(o.pending[0]):
			t, o.pending = o.pending[0], o.pending[1:]
		default:
			return nil
		}
		w, err := into(t)
		if err != nil {
			return err
		}
		if err := w.AddRangeDel(t); err != nil {
			return err
		}
		o.added = append(o.added, t)
		o.addedBytes += sstable.RangeDelSize(t)
		if carried {
			o.carriedInBytes += sstable.RangeDelSize(t)
		}
		heap.Push(&o.reaching, t.End)
		o.reachingEndBytes += uint64(len(t.End))
		if len(o.added) == 1 || bytes.Compare(t.Start, o.maxStart) > 0 {
			o.maxStart = t.Start
		}
	}
}

// cutBound returns where the table being written may end so that the next
// one can begin at next: the successor m+"\x00" of a key m the table may
// claim, lastPoint being its last point's user key (nil if it has none).
// m lies at or above the largest key the table holds or a tombstone of it
// starts at, and below next and every tombstone not yet placed (they go
// into the next table), and is as short as that allows
// (base.ShortSeparator): both pieces of every tombstone split there hold
// the bound, so a bound as long as the keys (u+"\x00", u the table's
// last key) made each of n split tombstones cost two keys' bytes in every
// table a cut started (a third review: 40 short range deletions over
// 2000-byte keys became 160 KB of range deletions a table, 10x the
// metadata cut; with 1 MiB keys, a block past what a reader accepts).
//
// ok is false when no such m exists, when the table holds nothing, or when
// what the cut would add to the tombstones (the pieces carried into the
// next table, and the bound the pieces left behind end at) comes to more
// than the table wrote of its own
// (written, its data blocks and index, plus the tombstones it did not
// carry in): tombstones that all reach far (nested starts, one end) are
// carried whole into every table a cut starts, so cutting among them,
// table after table, would write their bytes quadratically often and
// shrink no block (a review: 200 such range deletions became 19,635
// fragments in 170 tables). Weighed against the table's own bytes, not a
// fixed share of the metadata cut, the rule lets a table of long keys end
// at the cut however few tombstones it carries (a second review: a fixed
// half-cut refused it, and the index grew past the reader's limit again),
// and bounds the tombstone bytes all tables carry by what they wrote
// besides.
func (o *rangeDelOutput) cutBound(lastPoint, next []byte, written uint64) (bound []byte, ok bool) {
	high := lastPoint
	if len(o.added) > 0 && (high == nil || bytes.Compare(o.maxStart, high) > 0) {
		high = o.maxStart
	}
	if high == nil && len(o.added) == 0 {
		return nil, false
	}
	limit := next
	for _, ts := range [][]rangedel.Tombstone{o.carry, o.pending} {
		if len(ts) > 0 && bytes.Compare(ts[0].Start, limit) < 0 {
			limit = ts[0].Start
		}
	}
	if bytes.Compare(high, limit) >= 0 {
		return nil, false
	}
	// Clipped: ShortSeparator returns high itself when nothing shorter
	// lies below limit, and the 0x00 must not land in its caller's array.
	bound = append(slices.Clip(base.ShortSeparator(high, limit)), 0)
	for o.reaching.Len() > 0 && bytes.Compare(o.reaching[0], bound) <= 0 {
		o.reachingEndBytes -= uint64(len(heap.Pop(&o.reaching).([]byte)))
	}
	// The carried pieces [bound, end), as MetadataSize counts them, and
	// the bound the pieces left behind end at.
	n := uint64(o.reaching.Len())
	added := n*sstable.RangeDelSize(rangedel.Tombstone{Start: bound}) + o.reachingEndBytes + n*uint64(len(bound))
	if own := written + o.addedBytes - o.carriedInBytes; added > own {
		return nil, false
	}
	return bound, true
}

// endAt ends the table's tombstones at bound, which cutBound gave: their
// parts below it stay in the table (w), the rest is carried into the next.
func (o *rangeDelOutput) endAt(w *sstable.Writer, bound []byte) {
	o.carry = w.SplitRangeDels(bound)
	o.added, _ = rangedel.SplitAt(o.added, bound)
}

// finishTable widens the finished table's bounds to its tombstones and
// starts the next table: each tombstone t makes the smallest key at most
// (t.Start, t.Seq, KindRangeDelete) and the largest at least
// tombstoneLargest(t).
func (o *rangeDelOutput) finishTable(m *manifest.TableMetadata) {
	points := m.Entries() > 0
	for i, t := range o.added {
		lo := base.MakeInternalKey(bytes.Clone(t.Start), t.Seq, base.KindRangeDelete)
		hi := tombstoneLargest(t)
		hi.UserKey = bytes.Clone(hi.UserKey)
		if (!points && i == 0) || base.Compare(lo, m.Smallest) < 0 {
			m.Smallest = lo
		}
		if (!points && i == 0) || base.Compare(hi, m.Largest) > 0 {
			m.Largest = hi
		}
	}
	o.added, o.maxStart = o.added[:0], nil
	o.reaching, o.reachingEndBytes = o.reaching[:0], 0
	o.addedBytes, o.carriedInBytes = 0, 0
}

// tombstoneLargest is the largest internal key a table holding t must
// claim. Bounds are inclusive, so for [s, e) it is (e, TrailerMax), the
// smallest internal key of e: the table claims e too, which costs a Get of
// e one wasted probe and nothing more. But when e is u+"\x00", the
// successor of u, t covers no key above u, and the table claims only u,
// up to u's largest internal key (sequence number 0): that is what lets a
// table end inside a tombstone (rangeDelOutput) and the next begin at e.
func tombstoneLargest(t rangedel.Tombstone) base.InternalKey {
	if n := len(t.End); n > 0 && t.End[n-1] == 0 {
		return base.InternalKey{UserKey: t.End[:n-1], Trailer: 0}
	}
	return base.InternalKey{UserKey: t.End, Trailer: base.TrailerMax}
}
