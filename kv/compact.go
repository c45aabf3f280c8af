package kv

import (
	"fmt"
	"slices"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// Compact flushes the memtables, then moves every version of the user
// keys in [start, end] to the bottom level, dropping shadowed versions and
// tombstones that no open snapshot needs (compaction's C1, C2). nil bounds
// are open. It works level by level from L0 (compaction's P7): each step
// merges the level's tables in range into the first level below that
// overlaps them (or, when all that the step reaches below overlaps the
// range, as it always does for Compact(nil, nil), into the bottom with
// all of it at once), and a last step rewrites the bottom tables in
// range that hold tombstones or versions a snapshot kept apart (entries
// numbered above 0), so a narrow range rewrites what overlaps it rather
// than every table an L0 table's wide range reaches. Writes go on
// meanwhile; what they flush after Compact's own flush stays above.
func (d *DB) Compact(start, end []byte) error {
	if start != nil && end != nil && base.CompareUserKeys(start, end) > 0 {
		return fmt.Errorf("%w: Compact start %q is after end %q", ErrInvalidArgument, start, end)
	}
	if err := d.Flush(); err != nil {
		return err
	}
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	// Tables numbered from here on at the bottom are the outputs of this
	// Compact's steps (compactions wait on compactMu, flushes write L0).
	// The last step leaves them, written under the snapshots still open,
	// unless one open at an earlier step has been released since.
	since := d.manifest.nextFileNum.Load()
	written := func(t *manifest.TableMetadata) bool { return t.FileNum >= since }
	var stepSnaps []base.SeqNum // open at the steps run so far
	for level := range NumLevels {
		d.mu.Lock()
		if err := d.writableLocked(); err != nil {
			d.mu.Unlock()
			return err
		}
		open := d.snapshots.seqs()
		skip := written
		if level == NumLevels-1 && anyReleased(stepSnaps, open) {
			skip = nil
		}
		var err error
		if c := d.picker.ManualStep(d.current, level, start, end, skip); c != nil {
			stepSnaps = append(stepSnaps, open...)
			err = d.runPickedLocked(c)
		}
		d.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// anyReleased reports whether a sequence number of was is missing from
// open (a snapshot released since).
func anyReleased(was, open []base.SeqNum) bool {
	if len(was) == 0 {
		return false
	}
	slices.Sort(open)
	for _, s := range was {
		if _, ok := slices.BinarySearch(open, s); !ok {
			return true
		}
	}
	return false
}

// compactionJob is one merge of input tables into outputLevel, manual or
// picked by the leveled policy.
type compactionJob struct {
	inputs      []levelTable
	outputLevel int
	// split cuts the output (see outputSpec.split).
	split func(userKey []byte, size uint64) bool
	// trivialMove: the inputs move to outputLevel by an edit alone.
	trivialMove bool
	// picked is the picker's description.
	picked *compaction.Compaction
	// v is the version the inputs were picked from: its tables below the
	// output level are what the outputs' tombstones may shadow.
	v *manifest.Version
}

type levelTable struct {
	level int
	meta  *manifest.TableMetadata
}

// runCompaction executes job: merge, write outputs, log the edit that swaps
// inputs for outputs, and update the tombstone index.
// REQUIRES: d.compactMu held; the inputs are in d.current.
func (d *DB) runCompaction(job *compactionJob, snaps []base.SeqNum) error {
	edit := &manifest.VersionEdit{}
	for _, in := range job.inputs {
		edit.DeletedTables = append(edit.DeletedTables, manifest.DeletedTable{Level: in.level, FileNum: in.meta.FileNum})
	}
	if job.trivialMove {
		for _, in := range job.inputs {
			edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: job.outputLevel, Meta: in.meta})
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := d.logAndApplyLocked(edit); err != nil {
			return err
		}
		d.counters.trivialMoves.Add(uint64(len(job.inputs)))
		if job.outputLevel == NumLevels-1 {
			// Nothing lies below the bottom: the moved tables' tombstones
			// shadow nothing now (the estimate is advisory, manifest's V1).
			for _, in := range job.inputs {
				in.meta.SetShadowedBytes(0)
			}
		}
		d.countPicked(job)
		return nil
	}

	children, err := d.compactionInputs(job.inputs)
	if err != nil {
		return err
	}
	var bytesIn uint64
	for _, in := range job.inputs {
		bytesIn += in.meta.Size
	}
	merged := newMergingIter(children)
	rangeDels, err := d.compactionRangeDels(job, snaps) // kv/rangedel_compact.go
	if err != nil {
		merged.Close()
		return err
	}
	keptTombstones := newTombstoneCollector(false, nil) // keys only: the index has them
	defer keptTombstones.release()
	var inputDeletes int
	for _, in := range job.inputs {
		inputDeletes += int(in.meta.NumDeletions())
	}
	keptTombstones.reserve(inputDeletes)
	var elide func(userKey []byte) bool
	if job.v != nil {
		// A tombstone can go when no table below the output level may
		// hold its key: the filters prove it (compaction's C2).
		elide = keptTombstones.elider(d, job.v, job.outputLevel+1)
	}
	src := compaction.NewIter(rangeDels.dropCovered(merged), snaps, elide)
	// Nothing lies below the bottom level, and compactionRangeDels keeps
	// no oldest-stripe range tombstone there (compaction's C4).
	src.ZeroSeqNums = job.outputLevel == NumLevels-1
	shadow := d.newShadowCheck(job.v, job.outputLevel, job.inputs) // K14
	if shadow != nil {
		src.Shadowed = shadow.shadowed
	}
	if audit := testShadowAudit.Load(); audit != nil && job.v != nil {
		src.Shadowed = (*audit)(d, job.v, job.outputLevel, job.inputs, src.Shadowed)
	}
	// Hashed as the compaction drops them, outside d.mu, and not even
	// copied with the index disabled.
	droppedTombstones := d.tombstones.takeHashes()
	if d.tombstones.on {
		droppedTombstones = slices.Grow(droppedTombstones, inputDeletes)
	}
	src.OnDropTombstone = d.tombstones.collectHashes(&droppedTombstones)
	rangeDels.onDropTombstone = src.OnDropTombstone
	// The outputs count against the filter budget as their inputs until
	// the edit swapping them is installed (kv/filter_budget.go).
	budget := d.filterBudget.begin(job.outputLevel, job.inputs)
	defer d.filterBudget.end(budget)
	outputs, err := d.writeTables(src, outputSpec{split: job.split, rangeDels: rangeDels.kept, tombstones: keptTombstones, outputLevel: job.outputLevel, inputs: job.inputs, budget: budget})
	if cerr := merged.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var written uint64
	for _, t := range outputs {
		edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: job.outputLevel, Meta: t})
		written += t.Size
	}
	if job.v != nil {
		// Before the edit publishes them (manifest's V1).
		d.noteTombstones(job.v, job.outputLevel, outputs, keptTombstones, oldestTombstoneTime(job.inputs))
	}
	d.mu.Lock()
	if err := d.logAndApplyLocked(edit); err != nil {
		d.removeFiles(outputs)
		d.mu.Unlock()
		return err
	}
	// Counted with the install, under d.mu, where Metrics reads the
	// counters and the version: a snapshot showing the outputs counts the
	// compaction (the index update below may take a while).
	d.counters.compactions.Add(1)
	d.counters.compactionBytesIn.Add(bytesIn)
	d.counters.tombstonesElided.Add(src.Elided)
	d.counters.compaction.levelBytesWritten[job.outputLevel].Add(written)
	d.countPicked(job)
	// Applied once d.mu is released.
	indexEdit := d.beginTombstoneEditLocked(nil, droppedTombstones, 0)
	d.mu.Unlock()
	shadow.installed()
	return indexEdit.apply()
}

