package sstable

import (
	"github.com/sievekv/sievekv/internal/base"
)

// Iter walks a table's entries in base.Compare order in both directions,
// restricted to user keys in [lower, upper). It implements
// base.InternalIterator. It never loads a data block that the index proves
// lies wholly outside the bounds (T7). Not safe for concurrent use.
type Iter struct {
	r            *Reader
	lower, upper []byte
	blk          int       // index of the loaded block; meaningful when buf != nil
	buf          *blockBuf // the loaded block's reference, released on the next load or Close (BM1)
	bi           blockIter
	ra           readahead
	valid        bool
	err          error
	// rangePending says the positioning call in progress has put off
	// asking the range filter about [rangeLo, rangeHi), the user keys it
	// may land on, to its first data-block read (rangeEmpty). The bounds
	// may alias the caller's seek key, so they serve that call only: Next
	// and Prev clear rangePending before they load anything.
	rangePending     bool
	rangeLo, rangeHi []byte
	// skipCacheFill keeps the blocks it reads from the file out of the
	// block cache (SkipCacheFill).
	skipCacheFill bool
}

var _ base.InternalIterator = (*Iter)(nil)

// SkipCacheFill makes it leave the blocks it reads from the file out of
// the block cache; it still uses those the cache holds. It is for readers
// that pass over a table once, a compaction or a check: offered to the
// cache, their blocks would evict the ones Gets and scans come back to,
// and hold cache memory (and the garbage collector's headroom over it)
// in a DB that only writes. RocksDB's compactions read with fill_cache
// off for the same reason, and Pebble's read into a buffer pool outside
// its cache. Call it after NewIter or InitIter, which reset it.
func (it *Iter) SkipCacheFill() { it.skipCacheFill = true }

// NewIter returns an iterator over [lower, upper) (nil = unbounded). The
// bounds are not copied and must not change while the iterator is used.
func (r *Reader) NewIter(lower, upper []byte) *Iter {
	it := new(Iter)
	r.InitIter(it, lower, upper)
	return it
}

// InitIter makes it an iterator over r within [lower, upper), as NewIter
// does, reusing the key buffer a previous use grew: an engine that keeps
// its iterators' memory between scans allocates nothing here. it must be
// new or closed (Close released its block), or a block reference leaks.
func (r *Reader) InitIter(it *Iter, lower, upper []byte) {
	keyBuf := it.bi.keyBuf[:0]
	*it = Iter{r: r, lower: lower, upper: upper}
	it.bi.keyBuf = keyBuf
}

// Detach drops a closed iterator's reference to its reader and bounds so
// that memory kept for reuse pins no table; InitIter makes it usable again.
func (it *Iter) Detach() {
	it.r, it.lower, it.upper, it.rangeLo, it.rangeHi = nil, nil, nil, nil, nil
}

// load reads block i into the block iterator, releasing the block loaded
// before it: Key and Value are valid only until the next move (BM1).
func (it *Iter) load(i int) bool {
	if it.buf != nil && it.blk == i {
		it.bi.init(&it.buf.blk) // a seek within the loaded block
		return true
	}
	h := it.r.index[i].handle
	b := it.r.cachedDataBlock(h, nil, &it.ra)
	if b == nil {
		// A read is due: the one thing a range filter can save.
		if it.rangePending && it.rangeEmptyBeforeRead() {
			return false
		}
		var err error
		if b, err = it.r.readUncachedDataBlock(h, nil, &it.ra, !it.skipCacheFill); err != nil {
			it.releaseBlock()
			it.err = err
			return false
		}
	}
	it.releaseBlock()
	it.blk, it.buf = i, b
	it.bi.init(&b.blk)
	return true
}

// releaseBlock drops the loaded block's reference.
func (it *Iter) releaseBlock() {
	if it.buf != nil {
		it.buf.release()
		it.buf = nil
	}
	it.bi.b, it.bi.value, it.bi.valid = nil, nil, false
}

// blockAboveUpper reports whether block i and all later ones hold only
// user keys >= upper: its keys are > sep[i-1], so sep[i-1].UserKey >=
// upper suffices (T7).
func (it *Iter) blockAboveUpper(i int) bool {
	return it.upper != nil && i > 0 && base.CompareUserKeys(it.r.index[i-1].sep.UserKey, it.upper) >= 0
}

// blockBelowLower reports whether block i and all earlier ones hold only
// user keys < lower: its keys are <= sep[i] (T7).
func (it *Iter) blockBelowLower(i int) bool {
	return it.lower != nil && base.CompareUserKeys(it.r.index[i].sep.UserKey, it.lower) < 0
}

// settle checks the block iterator's result against the bounds and turns
// a block-level error into the iterator's sticky error.
func (it *Iter) settle(ok bool) bool {
	if !ok && it.bi.err != nil {
		it.err = it.r.corrupt(it.r.index[it.blk].handle.offset, "data block", it.bi.err)
	}
	if ok {
		k := it.bi.key.UserKey
		if (it.upper != nil && base.CompareUserKeys(k, it.upper) >= 0) ||
			(it.lower != nil && base.CompareUserKeys(k, it.lower) < 0) {
			ok = false
		}
	}
	it.valid = ok
	return ok
}

