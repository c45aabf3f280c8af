package compaction

import (
	"bytes"
	"slices"

	"github.com/sievekv/sievekv/internal/base"
)

// Iter filters a sorted stream of internal keys down to the entries an
// output table must keep (C1, C2). It reads its source forward only.
type Iter struct {
	src       base.InternalIterator
	snapshots []base.SeqNum // ascending
	// elide reports whether a tombstone for userKey may be dropped when it
	// is the newest version of the oldest stripe (C2). Nil never elides.
	elide func(userKey []byte) bool

	curKey      []byte // user key of the current run of versions
	lastStripe  int    // stripe of the last version kept or dropped for curKey
	started     bool
	Elided      uint64 // tombstones dropped by C2
	Dropped     uint64 // shadowed versions dropped by C1
	keyBuf      []byte
	positioned  bool
	exhausted   bool
	currentKey  base.InternalKey
	currentVal  []byte
	sourceError error
}

// NewIter returns an Iter over src, which must be positioned by the Iter
// itself (it calls First). snapshots are the sequence numbers of the open
// snapshots, in any order. elide decides C2 for a user key; pass nil when
// the output is not the bottom for any key.
func NewIter(src base.InternalIterator, snapshots []base.SeqNum, elide func(userKey []byte) bool) *Iter {
	s := slices.Clone(snapshots)
	slices.Sort(s)
	return &Iter{src: src, snapshots: slices.Compact(s), elide: elide}
}

// stripe returns the index of the snapshot stripe holding seq (C1).
func (it *Iter) stripe(seq base.SeqNum) int {
	i, _ := slices.BinarySearch(it.snapshots, seq)
	return i
}

// Next advances to the next entry to keep and reports whether there is one.
func (it *Iter) Next() bool {
	var ok bool
	if !it.started {
		it.started = true
		ok = it.src.First()
	} else {
		ok = it.src.Next()
	}
	for ; ok; ok = it.src.Next() {
		k := it.src.Key()
		if !it.positioned || !bytes.Equal(k.UserKey, it.curKey) {
			it.keyBuf = append(it.keyBuf[:0], k.UserKey...)
			it.curKey = it.keyBuf
			it.lastStripe = -1
			it.positioned = true
		}
		s := it.stripe(k.SeqNum())
		if s == it.lastStripe {
			it.Dropped++
			continue
		}
		it.lastStripe = s
		if k.Kind() == base.KindDelete && s == 0 && it.elide != nil && it.elide(k.UserKey) {
			it.Elided++
			continue
		}
		it.currentKey, it.currentVal = k, it.src.Value()
		return true
	}
	it.exhausted = true
	it.sourceError = it.src.Error()
	return false
}

// Key returns the entry Next stopped on; valid until the next call.
func (it *Iter) Key() base.InternalKey { return it.currentKey }

// Value returns the entry's value; valid until the next call.
func (it *Iter) Value() []byte { return it.currentVal }

// Error returns the source's error, if it stopped on one.
func (it *Iter) Error() error {
	if it.sourceError != nil {
		return it.sourceError
	}
	return it.src.Error()
}
