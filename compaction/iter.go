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

	// OnDropTombstone, if set, is called with the user key of every
	// tombstone the Iter drops (by C1 or C2); the engine's tombstone index
	// removes them.
	OnDropTombstone func(userKey []byte)

	// ZeroSeqNums, set only when the output is the bottom of the tree for
	// every key (nothing lies below it), writes every kept Set of the
	// oldest stripe with sequence number 0 (C4): at the bottom no reader
	// can tell it from its real number, and a run of equal trailers
	// compresses to almost nothing in a data block.
	ZeroSeqNums bool

	// Shadowed, if set, is asked about the first Set the Iter would keep
	// for each user key: k and its value, and top, the newest sequence
	// number of k's snapshot stripe (the stripe's snapshot, or SeqNumMax
	// in the newest stripe). It reports whether an entry of k with a
	// sequence number in (k.SeqNum(), top], outside the Iter's source,
	// will outlive the output; the Iter then drops k (C5).
	Shadowed func(k base.InternalKey, value []byte, top base.SeqNum) bool

	curKey     []byte // user key of the current run of versions
	lastStripe int    // stripe of the last version seen for curKey
	started    bool
	positioned bool
	keyBuf     []byte
	currentKey base.InternalKey
	currentVal []byte

	// Elided counts tombstones dropped by C2; Dropped counts versions
	// (tombstones included) dropped by C1; ShadowDropped counts the Sets
	// dropped by C5.
	Elided, Dropped, ShadowDropped uint64
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

// stripeTop is the newest sequence number of stripe s: a reader at any
// snapshot of s or of a newer stripe sees every entry at or below it.
func (it *Iter) stripeTop(s int) base.SeqNum {
	if s < len(it.snapshots) {
		return it.snapshots[s]
	}
	return base.SeqNumMax
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
			it.dropped(k)
			continue
		}
		first := it.lastStripe < 0
		// Versions older than a dropped one in its stripe stay dropped
		// by C1: the entry that shadows it shadows them too.
		it.lastStripe = s
		if first && k.Kind() == base.KindSet && it.Shadowed != nil && it.Shadowed(k, it.src.Value(), it.stripeTop(s)) {
			it.ShadowDropped++
			continue
		}
		if k.Kind() == base.KindDelete && s == 0 && it.elide != nil && it.elide(k.UserKey) {
			it.Elided++
			it.dropped(k)
			continue
		}
		if it.ZeroSeqNums && s == 0 && k.Kind() == base.KindSet {
			k = base.MakeInternalKey(k.UserKey, 0, base.KindSet)
		}
		it.currentKey, it.currentVal = k, it.src.Value()
		return true
	}
	return false
}

func (it *Iter) dropped(k base.InternalKey) {
	if k.Kind() == base.KindDelete && it.OnDropTombstone != nil {
		it.OnDropTombstone(k.UserKey)
	}
}

// Key returns the entry Next stopped on; valid until the next call.
func (it *Iter) Key() base.InternalKey { return it.currentKey }

// Value returns the entry's value; valid until the next call.
func (it *Iter) Value() []byte { return it.currentVal }

// Error returns the source's error, if it stopped on one.
func (it *Iter) Error() error { return it.src.Error() }
