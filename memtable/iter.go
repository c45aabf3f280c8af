package memtable

import (
	"slices"

	"github.com/google/btree"

	"github.com/sievekv/sievekv/internal/base"
)

// iterBatch is how many entries one tree descent buffers. google/btree only
// offers callback iteration, so stepping re-descends from the current key;
// buffering 64 entries makes that O(log n / 64) per step.
const iterBatch = 64

// Iter is a bidirectional iterator over a memtable snapshot; it implements
// base.InternalIterator. It owns a private Clone of the tree, so it needs no
// lock (see the package doc). It is not safe for concurrent use.
type Iter struct {
	tree         *btree.BTreeG[item]
	arena        *arena
	lower, upper []byte
	buf          []item // consecutive entries in ascending order
	pos          int    // index into buf; -1 when not positioned
}

var _ base.InternalIterator = (*Iter)(nil)

// fillForward buffers up to iterBatch entries from pivot on (strictly after
// it when exclusive), stopping at the upper bound.
func (it *Iter) fillForward(pivot *base.InternalKey, exclusive bool) bool {
	it.buf = it.buf[:0]
	visit := func(e item) bool {
		k := it.arena.key(e)
		if exclusive && base.Compare(k, *pivot) == 0 {
			return true
		}
		if it.upper != nil && base.CompareUserKeys(k.UserKey, it.upper) >= 0 {
			return false
		}
		it.buf = append(it.buf, e)
		return len(it.buf) < iterBatch
	}
	if pivot == nil {
		it.tree.Ascend(visit)
	} else {
		it.tree.AscendGreaterOrEqual(probeFor(*pivot), visit)
	}
	if len(it.buf) == 0 {
		it.pos = -1
		return false
	}
	it.pos = 0
	return true
}

// fillBackward buffers up to iterBatch entries before pivot (at or before
// it when !exclusive), stopping at the lower bound, and positions on the
// last of them.
func (it *Iter) fillBackward(pivot *base.InternalKey, exclusive bool) bool {
	it.buf = it.buf[:0]
	visit := func(e item) bool {
		k := it.arena.key(e)
		if exclusive && base.Compare(k, *pivot) == 0 {
			return true
		}
		if it.lower != nil && base.CompareUserKeys(k.UserKey, it.lower) < 0 {
			return false
		}
		it.buf = append(it.buf, e)
		return len(it.buf) < iterBatch
	}
	if pivot == nil {
		it.tree.Descend(visit)
	} else {
		it.tree.DescendLessOrEqual(probeFor(*pivot), visit)
	}
	if len(it.buf) == 0 {
		it.pos = -1
		return false
	}
	slices.Reverse(it.buf)
	it.pos = len(it.buf) - 1
	return true
}

// SeekGE implements base.InternalIterator.
func (it *Iter) SeekGE(key base.InternalKey) bool {
	if it.lower != nil && base.CompareUserKeys(key.UserKey, it.lower) < 0 {
		return it.First()
	}
	return it.fillForward(&key, false)
}

// SeekLT implements base.InternalIterator.
func (it *Iter) SeekLT(key base.InternalKey) bool {
	if it.upper != nil && base.CompareUserKeys(key.UserKey, it.upper) >= 0 {
		return it.Last()
	}
	return it.fillBackward(&key, true)
}

// First implements base.InternalIterator.
func (it *Iter) First() bool {
	if it.lower != nil {
		return it.fillForward(&base.InternalKey{UserKey: it.lower, Trailer: base.TrailerMax}, false)
	}
	return it.fillForward(nil, false)
}

// Last implements base.InternalIterator.
func (it *Iter) Last() bool {
	if it.upper != nil {
		// Every entry with user key < upper sorts before (upper, TrailerMax).
		return it.fillBackward(&base.InternalKey{UserKey: it.upper, Trailer: base.TrailerMax}, true)
	}
	return it.fillBackward(nil, false)
}

// Next implements base.InternalIterator.
func (it *Iter) Next() bool {
	if it.pos < 0 {
		return false
	}
	if it.pos+1 < len(it.buf) {
		it.pos++
		return true
	}
	cur := it.arena.key(it.buf[it.pos])
	return it.fillForward(&cur, true)
}

// Prev implements base.InternalIterator.
func (it *Iter) Prev() bool {
	if it.pos < 0 {
		return false
	}
	if it.pos > 0 {
		it.pos--
		return true
	}
	cur := it.arena.key(it.buf[it.pos])
	return it.fillBackward(&cur, true)
}

// Valid implements base.InternalIterator.
func (it *Iter) Valid() bool { return it.pos >= 0 }

// Key implements base.InternalIterator. The key's bytes are owned by the
// memtable and never change (MT2).
func (it *Iter) Key() base.InternalKey { return it.arena.key(it.buf[it.pos]) }

// Value implements base.InternalIterator.
func (it *Iter) Value() []byte { return it.arena.value(it.buf[it.pos]) }

// Error implements base.InternalIterator; a memtable iterator cannot fail.
func (it *Iter) Error() error { return nil }

// Close implements base.InternalIterator.
func (it *Iter) Close() error {
	it.buf, it.pos = nil, -1
	return nil
}
