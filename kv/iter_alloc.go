package kv

import (
	"sync"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/memtable"
)

// iterAlloc is the memory behind an open Iterator: its merging iterator,
// one iterator per memtable, L0 table and level, and its buffers. An
// Iterator takes one from iterAllocPool and Close puts it back, so a scan
// allocates its small handle and the memtable's snapshot rather than
// everything anew: built fresh, an iterator over a memtable and two levels
// was 13 objects and 1.2 KiB (BenchmarkScanRange), a cost Pebble avoids
// the same way and a short scan felt most.
//
// The handle stays its own allocation so that a use after Close finds its
// own closed state (ErrClosed), never another scan's pooled memory; and
// the keys and values Key and Value hand out stay the handle's, so a
// caller who keeps one past Close reads what it was, not another scan's.
type iterAlloc struct {
	merging  mergingIter
	children []base.InternalIterator
	mems     []memtable.Iter // the mutable memtable's, then the immutable ones'
	l0       []tableIter
	levels   [NumLevels]levelIter
	bounds   []byte // the lower and upper bounds' copies, back to back
	// savedKey and savedValue are the Iterator's: the reverse direction's
	// current entry and the key Next skips past.
	savedKey, savedValue []byte
}

var iterAllocPool = sync.Pool{New: func() any { return new(iterAlloc) }}

// maxPooledIterBuffer bounds the buffers a pooled iterAlloc keeps: a scan
// over one huge value must not pin its copy in the pool afterwards.
const maxPooledIterBuffer = 64 << 10

// setBounds copies the options' bounds into a.bounds, returning the copies
// (nil where the option is nil). An empty bound stays non-nil: an empty
// upper bound is a bound (it admits no key), not its absence.
func (a *iterAlloc) setBounds(lower, upper []byte) (lo, hi []byte) {
	if a.bounds == nil {
		a.bounds = make([]byte, 0, 64)
	}
	buf := a.bounds[:0]
	if lower != nil {
		buf = append(buf, lower...)
	}
	n := len(buf)
	if upper != nil {
		buf = append(buf, upper...)
	}
	a.bounds = buf
	if lower != nil {
		lo = buf[:n:n]
	}
	if upper != nil {
		hi = buf[n:len(buf):len(buf)]
	}
	return lo, hi
}

// memIters returns n memtable iterators, reusing the earlier ones' memory.
func (a *iterAlloc) memIters(n int) []memtable.Iter {
	a.mems = growLen(a.mems, n)
	return a.mems
}

// tableIters returns n table iterators, reusing the earlier ones' memory.
func (a *iterAlloc) tableIters(n int) []tableIter {
	a.l0 = growLen(a.l0, n)
	return a.l0
}

// growLen returns s at length n, keeping the elements (and the buffers
// they hold) of its whole capacity and zero values past it.
func growLen[T any](s []T, n int) []T {
	if cap(s) < n {
		s = append(s[:cap(s)], make([]T, n-cap(s))...)
	}
	return s[:n]
}

// release readies a for the pool once the Iterator's internal iterators are
// closed: it drops every reference to the DB's memtables, tables and
// version, so a pooled iterAlloc pins none of them, and sheds buffers grown
// past maxPooledIterBuffer.
func (a *iterAlloc) release() {
	clear(a.children)
	a.children = a.children[:0]
	a.merging.init(nil)
	for i := range a.mems {
		a.mems[i].Detach()
	}
	for i := range a.l0 {
		a.l0[i].Detach()
	}
	for i := range a.levels {
		a.levels[i].detach()
	}
	for _, b := range []*[]byte{&a.bounds, &a.savedKey, &a.savedValue} {
		if cap(*b) > maxPooledIterBuffer {
			*b = nil
		}
		*b = (*b)[:0]
	}
}
