package memtable

import (
	"slices"

	"github.com/google/btree"

	"github.com/sievekv/sievekv/internal/base"
)

// iterBatch is how many entries one tree descent buffers at most.
// google/btree only offers callback iteration, so stepping re-descends from
// the current key; buffering 64 entries makes that O(log n / 64) per step.
const iterBatch = 64

// firstIterBatch is how many entries the first descent after a seek
// buffers; each refill doubles it up to iterBatch. Most iterators over a
// memtable are merged with tables and read a few of its entries (a
// 100-entry scan of a DB whose memtable holds 2% of the keys takes two or
// three), so buffering 64 at once cost kvbench's scanrange about 5 KB of
// buffer growth and 64 key decodes per scan.
const firstIterBatch = 8

// Iter is a bidirectional iterator over a memtable snapshot; it implements
// base.InternalIterator. It owns a private Clone of the tree, so it needs no
// lock (see the package doc). It is not safe for concurrent use.
type Iter struct {
	tree         *btree.BTreeG[item]
	arena        *arena
	lower, upper []byte
	buf          []item // consecutive entries in ascending order
	pos          int    // index into buf; -1 when not positioned
	batch        int    // entries the next refill buffers (0: a seek's first)
}

// batchLimit returns how many entries this fill may buffer and grows the
// next fill's share. Seeks zero it.batch, so
// each starts again at firstIterBatch; steps continue the growth.
func (it *Iter) batchLimit() int {
	if it.batch == 0 {
		it.batch = firstIterBatch
	}
	limit := it.batch
	it.batch = min(2*it.batch, iterBatch)
	return limit
}

// add buffers e, growing the buffer to the fill's limit at once the first
// time it is full, so an iterator over an empty range allocates nothing
// and a fill grows it at most once.
func (it *Iter) add(e item, limit int) {
	if len(it.buf) == cap(it.buf) {
		it.buf = slices.Grow(it.buf, limit-len(it.buf))
	}
	it.buf = append(it.buf, e)
}

var _ base.InternalIterator = (*Iter)(nil)

// fillForward buffers up to batchLimit entries from pivot on (strictly after
// it when exclusive), stopping at the upper bound.
func (it *Iter) fillForward(pivot *base.InternalKey, exclusive bool) bool {
	return it.fill(pivot, exclusive, true)
}

// fillBackward buffers up to batchLimit entries before pivot (at or before
// it when !exclusive), stopping at the lower bound, and positions on the
// last of them.
func (it *Iter) fillBackward(pivot *base.InternalKey, exclusive bool) bool {
	return it.fill(pivot, exclusive, false)
}

// fill is both directions' refill: one tree walk from pivot (from the
// first or last entry when pivot is nil) that skips pivot itself when
// exclusive, stops at the bound ahead, and buffers up to batchLimit
// entries. The buffer is kept ascending whichever way the walk went, so
// Next and Prev step through it alike.
func (it *Iter) fill(pivot *base.InternalKey, exclusive, forward bool) bool {
	limit := it.batchLimit()
	it.buf = it.buf[:0]
	// The bound ahead: upper (exclusive) going forward, lower (inclusive)
	// going backward.
	bound := it.upper
	if !forward {
		bound = it.lower
	}
	visit := func(e item) bool {
		k := it.arena.key(e)
		if exclusive && base.Compare(k, *pivot) == 0 {
			return true
		}
		if bound != nil {
			if c := base.CompareUserKeys(k.UserKey, bound); forward && c >= 0 || !forward && c < 0 {
				return false
			}
		}
		it.add(e, limit)
		return len(it.buf) < limit
	}
	switch {
	case forward && pivot == nil:
		it.tree.Ascend(visit)
	case forward:
		it.tree.AscendGreaterOrEqual(probeFor(*pivot), visit)
	case pivot == nil:
		it.tree.Descend(visit)
	default:
		it.tree.DescendLessOrEqual(probeFor(*pivot), visit)
	}
	if len(it.buf) == 0 {
		it.pos = -1
		return false
	}
	it.pos = 0
	if !forward {
		slices.Reverse(it.buf)
		it.pos = len(it.buf) - 1
	}
	return true
}

// SeekGE implements base.InternalIterator.
func (it *Iter) SeekGE(key base.InternalKey) bool {
	it.batch = 0
	if it.lower != nil && base.CompareUserKeys(key.UserKey, it.lower) < 0 {
		return it.First()
	}
	return it.fillForward(&key, false)
}

// SeekLT implements base.InternalIterator.
func (it *Iter) SeekLT(key base.InternalKey) bool {
	it.batch = 0
	if it.upper != nil && base.CompareUserKeys(key.UserKey, it.upper) >= 0 {
		return it.Last()
	}
	return it.fillBackward(&key, true)
}

// First implements base.InternalIterator.
func (it *Iter) First() bool {
	it.batch = 0
	if it.lower != nil {
		return it.fillForward(&base.InternalKey{UserKey: it.lower, Trailer: base.TrailerMax}, false)
	}
	return it.fillForward(nil, false)
}

// Last implements base.InternalIterator.
func (it *Iter) Last() bool {
	it.batch = 0
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
// memtable and never change; they stay valid while the memtable, or this
// iterator before Detach, is reachable (MT2).
func (it *Iter) Key() base.InternalKey { return it.arena.key(it.buf[it.pos]) }

// Value implements base.InternalIterator.
func (it *Iter) Value() []byte { return it.arena.value(it.buf[it.pos]) }

// Error implements base.InternalIterator; a memtable iterator cannot fail.
func (it *Iter) Error() error { return nil }

// Close implements base.InternalIterator. The entry buffer's memory is
// kept for InitIter's reuse; its items are arena offsets, pinning nothing.
func (it *Iter) Close() error {
	it.buf, it.pos = it.buf[:0], -1
	return nil
}

// Detach drops a closed iterator's snapshot, arena and bounds, so that
// memory kept for reuse pins no memtable; InitIter makes it usable again.
func (it *Iter) Detach() {
	it.tree, it.arena, it.lower, it.upper = nil, nil, nil, nil
}
