package manifest

// What a table's tombstones cost the tree, for delete-aware compaction: the
// bytes of older entries they shadow in the levels below (an estimate) and
// when the oldest of them was written. The engine computes the estimate
// when it writes a table and, for tables a restart finds, lazily after
// Open; the time goes into the MANIFEST with the table (tag 7, so that
// TombstoneMaxAge's clock survives a restart), and a table found without
// one is dated by Open. Both are atomics: the estimate may be set after
// the version holding the table is published, an exception to V1 that
// readers tolerate by treating "unknown" as zero.

// SetShadowedBytes records the estimate of the bytes the table's tombstones
// shadow in the levels below it.
func (t *TableMetadata) SetShadowedBytes(n uint64) {
	t.shadowed.Store(n)
	t.shadowedKnown.Store(true)
}

// SubtractShadowedBytes lowers the estimate by n (to no less than zero):
// a compaction dropped n bytes of values the table's tombstones shadowed.
func (t *TableMetadata) SubtractShadowedBytes(n uint64) {
	for {
		old := t.shadowed.Load()
		if t.shadowed.CompareAndSwap(old, old-min(n, old)) {
			return
		}
	}
}

// ShadowedBytes returns the estimate SetShadowedBytes recorded, and whether
// one was recorded.
func (t *TableMetadata) ShadowedBytes() (n uint64, known bool) {
	return t.shadowed.Load(), t.shadowedKnown.Load()
}

// CompensatedSize is the table's DataSize plus the bytes its tombstones
// shadow: what compacting it is expected to free besides rewriting it
// (RocksDB's and Pebble's compensated size). An unknown estimate counts as
// zero.
func (t *TableMetadata) CompensatedSize() uint64 { return t.DataSize() + t.shadowed.Load() }

// SetTombstoneTime records when the table's oldest tombstone was written
// (Unix nanoseconds; 0: the table holds no tombstone).
func (t *TableMetadata) SetTombstoneTime(unixNano int64) { t.tombstoneTime.Store(unixNano) }

// TombstoneTime is what SetTombstoneTime recorded (0 if never set).
func (t *TableMetadata) TombstoneTime() int64 { return t.tombstoneTime.Load() }

// NumDeletions is the table's tombstone count (0 while Props is not
// loaded).
func (t *TableMetadata) NumDeletions() uint64 {
	if t.Props == nil {
		return 0
	}
	return t.Props.NumDeletions
}

// TotalCompensatedSize sums CompensatedSize over ts.
func TotalCompensatedSize(ts []*TableMetadata) uint64 {
	var n uint64
	for _, t := range ts {
		n += t.CompensatedSize()
	}
	return n
}