// compactionInputs returns the iterators a compaction merges: one per L0
// input table, and one per other level walking that level's input tables
// in key order (levelIter), each opened when the walk reaches it. A merge
// of a whole tree (a manual Compact) holds one table per level open, not
// every table with its read-ahead buffer, and the merge's heap orders
// levels, not tables: an L5 table over ten L6 ones is a heap of two.
func (d *DB) compactionInputs(inputs []levelTable) ([]base.InternalIterator, error) {
	var children []base.InternalIterator
	for i := 0; i < len(inputs); {
		j := i + 1
		for inputs[i].level > 0 && j < len(inputs) && inputs[j].level == inputs[i].level {
			j++
		}
		if j-i > 1 {
			tables := make([]*manifest.TableMetadata, 0, j-i)
			for _, in := range inputs[i:j] {
				tables = append(tables, in.meta)
			}
			slices.SortFunc(tables, func(a, b *manifest.TableMetadata) int { return base.Compare(a.Smallest, b.Smallest) })
			l := new(levelIter)
			l.init(d, tables, nil, nil, true)
			children = append(children, l)
			i = j
			continue
		}
		it, err := d.tables.newCompactionIter(inputs[i].meta, nil, nil)
		if err != nil {
			closeAll(children)
			return nil, err
		}
		children = append(children, it)
		i = j
	}
	return children, nil
}

// countPicked counts a background compaction by the picker's reason.
func (d *DB) countPicked(job *compactionJob) {
	if job.picked != nil {
		d.counters.compaction.byReason[job.picked.Reason].Add(1)
	}
}

func closeAll(its []base.InternalIterator) {
	for _, it := range its {
		it.Close()
	}
}
