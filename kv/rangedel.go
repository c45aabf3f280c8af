package kv

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/rangedel"
)

// Range deletions. DeleteRange writes one range tombstone (package
// internal/rangedel) however many keys the range holds. A tombstone lives
// beside the point entries of its source, never among them: a memtable
// keeps its tombstones in a memRangeDels, a table in its range-deletion
// block, resident once the table is open (sstable's format 2). Every read
// consults them (K8): Get source by source newest first (rangedel_read.go),
// an iterator through one Set built from every source it reads, and a
// compaction drops what they cover (rangedel_compact.go).

// DeleteRange removes every key in [start, end), atomically and in one
// write, however many keys the range holds. start >= end is
// ErrInvalidArgument. Deleting a range that holds no key is not an error.
func (d *DB) DeleteRange(start, end []byte, opts *WriteOptions) error {
	b := newBatch()
	b.DeleteRange(start, end)
	return d.Apply(b, opts)
}

// checkRange rejects an empty or reversed range.
func checkRange(start, end []byte) error {
	if bytes.Compare(start, end) >= 0 {
		return fmt.Errorf("%w: DeleteRange start %q is not before end %q", ErrInvalidArgument, start, end)
	}
	return nil
}

// memRangeDels are the range tombstones of one memtable. The commit leader
// appends; readers may read at any time. The list only grows, so a reader
// may keep a prefix of it after releasing the lock.
type memRangeDels struct {
	mu    sync.RWMutex
	list  []rangedel.Tombstone // in commit order; guarded by mu
	n     atomic.Int32         // len(list), read without mu for the common "none"
	bytes atomic.Int64
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

// cover is rangedel.Set.Cover over the memtable's tombstones. A memtable
// holds few of them, and a Set rebuilt on every add would cost more than
// this scan saves.
func (m *memRangeDels) cover(key []byte, readSeq base.SeqNum) base.SeqNum {
	var best base.SeqNum
	for _, t := range m.all() {
		if t.Seq <= readSeq && t.Seq > best && t.Covers(key, 0) {
			best = t.Seq
		}
	}
	return best
}

// Empty reports whether the memtable holds no write at all, range
// tombstones included: a memtable holding only a DeleteRange must still
// be flushed.
func (m *memTable) Empty() bool { return m.MemTable.Empty() && m.rangeDels.n.Load() == 0 }

// ApproximateSize counts the range tombstones with the point entries: the
// memory the memtable accounts for (Metrics).
func (m *memTable) ApproximateSize() int64 {
	return m.MemTable.ApproximateSize() + m.rangeDels.bytes.Load()
}

// flushSize is what the rotation decision compares with MemTableSize: the
// entries as table data (memtable's MT7) and the range tombstones, so a
// memtable limit yields tables the size an arena memtable's would.
func (m *memTable) flushSize() int64 {
	return m.MemTable.LogicalSize() + m.rangeDels.bytes.Load()
}
