package kv

import (
	"bytes"

	"github.com/sievekv/sievekv/internal/base"
)

// Iterator walks the user keys of a DB or snapshot in order, in both
// directions, showing for each key its newest value visible at the
// iterator's sequence number and hiding deleted keys. It sees the DB as of
// its creation: later writes, flushes and compactions do not change what it
// returns (the version and memtables it reads are pinned until Close).
//
// Positioning methods report whether the iterator is on a key. After Next
// runs off the end, Prev moves to the last key; after Prev runs off the
// start, Next moves to the first (as in Pebble). Key and Value return
// the iterator's own copies, valid until the next positioning call or
// Close (which reuse them); the caller may modify them, which changes
// nothing else. An Iterator is not safe for concurrent use; Close it to
// release what it pins.
type Iterator struct {
	db     *DB
	iter   base.InternalIterator
	seq    base.SeqNum
	lower  []byte
	upper  []byte
	pinned *readState // nil once closed
	alloc  *iterAlloc // the internal iterators' memory; nil once closed
	// closeCalled: Close has run, and a second Close returns ErrClosed.
	closeCalled bool
	// rangeDels are the range tombstones the iterator sees (K8); nil when
	// none of its sources has one.
	rangeDels *rangeDelView

	dir   iterDir
	state iterState
	err   error

	// In the reverse direction the internal iterator sits before the
	// current key's entries, so the current key and value are copies.
	savedKey, savedValue []byte
	// keyOut and valueOut are what Key and Value hand out: copies, so a
	// caller writing into them cannot reach the memtable, a cached block
	// or savedKey, which the iterator steps by.
	keyOut, valueOut []byte
}

type iterDir int8

const (
	dirForward iterDir = iota
	dirReverse
)

type iterState int8

const (
	stateUnpositioned iterState = iota
	stateValid
	statePastEnd    // ran off the end going forward
	stateBeforeHead // ran off the start going backward
	stateClosed
)

// newIterator builds an Iterator over a pinned read state at seq, its
// internal iterators in memory from iterAllocPool.
func (d *DB) newIterator(rs *readState, seq base.SeqNum, o *IterOptions) *Iterator {
	if !d.reads.enter() {
		rs.unref()
		return &Iterator{db: d, err: ErrClosed, state: stateClosed}
	}
	defer d.reads.exit()
	a := iterAllocPool.Get().(*iterAlloc)
	it := &Iterator{db: d, seq: seq, pinned: rs, alloc: a, savedKey: a.savedKey, savedValue: a.savedValue}
	skipCacheFill := false
	if o != nil {
		it.lower, it.upper = a.setBounds(o.LowerBound, o.UpperBound)
		skipCacheFill = o.SkipCacheFill
	}
	children := a.children[:0]
	mems := a.memIters(1 + len(rs.imm))
	rs.mem.InitIter(&mems[0], it.lower, it.upper)
	children = append(children, &mems[0])
	for i := len(rs.imm) - 1; i >= 0; i-- {
		m := &mems[len(rs.imm)-i]
		rs.imm[i].InitIter(m, it.lower, it.upper)
		children = append(children, m)
	}
	l0 := a.tableIters(len(rs.v.Levels[0]))[:0]
	for _, t := range rs.v.Levels[0] {
		if !t.Overlaps(it.lower, nil) || (it.upper != nil && base.CompareUserKeys(t.Smallest.UserKey, it.upper) >= 0) {
			continue
		}
		l0 = l0[:len(l0)+1]
		ti := &l0[len(l0)-1]
		if err := d.tables.initIter(ti, t, it.lower, it.upper); err != nil {
			it.err = err
			l0 = l0[:len(l0)-1]
			continue
		}
		if skipCacheFill {
			ti.SkipCacheFill()
		}
		children = append(children, ti)
	}
	for l := 1; l < NumLevels; l++ {
		if len(rs.v.Levels[l]) > 0 {
			a.levels[l].init(d, rs.v.Levels[l], it.lower, it.upper, skipCacheFill)
			children = append(children, &a.levels[l])
		}
	}
	a.children = children
	a.merging.init(children)
	it.iter = &a.merging
	if rd, err := d.iterRangeDels(rs); err != nil {
		it.err = err
	} else {
		it.rangeDels = rd
	}
	return it
}

func cloneOrNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// NewIter returns an iterator over the DB's current state within the
// options' bounds (nil = all keys).
func (d *DB) NewIter(o *IterOptions) *Iterator {
	rs, seq, err := d.loadLatestReadState()
	if err != nil {
		return &Iterator{db: d, err: err, state: stateClosed}
	}
	return d.newIterator(rs, seq, o)
}

// begin starts a positioning call: it reports whether the iterator can
// move, recording ErrClosed once the DB closed, and on true has entered
// the DB's read gate, which the caller leaves with end (so Close does not
// close a table this call is reading).
func (it *Iterator) begin() bool {
	if it.err != nil {
		return false
	}
	if it.state == stateClosed {
		// Used after its own Close: without an error the false would read
		// as an empty range, a wrong answer rather than a misuse reported.
		it.err = ErrClosed
		return false
	}
	if it.db.isClosed() || !it.db.reads.enter() {
		it.err = ErrClosed
		return false
	}
	return true
}

func (it *Iterator) end() { it.db.reads.exit() }

// First moves to the first key within bounds.
func (it *Iterator) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	if !it.begin() {
		return false
	}
	defer it.end()
	it.dir = dirForward
	it.iter.First()
	return it.findNextUserEntry(false, nil)
}

// Last moves to the last key within bounds.
func (it *Iterator) Last() bool {
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	if !it.begin() {
		return false
	}
	defer it.end()
	it.dir = dirReverse
	it.iter.Last()
	return it.findPrevUserEntry()
}

// SeekGE moves to the first key >= key (clamped to the lower bound).
func (it *Iterator) SeekGE(key []byte) bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.dir = dirForward
	if it.upper != nil && bytes.Compare(key, it.upper) >= 0 {
		return it.stop(statePastEnd)
	}
	it.iter.SeekGE(base.MakeSearchKey(key, it.seq))
	return it.findNextUserEntry(false, nil)
}

// SeekLT moves to the last key < key (clamped to the upper bound).
func (it *Iterator) SeekLT(key []byte) bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	it.dir = dirReverse
	if it.lower != nil && bytes.Compare(key, it.lower) <= 0 {
		return it.stop(stateBeforeHead)
	}
	// The smallest internal key of user key `key` sorts before all its
	// versions, so SeekLT lands on the last entry of a smaller user key.
	it.iter.SeekLT(base.MakeInternalKey(key, base.SeqNumMax, base.KindMax))
	return it.findPrevUserEntry()
}

// Next moves to the next key.
func (it *Iterator) Next() bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	switch it.state {
	case stateBeforeHead:
		return it.First()
	case stateValid:
	default:
		return false
	}
	if it.dir == dirReverse {
		// The internal iterator is before the current key's entries: step
		// into them, then skip them like the forward case.
		it.dir = dirForward
		if it.iter.Valid() {
			it.iter.Next()
		} else if it.iter.Error() == nil {
			it.iter.First()
		}
		return it.findNextUserEntry(true, it.savedKey)
	}
	it.savedKey = append(it.savedKey[:0], it.iter.Key().UserKey...)
	it.iter.Next()
	return it.findNextUserEntry(true, it.savedKey)
}

// Prev moves to the previous key.
func (it *Iterator) Prev() bool {
	if !it.begin() {
		return false
	}
	defer it.end()
	switch it.state {
	case statePastEnd:
		return it.Last()
	case stateValid:
	default:
		return false
	}
	if it.dir == dirForward {
		// Back the internal iterator up to before the current key's
		// entries, then scan backward as usual.
		cur := append(it.savedKey[:0], it.iter.Key().UserKey...)
		it.savedKey = cur
		for it.iter.Prev() {
			if bytes.Compare(it.iter.Key().UserKey, cur) < 0 {
				break
			}
		}
		it.dir = dirReverse
		if err := it.iter.Error(); err != nil {
			it.err = err
			return it.stop(stateBeforeHead)
		}
	}
	return it.findPrevUserEntry()
}

// findNextUserEntry advances the internal iterator to the first visible,
// live entry whose user key is past skipKey (when skipping).
func (it *Iterator) findNextUserEntry(skipping bool, skipKey []byte) bool {
	for ; it.iter.Valid(); it.iter.Next() {
		k := it.iter.Key()
		if it.upper != nil && bytes.Compare(k.UserKey, it.upper) >= 0 {
			break
		}
		if k.SeqNum() > it.seq {
			continue
		}
		if skipping && bytes.Compare(k.UserKey, skipKey) <= 0 {
			continue
		}
		if k.Kind() == base.KindDelete || coveredAt(it.rangeDels, k, it.seq) {
			// Hide this key's older versions (a range tombstone covering
			// this one covers them too).
			it.savedKey = append(it.savedKey[:0], k.UserKey...)
			skipKey, skipping = it.savedKey, true
			continue
		}
		it.state = stateValid
		return true
	}
	if err := it.iter.Error(); err != nil {
		it.err = err
	}
	return it.stop(statePastEnd)
}

