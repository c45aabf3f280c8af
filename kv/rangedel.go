package kv

import (
	"bytes"
	"fmt"
)

// Range deletions. DeleteRange writes one range tombstone (package
// internal/rangedel) however many keys the range holds. A tombstone lives
// beside the point entries of its source, never among them: a memtable
// keeps its tombstones in a memRangeDels, indexed for lookup
// (rangedel_mem.go, K13), a table in its range-deletion block, resident
// once the table is open (sstable's format 2). Every read consults them
// (K8): Get source by source newest first (rangedel_read.go), an iterator
// through a rangeDelView of the memtables' indexes and one Set built from
// the tables it reads, and a compaction drops what they cover
// (rangedel_compact.go).

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

// Empty reports whether the memtable holds no write at all, range
// tombstones included: a memtable holding only a DeleteRange must still
// be flushed.
func (m *memTable) Empty() bool { return m.MemTable.Empty() && m.rangeDels.n.Load() == 0 }

// ApproximateSize counts the range tombstones and their index with the
// point entries: the memory the memtable accounts for (Metrics).
func (m *memTable) ApproximateSize() int64 {
	return m.MemTable.ApproximateSize() + m.rangeDels.accounted()
}

// flushSize is what the rotation decision compares with MemTableSize: the
// entries as table data (memtable's MT7) and the range tombstones with
// their index, so a memtable limit yields tables the size an arena
// memtable's would and bounds the memory DeleteRanges hold.
func (m *memTable) flushSize() int64 {
	return m.MemTable.LogicalSize() + m.rangeDels.accounted()
}
