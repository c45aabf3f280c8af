package kv

import (
	"slices"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
)

// tableMeta describes one live table. It is immutable once published in a
// version, except for refs.
type tableMeta struct {
	fileNum  fileNum
	size     uint64
	smallest base.InternalKey
	largest  base.InternalKey
	// smallestSeq and largestSeq bound the sequence numbers inside.
	smallestSeq, largestSeq base.SeqNum
	entries                 uint64
	filterType              FilterType
	filterBytes             uint64

	// refs counts the versions that include the table (K5). When it drops
	// to zero and an edit has removed the table (obsolete), its file is
	// deleted.
	refs     atomic.Int32
	obsolete atomic.Bool
}

// overlaps reports whether the table's user-key range meets [lo, hi]
// (both inclusive; nil is unbounded).
func (t *tableMeta) overlaps(lo, hi []byte) bool {
	if lo != nil && base.CompareUserKeys(t.largest.UserKey, lo) < 0 {
		return false
	}
	if hi != nil && base.CompareUserKeys(t.smallest.UserKey, hi) > 0 {
		return false
	}
	return true
}

func (t *tableMeta) containsUserKey(k []byte) bool {
	return base.CompareUserKeys(t.smallest.UserKey, k) <= 0 &&
		base.CompareUserKeys(k, t.largest.UserKey) <= 0
}

// version is an immutable set of live tables, one slice per level. L0 is
// ordered newest first (by largest sequence number, then file number); every
// other level is ordered by smallest key, with no two tables overlapping.
//
// A version is reference counted: the DB holds the current one, and every
// read (Get, iterator, compaction) holds the version it started with, so
// the files it reads are not deleted under it.
type version struct {
	levels [NumLevels][]*tableMeta
	refs   atomic.Int32
	// onZero is called, once, when the last reference is dropped; it
	// releases the version's references to its tables.
	onZero func(*version)
}

func (v *version) ref() { v.refs.Add(1) }

func (v *version) unref() {
	if n := v.refs.Add(-1); n == 0 && v.onZero != nil {
		v.onZero(v)
	} else if n < 0 {
		panic("kv: version reference count went negative")
	}
}

// sortLevels restores the per-level orders documented on version.
func (v *version) sortLevels() {
	slices.SortFunc(v.levels[0], func(a, b *tableMeta) int {
		if a.largestSeq != b.largestSeq {
			if a.largestSeq > b.largestSeq {
				return -1
			}
			return 1
		}
		if a.fileNum > b.fileNum {
			return -1
		} else if a.fileNum < b.fileNum {
			return 1
		}
		return 0
	})
	for l := 1; l < NumLevels; l++ {
		slices.SortFunc(v.levels[l], func(a, b *tableMeta) int {
			return base.Compare(a.smallest, b.smallest)
		})
	}
}

// checkOrdering verifies the level invariants; Open and Check call it.
func (v *version) checkOrdering() error {
	for l := 1; l < NumLevels; l++ {
		ts := v.levels[l]
		for i := 1; i < len(ts); i++ {
			if base.CompareUserKeys(ts[i-1].largest.UserKey, ts[i].smallest.UserKey) >= 0 {
				return base.CorruptionErrorf("kv: L%d tables %06d and %06d overlap", l, ts[i-1].fileNum, ts[i].fileNum)
			}
		}
	}
	return nil
}

// tableFor returns the table of a sorted level whose range holds userKey.
func tableFor(level []*tableMeta, userKey []byte) *tableMeta {
	i, _ := slices.BinarySearchFunc(level, userKey, func(t *tableMeta, k []byte) int {
		return base.CompareUserKeys(t.largest.UserKey, k)
	})
	if i < len(level) && level[i].containsUserKey(userKey) {
		return level[i]
	}
	return nil
}
