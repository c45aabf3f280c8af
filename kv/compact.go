package kv

import (
	"fmt"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
)

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

	job := &compactionJob{inputs: pickManualInputs(v, start, end), outputLevel: NumLevels - 1}
	if len(job.inputs) == 0 {
		return nil
	}
	// Every version of every key in the inputs' range is in the inputs
	// (they include all overlapping tables of every level, and the
	// memtables were flushed), so the output is the bottom for those keys.
	job.elide = func([]byte) bool { return true }
	target := uint64(d.opts.TargetFileSize)
	job.split = func(_ []byte, size uint64) bool { return size >= target }
	return d.runCompaction(job, snaps)
}

// compactionJob is one merge of input tables into outputLevel, manual or
// picked by the leveled policy.
type compactionJob struct {
	inputs      []levelTable
	outputLevel int
	// elide decides compaction's C2 for a tombstone's user key.
	elide func(userKey []byte) bool
	// split cuts the output (see outputSpec.split).
	split func(userKey []byte, size uint64) bool
	// trivialMove: the inputs move to outputLevel by an edit alone.
	trivialMove bool
	// picked is the picker's description, for Picker.Done.
	picked *compaction.Compaction
}

type levelTable struct {
	level int
	meta  *tableMeta
}

// runCompaction executes job: merge, write outputs, log the edit that swaps
// inputs for outputs, and update the tombstone index.
// REQUIRES: d.compactMu held; the inputs are in d.current.
func (d *DB) runCompaction(job *compactionJob, snaps []base.SeqNum) error {
	edit := &versionEdit{}
	for _, in := range job.inputs {
		edit.deleted = append(edit.deleted, deletedTable{level: in.level, num: in.meta.fileNum})
	}
	if job.trivialMove {
		for _, in := range job.inputs {
			edit.added = append(edit.added, newTable{level: job.outputLevel, meta: in.meta})
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := d.logAndApplyLocked(edit); err != nil {
			return err
		}
		d.counters.trivialMoves.Add(uint64(len(job.inputs)))
		if job.picked != nil {
			d.picker.Done(job.picked)
		}
		return nil
	}

	children := make([]base.InternalIterator, 0, len(job.inputs))
	var bytesIn uint64
	for _, in := range job.inputs {
		it, err := d.tables.newIter(in.meta, nil, nil)
		if err != nil {
			closeAll(children)
			return err
		}
		children = append(children, it)
		bytesIn += in.meta.size
	}
	merged := newMergingIter(children)
	src := compaction.NewIter(merged, snaps, job.elide)
	var droppedTombstones [][]byte
	src.OnDropTombstone = collectInto(&droppedTombstones)
	outputs, err := d.writeTables(src, outputSpec{split: job.split})
	if cerr := merged.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, t := range outputs {
		edit.added = append(edit.added, newTable{level: job.outputLevel, meta: t})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.logAndApplyLocked(edit); err != nil {
		d.removeFiles(outputs)
		return err
	}
	d.counters.compactions.Add(1)
	d.counters.compactionBytesIn.Add(bytesIn)
	d.counters.tombstonesElided.Add(src.Elided)
	d.tombstones.removeAll(droppedTombstones)
	if job.picked != nil {
		d.picker.Done(job.picked)
	}
	return nil
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
