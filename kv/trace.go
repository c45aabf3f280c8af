package kv

import (
	"fmt"
	"strings"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// GetTrace explains one Get: every source it consulted, in order, and what
// each cost. DB.ExplainGet fills it (kvshell's "explain get").
//
// Block reads and cache hits are measured as the change in the DB-wide
// counters around each table lookup, so a trace taken while other
// goroutines read the DB may attribute their reads to this Get.
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
	// DataBlockReads, IndexBlockReads: blocks read from the file; CacheHits:
	// blocks served by the block cache.
	DataBlockReads, IndexBlockReads, CacheHits int64
	Hit                                        bool // the source held a version of the key
	// FalsePositive: the filter said maybe, the block was read without
	// error, and the table did not hold the key.
	FalsePositive bool
}

// tableStats is the subset of the shared table counters a trace compares.
type tableStats struct {
	filterChecks, filterNegatives, dataReads, indexReads, cacheHits int64
}

func (d *DB) snapshotTableStats() tableStats {
	s := d.tableStats.Snapshot()
	return tableStats{s.FilterChecks, s.FilterNegatives, s.DataBlockReads, s.IndexBlockReads, s.CacheHits}
}

func (t *GetTrace) memtable(name string, hit bool) {
	if t == nil {
		return
	}
	t.Steps = append(t.Steps, TraceStep{Source: name, Hit: hit})
}

func (t *GetTrace) table(level int, tm *manifest.TableMetadata, before, after tableStats, found bool, err error) {
	if t == nil {
		return
	}
	t.Steps = append(t.Steps, TraceStep{
		Source:          "table",
		Level:           level,
		Table:           tm.FileNum,
		FilterChecked:   after.filterChecks > before.filterChecks,
		FilterNegative:  after.filterNegatives > before.filterNegatives,
		DataBlockReads:  after.dataReads - before.dataReads,
		IndexBlockReads: after.indexReads - before.indexReads,
		CacheHits:       after.cacheHits - before.cacheHits,
		Hit:             found,
		FalsePositive:   after.filterChecks > before.filterChecks && after.filterNegatives == before.filterNegatives && !found && err == nil,
	})
	if err != nil {
		t.Err = err
	}
}

// ExplainGet performs a Get of key and returns the trace of what it did.
func (d *DB) ExplainGet(key []byte) (*GetTrace, error) {
	trace := &GetTrace{Key: append([]byte{}, key...)}
	trace.MayHaveTombstone = d.tombstones.mayHaveTombstone(key)
	v, err := d.getAt(key, base.SeqNum(d.visibleSeq.Load()), trace)
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

// String renders the trace one source per line.
func (t *GetTrace) String() string {
	var b strings.Builder
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "%d. ", i+1)
		if s.Source != "table" {
			fmt.Fprintf(&b, "%s: %s\n", s.Source, hitWord(s.Hit))
			continue
		}
		fmt.Fprintf(&b, "L%d table %06d: ", s.Level, s.Table)
		switch {
		case !s.FilterChecked:
			b.WriteString("no filter; ")
		case s.FilterNegative:
			b.WriteString("filter says definitely absent, no block read\n")
			continue
		default:
			b.WriteString("filter says maybe; ")
		}
		fmt.Fprintf(&b, "%d data block(s) read from disk, %d from cache: %s",
			s.DataBlockReads, s.CacheHits, hitWord(s.Hit))
		if s.FalsePositive {
			b.WriteString(" (filter false positive)")
		}
		b.WriteString("\n")
	}
	if t.MayHaveTombstone {
		b.WriteString("tombstone index: a table may hold a tombstone for this key\n")
	} else {
		b.WriteString("tombstone index: no table holds a tombstone for this key\n")
	}
	return b.String()
}

func hitWord(hit bool) string {
	if hit {
		return "has the key"
	}
	return "does not have the key"
}
