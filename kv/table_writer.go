package kv

import (
	"bytes"
	"fmt"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
)

// entrySource is the forward-only stream a table is written from.
type entrySource interface {
	Next() bool
	Key() base.InternalKey
	Value() []byte
	Error() error
}

// outputSpec says how writeTables cuts its output.
type outputSpec struct {
	// split is asked, before each new user key, whether to finish the
	// current table; nil writes a single table.
	split func(userKey []byte, size uint64) bool
	// tombstones, if set, collects every point tombstone written.
	tombstones *tombstoneCollector
	// rangeDels are written into the outputs with the points
	// (rangedel_output.go); they also constrain where split may cut.
	rangeDels []rangedel.Tombstone
	// outputLevel and inputs say where the tables go and what they
	// replace (none for a flush to L0): FilterAuto budgets from them.
	outputLevel int
	inputs      []levelTable
	// budget, if set, is the output's account in the filter budget,
	// begun by the caller and ended once the edit naming the tables is
	// installed or has failed; without it writeTables keeps one for
	// itself while it writes.
	budget *filterTarget
}

// metadataCut is the MetadataSize at which writeTables ends a table at the
// next user key, whatever spec.split says (a flush's too): a quarter of
// the largest block a reader accepts, so the entries of the key that ends
// a table (up to MaxKeySize each) fit in the rest. Tables of ordinary keys
// never come near it: their target size ends them long before. A
// variable so that tests reach it with small keys.
var metadataCut uint64 = 256 << 20

// writeTables writes the entries of src into new tables. A table ends only
// between two user keys, never inside one key's versions, so tables of a
// sorted level never share a user key. A table also ends once its index,
// range deletions or properties near a reader's block limit
// (metadataCut), so a flush too may write more than one table; their key
// ranges are disjoint. Created files are removed on error;
// orphans left by a crash are removed by the next Open.
func (d *DB) writeTables(src entrySource, spec outputSpec) ([]*manifest.TableMetadata, error) {
	var (
		out     []*manifest.TableMetadata
		w       *sstable.Writer
		target  = spec.budget
		num     fileNum
		lastKey []byte
		created []fileNum
		started bool
		rd      = newRangeDelOutput(spec.rangeDels)
	)
	if target == nil {
		target = d.filterBudget.begin(spec.outputLevel, spec.inputs)
		defer d.filterBudget.end(target)
	}
	fail := func(err error) ([]*manifest.TableMetadata, error) {
		if w != nil {
			w.Abort()
		}
		for _, n := range created {
			d.fs.Remove(d.path(fileKindTable, n))
			d.filterBudget.forget(uint64(n))
		}
		return nil, err
	}
	finish := func() error {
		md, err := w.Finish()
		w = nil
		if err != nil {
			return fmt.Errorf("kv: write table %06d: %w", num, err)
		}
		d.counters.tableBytesWritten.Add(md.Size)
		m := manifest.NewTableMetadata(uint64(num), md)
		rd.finishTable(m)
		out = append(out, m)
		return nil
	}
	create := func() error {
		var err error
		if num, err = d.allocFileNum(); err != nil {
			return err
		}
		f, err := d.fs.Create(d.path(fileKindTable, num))
		if err != nil {
			return fmt.Errorf("kv: create table %06d: %w", num, err)
		}
		created = append(created, num)
		w = sstable.NewWriter(f, d.tableWriterOptions(target, num))
		return nil
	}
	// cutBefore ends the table being written, if it may end so that the
	// next one begins at next (rangeDelOutput.cutBound), splitting its
	// range tombstones there; lastPoint is its last point's user key, nil
	// if it has none.
	cutBefore := func(lastPoint, next []byte) error {
		bound, ok := rd.cutBound(lastPoint, next, w.EstimatedSize()+w.IndexSize())
		if !ok {
			return nil
		}
		rd.endAt(w, bound)
		return finish()
	}
	tablePoints := false // the table being written has a point
	lastPoint := func() []byte {
		if tablePoints {
			return lastKey
		}
		return nil
	}
	// tombstoneInto gives a range tombstone t the table being written,
	// or ends it first if its metadata reached the cut: range deletions
	// of long keys, as many as a batch holds, would otherwise all go into
	// one block, and with no point between them no point's turn would end
	// the table.
	tombstoneInto := func(t rangedel.Tombstone) (*sstable.Writer, error) {
		if w != nil && w.MetadataSize() >= metadataCut {
			if err := cutBefore(lastPoint(), t.Start); err != nil {
				return nil, err
			}
		}
		if w == nil {
			if err := create(); err != nil {
				return nil, err
			}
			tablePoints = false
		}
		return w, nil
	}
	for src.Next() {
		k := src.Key()
		newUserKey := !started || !bytes.Equal(k.UserKey, lastKey)
		if newUserKey {
			if w != nil && (spec.split != nil && spec.split(k.UserKey, w.EstimatedSize()) || w.MetadataSize() >= metadataCut) {
				if err := cutBefore(lastPoint(), k.UserKey); err != nil {
					return fail(err)
				}
			}
			if w == nil {
				if err := create(); err != nil {
					return fail(err)
				}
				tablePoints = false
			}
			// After the cut, so that the tombstones starting between
			// the last point and this one go with this one.
			if err := rd.addStartingBy(tombstoneInto, k.UserKey); err != nil {
				return fail(fmt.Errorf("kv: write table %06d: %w", num, err))
			}
		}
		if err := w.Add(k, src.Value()); err != nil {
			return fail(fmt.Errorf("kv: write table %06d: %w", num, err))
		}
		tablePoints = true
		if k.Kind() == base.KindDelete && spec.tombstones != nil {
			spec.tombstones.add(k.UserKey, w)
		}
		if newUserKey {
			lastKey = append(lastKey[:0], k.UserKey...)
			started = true
		}
	}
	if err := src.Error(); err != nil {
		return fail(err)
	}
	if len(rd.pending) > 0 || len(rd.carry) > 0 {
		// Tombstones past the last point go into the last table, or
		// tables after it (tombstoneInto).
		if err := rd.addRest(tombstoneInto); err != nil {
			return fail(fmt.Errorf("kv: write table %06d: %w", num, err))
		}
	}
	if w != nil {
		if err := finish(); err != nil {
			return fail(err)
		}
	}
	if len(out) > 0 {
		// The new files' directory entries must be durable before a
		// manifest edit names them.
		if err := d.syncDir(); err != nil {
			return fail(err)
		}
	}
	return out, nil
}

