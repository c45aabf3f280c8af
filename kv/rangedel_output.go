package kv

import (
	"bytes"
	"slices"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
)

// rangeDelOutput places range tombstones into the tables writeTables cuts.
// A tombstone is never split: it goes, whole, into the table being written
// when the point stream reaches its start (or into the last table), and a
// table is not cut before a key while a tombstone it holds reaches that
// key. So a table's bounds, widened to its tombstones, cover every point
// of every tombstone's range the output holds, tables of a sorted level
// stay disjoint, and K8 holds for the outputs.
type rangeDelOutput struct {
	pending []rangedel.Tombstone // sorted by Start; not yet in a table
	// Of the table being written:
	added    []rangedel.Tombstone
	maxEnd   []byte
	hasAdded bool
}

func newRangeDelOutput(ts []rangedel.Tombstone) *rangeDelOutput {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, rangedel.Compare)
	return &rangeDelOutput{pending: ts}
}

// addStartingBy adds every pending tombstone starting at or before
// userKey, each to the writer into gives it.
func (o *rangeDelOutput) addStartingBy(into tombstoneWriter, userKey []byte) error {
	return o.addWhile(into, func(t rangedel.Tombstone) bool { return bytes.Compare(t.Start, userKey) <= 0 })
}

// addRest adds every pending tombstone: those past the last point.
func (o *rangeDelOutput) addRest(into tombstoneWriter) error {
	return o.addWhile(into, func(rangedel.Tombstone) bool { return true })
}

// tombstoneWriter returns the writer tombstone t goes into: the table
// being written, or a new one (writeTables may end a table between two
// tombstones, which calls finishTable).
type tombstoneWriter func(t rangedel.Tombstone) (*sstable.Writer, error)

func (o *rangeDelOutput) addWhile(into tombstoneWriter, ok func(rangedel.Tombstone) bool) error {
	for len(o.pending) > 0 && ok(o.pending[0]) {
		t := o.pending[0]
		w, err := into(t)
		if err != nil {
			return err
		}
		if err := w.AddRangeDel(t); err != nil {
			return err
		}
		o.pending = o.pending[1:]
		o.added = append(o.added, t)
		if !o.hasAdded || bytes.Compare(t.End, o.maxEnd) > 0 {
			o.maxEnd = t.End
		}
		o.hasAdded = true
	}
	return nil
}

// canSplitBefore reports whether the table being written may end before
// userKey: none of its tombstones reaches userKey, so the table's widened
// largest key stays below the next table's smallest.
func (o *rangeDelOutput) canSplitBefore(userKey []byte) bool {
	return !o.hasAdded || bytes.Compare(o.maxEnd, userKey) < 0
}

// finishTable widens the finished table's bounds to its tombstones and
// starts the next table. A tombstone [s, e)#t makes the smallest key at
// most (s, t, KindRangeDelete) and the largest at least (e, TrailerMax),
// the smallest internal key of e: bounds are inclusive, so the table
// claims e too, which costs a Get of e one wasted probe and nothing more.
func (o *rangeDelOutput) finishTable(m *manifest.TableMetadata) {
	points := m.Entries() > 0
	for i, t := range o.added {
		lo := base.MakeInternalKey(bytes.Clone(t.Start), t.Seq, base.KindRangeDelete)
		hi := base.InternalKey{UserKey: bytes.Clone(t.End), Trailer: base.TrailerMax}
		if (!points && i == 0) || base.Compare(lo, m.Smallest) < 0 {
			m.Smallest = lo
		}
		if (!points && i == 0) || base.Compare(hi, m.Largest) > 0 {
			m.Largest = hi
		}
	}
	o.added, o.maxEnd, o.hasAdded = o.added[:0], nil, false
}
