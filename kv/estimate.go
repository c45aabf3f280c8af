package kv

import (
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// EstimateDiskUsage estimates the bytes of table files that the keys in
// [start, end) take (nil: unbounded on that side), for deciding where to
// split or what to move: a table inside the range counts whole, its
// filter and index included; a table that straddles an edge counts the
// share of its file that its data blocks in the range make of its data,
// from the resident index with no block read (high by up to two blocks
// per straddling table, sstable's EstimateDataBytes). It is the space the
// range takes now: overwritten and deleted versions count until
// compactions drop them, and the memtables and WAL are not counted (their
// writes reach the tables at the next flush). start after end is
// ErrInvalidArgument; equal bounds take nothing.
func (d *DB) EstimateDiskUsage(start, end []byte) (uint64, error) {
	if start != nil && end != nil {
		switch c := base.CompareUserKeys(start, end); {
		case c > 0:
			return 0, fmt.Errorf("%w: EstimateDiskUsage start %q is after end %q", ErrInvalidArgument, start, end)
		case c == 0:
			return 0, nil
		}
	}
	v, ok := d.refCurrent()
	if !ok {
		return 0, ErrClosed
	}
	defer v.Unref()
	var total uint64
	for _, ts := range v.Levels {
		for _, t := range ts {
			n, err := d.tableUsageIn(t, start, end)
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

// tableUsageIn is t's part of EstimateDiskUsage(start, end).
func (d *DB) tableUsageIn(t *manifest.TableMetadata, start, end []byte) (uint64, error) {
	if (end != nil && base.CompareUserKeys(t.Smallest.UserKey, end) >= 0) ||
		(start != nil && base.CompareUserKeys(t.Largest.UserKey, start) < 0) {
		return 0, nil // wholly outside
	}
	if (start == nil || base.CompareUserKeys(start, t.Smallest.UserKey) <= 0) &&
		(end == nil || base.CompareUserKeys(t.Largest.UserKey, end) < 0) {
		return t.Size, nil // wholly inside
	}
	lo, hi := start, end
	if lo == nil {
		lo = t.Smallest.UserKey
	}
	if hi == nil {
		// Just past the largest key: every block from lo on.
		hi = append(append(make([]byte, 0, len(t.Largest.UserKey)+1), t.Largest.UserKey...), 0)
	}
	var data, allData uint64
	err := d.tables.withReader(t, func(r *sstable.Reader) error {
		data, allData = r.EstimateDataBytes(lo, hi), r.Properties().DataSize
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("kv: estimate the disk usage of table %06d: %w", t.FileNum, err)
	}
	if allData == 0 || data >= allData {
		return t.Size, nil
	}
	// data/allData of the file, in an order that cannot overflow for any
	// table size a file system holds.
	return uint64(float64(t.Size) * float64(data) / float64(allData)), nil
}