// forwardFrom positions on the first entry of block i or a later block.
func (it *Iter) forwardFrom(i int) bool {
	for ; i < len(it.r.index); i++ {
		if it.blockAboveUpper(i) || !it.load(i) {
			break
		}
		if it.bi.first() || it.bi.err != nil {
			return it.settle(it.bi.valid)
		}
	}
	it.valid = false
	return false
}

// backwardFrom positions on the last entry of block i or an earlier block.
func (it *Iter) backwardFrom(i int) bool {
	for ; i >= 0; i-- {
		if it.blockBelowLower(i) || !it.load(i) {
			break
		}
		if it.bi.last() || it.bi.err != nil {
			return it.settle(it.bi.valid)
		}
	}
	it.valid = false
	return false
}

// SeekGE implements base.InternalIterator.
func (it *Iter) SeekGE(key base.InternalKey) bool {
	if it.err != nil {
		return false
	}
	if it.lower != nil && base.CompareUserKeys(key.UserKey, it.lower) < 0 {
		key = base.InternalKey{UserKey: it.lower, Trailer: base.TrailerMax}
	}
	if it.rangeEmpty(key.UserKey, it.upper) {
		return false
	}
	i := it.r.findBlock(key)
	if i >= len(it.r.index) || it.blockAboveUpper(i) || !it.load(i) {
		it.valid = false
		return false
	}
	if it.bi.seekGE(key) {
		return it.settle(true)
	}
	if it.bi.err != nil {
		return it.settle(false)
	}
	return it.forwardFrom(i + 1)
}

// SeekLT implements base.InternalIterator.
func (it *Iter) SeekLT(key base.InternalKey) bool {
	if it.err != nil {
		return false
	}
	if it.upper != nil && base.CompareUserKeys(key.UserKey, it.upper) >= 0 {
		key = base.InternalKey{UserKey: it.upper, Trailer: base.TrailerMax}
	}
	if it.rangeEmpty(it.lower, rangeBelow(key, it.upper)) {
		return false
	}
	i := it.r.findBlock(key)
	if i >= len(it.r.index) {
		// Every key in the table is <= the last separator < key.
		return it.backwardFrom(len(it.r.index) - 1)
	}
	if it.blockBelowLower(i) || !it.load(i) {
		it.valid = false
		return false
	}
	if it.bi.seekLT(key) {
		return it.settle(true)
	}
	if it.bi.err != nil {
		return it.settle(false)
	}
	return it.backwardFrom(i - 1)
}

// First implements base.InternalIterator.
func (it *Iter) First() bool {
	if it.err != nil {
		return false
	}
	if it.lower != nil {
		return it.SeekGE(base.InternalKey{UserKey: it.lower, Trailer: base.TrailerMax})
	}
	if it.rangeEmpty(nil, it.upper) {
		return false
	}
	return it.forwardFrom(0)
}

// Last implements base.InternalIterator.
func (it *Iter) Last() bool {
	if it.err != nil {
		return false
	}
	if it.upper != nil {
		return it.SeekLT(base.InternalKey{UserKey: it.upper, Trailer: base.TrailerMax})
	}
	if it.rangeEmpty(it.lower, nil) {
		return false
	}
	return it.backwardFrom(len(it.r.index) - 1)
}

// Next implements base.InternalIterator.
func (it *Iter) Next() bool {
	if !it.valid {
		return false
	}
	it.rangePending = false // positioned on a key: the range holds one
	if it.bi.nextEntry() {
		return it.settle(true)
	}
	if it.bi.err != nil {
		return it.settle(false)
	}
	return it.forwardFrom(it.blk + 1)
}

// Prev implements base.InternalIterator.
func (it *Iter) Prev() bool {
	if !it.valid {
		return false
	}
	it.rangePending = false
	if it.bi.prevEntry() {
		return it.settle(true)
	}
	if it.bi.err != nil {
		return it.settle(false)
	}
	return it.backwardFrom(it.blk - 1)
}

// Valid implements base.InternalIterator.
func (it *Iter) Valid() bool { return it.valid }

// Key implements base.InternalIterator; valid until the next move.
func (it *Iter) Key() base.InternalKey { return it.bi.key }

// Value implements base.InternalIterator. The bytes alias a cached block
// and must not be modified; they are valid until the next move or Close,
// after which the block's memory may be recycled (BM1).
func (it *Iter) Value() []byte { return it.bi.value }

// Error implements base.InternalIterator.
func (it *Iter) Error() error { return it.err }

// Close implements base.InternalIterator. The table stays open. Close
// releases the iterator's block; calling it twice is harmless.
func (it *Iter) Close() error {
	it.valid = false
	it.releaseBlock()
	it.bi = blockIter{keyBuf: it.bi.keyBuf[:0]} // kept for InitIter's reuse
	it.ra.release()
	return it.err
}
