package kv

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
)

// memRangeDels are the range tombstones of one memtable. The commit leader
// appends; readers may read at any time. The list only grows, so a reader
// may keep a prefix of it after releasing the lock.
//
// Users who delete by prefix often (sessions, queues, TTL buckets) leave
// thousands of tombstones in one memtable, so a lookup must not scan the
// list: readers answer from an index (K13), an immutable stack of
// fragmented Sets over consecutive runs of the list, which the first
// reader to find it behind the list extends.
type memRangeDels struct {
	mu    sync.RWMutex
	list  []rangedel.Tombstone // in commit order; guarded by mu
	n     atomic.Int32         // len(list), read without mu for the common "none"
	bytes atomic.Int64         // the list's memory
	// indexBytes is the largest memory an index of the list has held:
	// a replaced index may live on in the iterators that took it.
	indexBytes atomic.Int64

	// buildMu makes one reader at a time extend the index, so concurrent
	// readers behind it wait for one build instead of each doing it. The
	// writer never takes it: a commit does not wait for a build.
	buildMu sync.Mutex
	index   atomic.Pointer[memRangeDelIndex] // published under buildMu
}

// memRangeDelIndex indexes list[:n] of a memRangeDels (K13). It is
// immutable once published, so a reader, an iterator in particular, may
// keep it without a lock.
type memRangeDelIndex struct {
	n    int
	runs []memRangeDelRun // oldest first
}

// memRangeDelRun is list[from:to] fragmented, with the range of its
// sequence numbers so a lookup skips a run that cannot beat its answer.
type memRangeDelRun struct {
	from, to       int
	minSeq, maxSeq base.SeqNum
	set            *rangedel.Set
}

// add records [start, end)#seq, copying the keys. REQUIRES: the caller is
// the commit leader (or recovery), the memtable's only writer.
func (m *memRangeDels) add(start, end []byte, seq base.SeqNum) {
	t := rangedel.Tombstone{Start: bytes.Clone(start), End: bytes.Clone(end), Seq: seq}
	m.mu.Lock()
	m.list = append(m.list, t)
	m.mu.Unlock()
	m.n.Add(1)
	// Key bytes plus the slice headers and seqnum, as memtable entries
	// are counted, so DeleteRange-only workloads still rotate memtables.
	m.bytes.Add(int64(len(start)+len(end)) + 56)
}

// all returns the tombstones added so far; the caller must not modify them.
func (m *memRangeDels) all() []rangedel.Tombstone {
	if m.n.Load() == 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.list[:len(m.list):len(m.list)]
}

// indexed returns an index holding at least every tombstone added before
// the call, nil when there is none. A read at sequence number s calls it
// after s is visible, so every tombstone at or below s is in the answer
// (K3: a tombstone is in the list before its sequence number is visible).
func (m *memRangeDels) indexed() *memRangeDelIndex {
	n := int(m.n.Load())
	if n == 0 {
		return nil
	}
	if idx := m.index.Load(); idx != nil && idx.n >= n {
		return idx
	}
	m.buildMu.Lock()
	defer m.buildMu.Unlock()
	idx := m.index.Load()
	if idx != nil && idx.n >= n {
		return idx // another reader built it meanwhile
	}
	next := idx.extend(m.all())
	m.index.Store(next)
	// Under buildMu, so the high-water mark only grows.
	if b := next.bytes(); b > m.indexBytes.Load() {
		m.indexBytes.Store(b)
	}
	return next
}

// accounted is the memory the tombstones and their index hold, which the
// memtable's size counts (MT4's honest size): readers build the index, so
// DeleteRanges with reads between them must rotate the memtable as their
// memory, not their list alone, calls for.
func (m *memRangeDels) accounted() int64 { return m.bytes.Load() + m.indexBytes.Load() }

// bytes approximates the memory the index holds: its runs' sets.
func (idx *memRangeDelIndex) bytes() int64 {
	n := int64(48 + 56*len(idx.runs))
	for _, r := range idx.runs {
		n += r.set.Bytes()
	}
	return n
}

// extend returns the index of list, whose prefix idx (nil for none)
// indexes. The new tombstones form one run; then, while the newest
// older run is at most twice its size, the two are rebuilt as one. So
// each run is more than twice the size of the next newer one: at most
// log2(n)+1 runs, and a tombstone is rebuilt O(log n) times over the
// memtable's life, since each rebuild holding it at least halves the
// number of runs as large as its own (K13).
func (idx *memRangeDelIndex) extend(list []rangedel.Tombstone) *memRangeDelIndex {
	var runs []memRangeDelRun
	from := 0
	if idx != nil {
		runs = append(make([]memRangeDelRun, 0, len(idx.runs)+1), idx.runs...)
		from = idx.n
	}
	for len(runs) > 0 {
		last := runs[len(runs)-1]
		if last.to-last.from > 2*(len(list)-from) {
			break
		}
		from = last.from
		runs = runs[:len(runs)-1]
	}
	return &memRangeDelIndex{n: len(list), runs: append(runs, newMemRangeDelRun(list, from))}
}

func newMemRangeDelRun(list []rangedel.Tombstone, from int) memRangeDelRun {
	r := memRangeDelRun{from: from, to: len(list), set: rangedel.NewSet(list[from:])}
	r.minSeq, r.maxSeq = list[from].Seq, list[from].Seq
	for _, t := range list[from:] {
		r.minSeq, r.maxSeq = min(r.minSeq, t.Seq), max(r.maxSeq, t.Seq)
	}
	return r
}

// cover is the largest sequence number at or below readSeq of an indexed
// tombstone covering key, 0 if none (rangedel's R3 over every run).
func (idx *memRangeDelIndex) cover(key []byte, readSeq base.SeqNum) base.SeqNum {
	return idx.coverAbove(key, readSeq, 0)
}

// coverAbove is cover when the caller only cares about an answer above
// floor (an entry's own sequence number): runs holding nothing newer are
// skipped on their sequence numbers alone. Runs are in commit order, so
// newest first the first answer usually wins and skips the rest.
func (idx *memRangeDelIndex) coverAbove(key []byte, readSeq, floor base.SeqNum) base.SeqNum {
	if idx == nil {
		return 0
	}
	best := floor
	for i := len(idx.runs) - 1; i >= 0; i-- {
		r := &idx.runs[i]
		if r.minSeq > readSeq || r.maxSeq <= best {
			continue
		}
		best = max(best, r.set.Cover(key, readSeq))
	}
	if best == floor {
		return 0
	}
	return best
}

// cover is rangedel.Set.Cover over the memtable's tombstones: O(log² n)
// key comparisons for n tombstones, not a scan (K13).
func (m *memRangeDels) cover(key []byte, readSeq base.SeqNum) base.SeqNum {
	return m.indexed().cover(key, readSeq)
}