// tableWriterOptions are the options of table num of an output: the DB's,
// with a chooser that budgets its filter when the DB's filter is
// FilterAuto.
func (d *DB) tableWriterOptions(target *filterTarget, num fileNum) sstable.WriterOptions {
	o := d.writerOpts
	if d.opts.Filter == FilterAuto {
		o.FilterChooser = &tableChooser{d: d, target: target, num: num}
	}
	return o
}

// probeBelow asks every table of v at level fromLevel or deeper whose key
// range holds userKey whether it may hold the key: mayHold if any may (a
// tombstone for the key must stay, compaction's C2), and shadowed, the
// bytes those tables' entries for it are estimated at (shadowedIn).
// Tables without a filter count as "may hold".
func (d *DB) probeBelow(v *manifest.Version, fromLevel int, userKey []byte) (shadowed uint64, mayHold bool) {
	eachTableSpanning(v, fromLevel, userKey, func(t *manifest.TableMetadata) bool {
		if d.tableMayHold(t, userKey) {
			mayHold = true
			shadowed += avgEntrySize(t)
		}
		return true
	})
	return shadowed, mayHold
}

// eachTableSpanning calls fn on each table of v at level fromLevel or
// deeper whose key range holds userKey, newest first (L0's tables in
// order, then one table per deeper level, found by binary search since
// their ranges are disjoint and sorted), until fn returns false. A flush
// or compaction asks this of every tombstone it writes (elision, and the
// shadowed-bytes estimate), so a scan of a level's tables per key, 40 or
// more key comparisons at the bottom of a 1M-key tree, was most of what a
// tombstone cost them.
func eachTableSpanning(v *manifest.Version, fromLevel int, userKey []byte, fn func(t *manifest.TableMetadata) bool) {
	for l := fromLevel; l < NumLevels; l++ {
		if l == 0 {
			for _, t := range v.Levels[0] {
				if t.ContainsUserKey(userKey) && !fn(t) {
					return
				}
			}
			continue
		}
		if t := v.TableFor(l, userKey); t != nil && !fn(t) {
			return
		}
	}
}

// tableMayHold reports whether t's filter may hold userKey: true without
// a filter, and true when the table cannot be opened (the caller then
// keeps what it would have dropped, and a read reports the error).
func (d *DB) tableMayHold(t *manifest.TableMetadata, userKey []byte) bool {
	mayHold := true
	err := d.tables.withReader(t, func(r *sstable.Reader) error {
		mayHold = r.MayContain(userKey)
		return nil
	})
	return err != nil || mayHold
}