// findPrevUserEntry moves backward to the previous visible, live user key,
// leaving the internal iterator before that key's entries and the key and
// value in savedKey and savedValue.
func (it *Iterator) findPrevUserEntry() bool {
	kind := base.KindDelete
	for it.iter.Valid() {
		k := it.iter.Key()
		if it.lower != nil && bytes.Compare(k.UserKey, it.lower) < 0 {
			break
		}
		if k.SeqNum() <= it.seq {
			if kind != base.KindDelete && bytes.Compare(k.UserKey, it.savedKey) < 0 {
				// savedKey's newest visible version is a value, and the
				// iterator now sits on an older key: done.
				break
			}
			kind = k.Kind()
			if coveredAt(it.rangeDels, k, it.seq) {
				kind = base.KindDelete
			}
			if kind == base.KindDelete {
				it.savedKey, it.savedValue = it.savedKey[:0], it.savedValue[:0]
			} else {
				it.savedKey = append(it.savedKey[:0], k.UserKey...)
				it.savedValue = append(it.savedValue[:0], it.iter.Value()...)
			}
		}
		it.iter.Prev()
	}
	if err := it.iter.Error(); err != nil {
		it.err = err
		return it.stop(stateBeforeHead)
	}
	if kind == base.KindDelete {
		return it.stop(stateBeforeHead)
	}
	it.state = stateValid
	return true
}

func (it *Iterator) stop(s iterState) bool {
	it.state = s
	return false
}

// Valid reports whether the iterator is on a key.
func (it *Iterator) Valid() bool { return it.err == nil && it.state == stateValid }

// Key returns the current key, or nil when not Valid. The slice is the
// iterator's copy: the caller may modify it; it is valid until the next
// positioning call or Close. Copy it to keep it longer.
//
// Handing out the memtable's or a cached block's bytes instead would save
// one copy of a key the caller is about to read anyway, and let a caller
// writing into it corrupt the memtable (and the table the next flush
// writes from it) or every reader of that block.
func (it *Iterator) Key() []byte {
	if !it.Valid() {
		return nil
	}
	k := it.savedKey
	if it.dir == dirForward {
		k = it.iter.Key().UserKey
	}
	it.keyOut = append(it.keyOut[:0], k...)
	return it.keyOut
}

// Value returns the current value, or nil when not Valid, under the same
// rules as Key: the iterator's copy, modifiable, valid until the next
// positioning call or Close.
func (it *Iterator) Value() []byte {
	if !it.Valid() {
		return nil
	}
	v := it.savedValue
	if it.dir == dirForward {
		v = it.iter.Value()
	}
	it.valueOut = append(it.valueOut[:0], v...)
	return it.valueOut
}

// Error returns the error that stopped the iterator, if any.
func (it *Iterator) Error() error { return it.err }

// Close releases the iterator's pinned state. It returns the iterator's
// error: ErrClosed if the DB closed before a positioning call, which then
// stopped the scan short (a loop ending on a false Next would otherwise
// take the keys so far for the whole range). Closing twice returns
// ErrClosed.
func (it *Iterator) Close() error {
	if it.closeCalled {
		return ErrClosed
	}
	it.closeCalled = true
	err := it.err
	if it.iter != nil {
		if cerr := it.iter.Close(); cerr != nil && err == nil {
			err = cerr
		}
		it.iter = nil
	}
	if a := it.alloc; a != nil {
		// Only now, with every internal iterator closed and nothing of the
		// alloc's left in the handle, may another Iterator take it.
		a.savedKey, a.savedValue = it.savedKey, it.savedValue
		it.savedKey, it.savedValue, it.lower, it.upper, it.alloc = nil, nil, nil, nil, nil
		a.release()
		iterAllocPool.Put(a)
	}
	if it.pinned != nil {
		it.pinned.unref()
		it.pinned = nil
	}
	it.state = stateClosed
	return err
}
