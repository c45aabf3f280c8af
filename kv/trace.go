package kv

import (
	"fmt"
	"strings"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// GetTrace explains one Get: every source it consulted, in order, and what
// each cost. DB.ExplainGet fills it (kvshell's "explain get").
//
// Each table step's figures are what that lookup alone did (the sstable
// reader's per-call GetStats), so they are exact while other reads,
// flushes and compactions run.
type GetTrace struct {
	Key   []byte
	Steps []TraceStep
	// Found reports whether the Get returned a value; Err its error other
	// than ErrNotFound.
	Found bool
	Value []byte
	Err   error
	// MayHaveTombstone is the tombstone index's answer for the key: false
	// proves no table holds a tombstone for it.
	MayHaveTombstone bool
	// TombstoneIndexBuilding: the index was being built from the tables
	// (after Open, or growing), so it answered "may have" for every key.
	TombstoneIndexBuilding bool
}

// TraceStep is one source a Get consulted.
type TraceStep struct {
	Source string // "mutable memtable", "immutable memtable" or "table"
	Level  int    // for tables
	Table  uint64 // file number, for tables
	// FilterChecked, FilterNegative: for tables, whether a filter was
	// consulted and whether it said "definitely absent".
	FilterChecked  bool
	FilterNegative bool
	// FilterKind names the table's filter with its width ("ribbon
	// 9-bit"; "none" without one) and FilterFP its expected FP rate.
	FilterKind string
	FilterFP   float64
	// DataBlockReads, IndexBlockReads: blocks read from the file; CacheHits:
	// blocks served by the block cache.
	DataBlockReads, IndexBlockReads, CacheHits int64
	Hit                                        bool // the source held a version of the key
	// RangeDeleted: a range tombstone in the source covers the key and
	// the source holds no newer version of it, so the key is deleted and
	// the Get ends here, not found (Hit is false).
	RangeDeleted bool
	// FalsePositive: the filter said maybe, the block was read without
	// error, and the table did not hold the key.
	FalsePositive bool
}

func (t *GetTrace) memtable(name string, hit bool) {
	if t == nil {
		return
	}
	t.Steps = append(t.Steps, TraceStep{Source: name, Hit: hit})
}

// memtableCovered records a memtable whose range tombstone covers the
// key: newer reports whether a point version newer than the tombstone
// answered the Get.
func (t *GetTrace) memtableCovered(name string, newer bool) {
	if t == nil {
		return
	}
	t.Steps = append(t.Steps, TraceStep{Source: name, Hit: newer, RangeDeleted: !newer})
}

// tableCovered records a table whose range tombstone covers the key:
// found reports whether the table holds a point version at all, newer
// whether that version is newer than the tombstone (the Get's answer).
func (t *GetTrace) tableCovered(level int, tm *manifest.TableMetadata, gs *sstable.GetStats, found, newer bool) {
	if t == nil {
		return
	}
	t.table(level, tm, gs, found, nil)
	s := &t.Steps[len(t.Steps)-1]
	s.Hit = found && newer
	s.RangeDeleted = !s.Hit
}

func (t *GetTrace) table(level int, tm *manifest.TableMetadata, gs *sstable.GetStats, found bool, err error) {
	if t == nil {
		return
	}
	t.Steps = append(t.Steps, TraceStep{
		Source:          "table",
		Level:           level,
		Table:           tm.FileNum,
		FilterChecked:   gs.FilterChecked,
		FilterNegative:  gs.FilterNegative,
		DataBlockReads:  gs.DataBlockReads,
		IndexBlockReads: gs.IndexBlockReads,
		CacheHits:       gs.CacheHits,
		Hit:             found,
		FalsePositive:   gs.FilterChecked && !gs.FilterNegative && !found && err == nil,
	})
	if err != nil {
		t.Err = err
	}
}

// ExplainGet performs a Get of key and returns the trace of what it did.
func (d *DB) ExplainGet(key []byte) (*GetTrace, error) {
	trace := &GetTrace{Key: append([]byte{}, key...)}
	trace.TombstoneIndexBuilding = d.tombstones.isRebuilding()
	trace.MayHaveTombstone = d.tombstones.mayHaveTombstone(key)
	v, err := d.getLatest(nil, key, trace)
	d.describeTraceFilters(trace)
	switch {
	case err == nil:
		trace.Found, trace.Value = true, v
	case err == ErrNotFound:
	case err == ErrClosed:
		return nil, err
	default:
		trace.Err = err
	}
	return trace, nil
}

// describeTraceFilters names the filter of each table the trace probed,
// from the current version (a table compacted away since reads as "").
func (d *DB) describeTraceFilters(t *GetTrace) {
	v, ok := d.refCurrent()
	if !ok {
		return
	}
	defer v.Unref()
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Source != "table" || s.Level < 0 || s.Level >= NumLevels {
			continue
		}
		for _, tm := range v.Levels[s.Level] {
			if tm.FileNum != s.Table {
				continue
			}
			d.tables.withReader(tm, func(r *sstable.Reader) error {
				desc := r.FilterDescription()
				s.FilterKind, s.FilterFP = desc.Kind, desc.FPRate
				return nil
			})
		}
	}
}

// String renders the trace one source per line.
func (t *GetTrace) String() string {
	var b strings.Builder
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "%d. ", i+1)
		if s.Source != "table" {
			fmt.Fprintf(&b, "%s: %s\n", s.Source, stepWord(s))
			continue
		}
		fmt.Fprintf(&b, "L%d table %06d", s.Level, s.Table)
		if s.FilterKind != "" {
			fmt.Fprintf(&b, " [%s]", s.FilterKind)
		}
		b.WriteString(": ")
		switch {
		case !s.FilterChecked:
			b.WriteString("no filter; ")
		case s.FilterNegative && s.RangeDeleted:
			b.WriteString("filter says definitely absent, no block read; " + stepWord(s) + "\n")
			continue
		case s.FilterNegative:
			b.WriteString("filter says definitely absent, no block read\n")
			continue
		default:
			b.WriteString("filter says maybe; ")
		}
		fmt.Fprintf(&b, "%d data block(s) read from disk, %d from cache: %s",
			s.DataBlockReads, s.CacheHits, stepWord(s))
		if s.FalsePositive {
			b.WriteString(" (filter false positive)")
		}
		b.WriteString("\n")
	}
	if t.MayHaveTombstone && t.TombstoneIndexBuilding {
		b.WriteString("tombstone index: being built from the tables; until then every key may have a tombstone\n")
	} else if t.MayHaveTombstone {
		b.WriteString("tombstone index: a table may hold a tombstone for this key\n")
	} else {
		b.WriteString("tombstone index: no table holds a tombstone for this key\n")
	}
	return b.String()
}

// stepWord says what a source held for the key.
func stepWord(s TraceStep) string {
	switch {
	case s.Hit:
		return "has the key"
	case s.RangeDeleted:
		return "a range tombstone here deletes the key"
	}
	return "does not have the key"
}
