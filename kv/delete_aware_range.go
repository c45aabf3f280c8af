package kv

import (
	"bytes"
	"slices"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
)

// Range tombstones in delete-aware compaction. One DeleteRange may shadow
// most of a database while adding a single entry to one table, so without
// its own estimate a range deletion would leave the table's compensated
// size at its file size and no purge would ever be due. A range tombstone
// [s, e) shadows, in each older table whose bounds meet it, the data blocks
// holding keys in [s, e): the table's resident index gives that without a
// block read (sstable.Reader.EstimateDataBytes). The estimate adds to the
// point tombstones' (shadowedBytes) in the table's ShadowedBytes, so the
// picker's compensated size and purge share (compaction's P2, P4) and the
// tombstone age bound (P5) treat both kinds alike.

// hasTombstones reports whether t holds a point or a range tombstone (false
// while its properties are unknown).
func hasTombstones(t *manifest.TableMetadata) bool {
	return t.NumDeletions() > 0 || tableHasRangeDels(t)
}

// tableRangeShadowedBytes estimates the bytes t's range tombstones shadow
// in v's levels fromLevel and deeper. t need not be in v (a table being
// written is not yet).
func (d *DB) tableRangeShadowedBytes(v *manifest.Version, fromLevel int, t *manifest.TableMetadata) uint64 {
	if !tableHasRangeDels(t) {
		return 0
	}
	var ts []rangedel.Tombstone
	err := d.tables.withReader(t, func(r *sstable.Reader) error {
		ts = r.RangeDels()
		return nil
	})
	if err != nil {
		return 0 // the read path reports a damaged table
	}
	return d.rangeShadowedBytes(v, fromLevel, ts)
}

// rangeShadowedBytes estimates the bytes the tombstones ts shadow in v's
// levels fromLevel and deeper. Overlapping tombstones shadow their common
// keys once, so the ranges are merged first; tables that cannot be read
// count for nothing (the estimate is advisory).
func (d *DB) rangeShadowedBytes(v *manifest.Version, fromLevel int, ts []rangedel.Tombstone) uint64 {
	var n uint64
	for _, span := range mergedSpans(ts) {
		for l := fromLevel; l < NumLevels; l++ {
			for _, m := range v.Levels[l] {
				if !m.Overlaps(span.Start, span.End) {
					continue
				}
				_ = d.tables.withReader(m, func(r *sstable.Reader) error {
					n += r.EstimateDataBytes(span.Start, span.End)
					return nil
				})
			}
		}
	}
	return n
}

// mergedSpans returns the union of the tombstones' ranges as disjoint
// ranges sorted by start (their sequence numbers play no part).
func mergedSpans(ts []rangedel.Tombstone) []rangedel.Tombstone {
	if len(ts) == 0 {
		return nil
	}
	sorted := slices.Clone(ts)
	slices.SortFunc(sorted, func(a, b rangedel.Tombstone) int { return bytes.Compare(a.Start, b.Start) })
	out := []rangedel.Tombstone{{Start: sorted[0].Start, End: sorted[0].End}}
	for _, t := range sorted[1:] {
		last := &out[len(out)-1]
		if base.CompareUserKeys(t.Start, last.End) <= 0 {
			if base.CompareUserKeys(t.End, last.End) > 0 {
				last.End = t.End
			}
			continue
		}
		out = append(out, rangedel.Tombstone{Start: t.Start, End: t.End})
	}
	return out
}
