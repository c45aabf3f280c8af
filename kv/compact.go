package kv

import (
	"fmt"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
)

// targetFileSize is where compaction output tables are split.
const targetFileSize = 2 << 20

// Compact flushes the memtables, then merges every table whose key range
// meets [start, end] (and, transitively, every table overlapping those) into
// new tables at the bottom level, dropping shadowed versions and tombstones
// that no open snapshot needs (compaction's C1, C2). nil bounds are open.
func (d *DB) Compact(start, end []byte) error {
	if start != nil && end != nil && base.CompareUserKeys(start, end) > 0 {
		return fmt.Errorf("kv: Compact start %q is after end %q", start, end)
	}
	if err := d.Flush(); err != nil {
		return err
	}
	d.compactMu.Lock()
	defer d.compactMu.Unlock()

	d.mu.Lock()
	if err := d.writableLocked(); err != nil {
		d.mu.Unlock()
		return err
	}
	v := d.current
	v.ref()
	snaps := d.snapshots.seqs()
	d.mu.Unlock()
	defer v.unref()

	inputs := pickManualInputs(v, start, end)
	if len(inputs) == 0 {
		return nil
	}
	children := make([]base.InternalIterator, 0, len(inputs))
	for _, in := range inputs {
		r, err := d.tables.get(in.meta)
		if err != nil {
			closeAll(children)
			return err
		}
		children = append(children, r.NewIter(nil, nil))
	}
	merged := newMergingIter(children)
	// Every version of every key in the inputs' range is in the inputs
	// (they include all overlapping tables of every level, and the
	// memtables were flushed), so the output is the bottom for those keys.
	src := compaction.NewIter(merged, snaps, func([]byte) bool { return true })
	outputs, err := d.writeTables(src, targetFileSize)
	if cerr := merged.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}

	edit := &versionEdit{}
	for _, in := range inputs {
		edit.deleted = append(edit.deleted, deletedTable{level: in.level, num: in.meta.fileNum})
	}
	for _, t := range outputs {
		edit.added = append(edit.added, newTable{level: NumLevels - 1, meta: t})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.logAndApplyLocked(edit); err != nil {
		d.removeFiles(outputs)
		return err
	}
	d.counters.compactions.Add(1)
	d.counters.tombstonesElided.Add(src.Elided)
	return nil
}

type levelTable struct {
	level int
	meta  *tableMeta
}

// pickManualInputs returns every table meeting [start, end], widened to a
// fixed point: a table overlapping any chosen table's range is chosen too,
// so no version of a chosen key stays behind in an older table.
func pickManualInputs(v *version, start, end []byte) []levelTable {
	chosen := map[fileNum]bool{}
	var out []levelTable
	lo, hi := start, end
	for changed := true; changed; {
		changed = false
		for l := range v.levels {
			for _, t := range v.levels[l] {
				if chosen[t.fileNum] || !t.overlaps(lo, hi) {
					continue
				}
				chosen[t.fileNum] = true
				out = append(out, levelTable{level: l, meta: t})
				if lo != nil && base.CompareUserKeys(t.smallest.UserKey, lo) < 0 {
					lo = t.smallest.UserKey
				}
				if hi != nil && base.CompareUserKeys(t.largest.UserKey, hi) > 0 {
					hi = t.largest.UserKey
				}
				changed = true
			}
		}
	}
	return out
}

func closeAll(its []base.InternalIterator) {
	for _, it := range its {
		it.Close()
	}
}
