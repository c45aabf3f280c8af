package main

// The budget sweep compares filter configurations by the block reads of
// absent-key Gets on a live tree (L0 tables and several levels), where
// every L0 table is one more filter probed. Loaded as a live fill is, with
// flushes and compactions in the background, each configuration's tree
// ended differently (how many L0 tables, which levels), set by timing, and
// the sweep compared shapes rather than filters: Monkey measured 1.0x to
// 1.7x uniform's reads while on one shared shape its FP sum was 0.34x to
// 0.57x (docs/design.md, "Filter budget"). So the sweep loads each sievekv
// configuration by a script that depends on the keys alone: automatic
// compactions off, a flush at every memtable's worth of keys, and after
// each flush but the last the compactions the leveled policy finds due
// (kv.DB.CompactDue), run to completion. The last flush's table stays in
// L0 with those not yet due, as a live tree holds them between
// compactions.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/memtable"
)

// scriptedFlushKeys is how many fill keys make a memtable of memTable
// bytes as the engine counts it (memtable.LogicalSize: key, value and
// LogicalEntryOverhead per entry), so the scripted fill's L0 tables are
// those a live fill flushes.
func scriptedFlushKeys(memTable, keySize, valueSize int) int {
	return max(1, memTable/(keySize+valueSize+memtable.LogicalEntryOverhead))
}

// scriptedFill loads ks.present into r's sievekv DB (opened with
// config.scripted) with fillrandom's writes, flushing and compacting by
// the script above, and returns the tree it left.
func scriptedFill(r *runner, e *sieveEngine, ks *keySet, memTable int, seed uint64) (treeShape, error) {
	load, err := phases("fillrandom", r, ks, 0, seed)
	if err != nil {
		return treeShape{}, err
	}
	p := load[0]
	flushKeys := scriptedFlushKeys(memTable, r.keySize, r.valueSize)
	flushes := 0
	for i := range p.ops {
		if _, _, err := p.op(i); err != nil {
			return treeShape{}, fmt.Errorf("fill op %d: %w", i, err)
		}
		last := i == p.ops-1
		if (i+1)%flushKeys != 0 && !last {
			continue
		}
		if err := e.db.Flush(); err != nil {
			return treeShape{}, fmt.Errorf("fill flush %d: %w", flushes, err)
		}
		flushes++
		if !last {
			if err := e.db.CompactDue(); err != nil {
				return treeShape{}, fmt.Errorf("fill after flush %d: %w", flushes, err)
			}
		}
	}
	// A memtable the engine rotated on its own would have been flushed in
	// the background, at a time the script does not set.
	if got := e.db.Metrics().Flushes; got != uint64(flushes) {
		return treeShape{}, fmt.Errorf("scripted fill: the engine flushed %d memtables, the script %d", got, flushes)
	}
	return shapeOfTree(e.db)
}

// treeShape is a tree's tables: level, key range and entries of each, and
// a per-level summary for reports.
type treeShape struct {
	tables  []tableSpan
	summary string
}

type tableSpan struct {
	level             int
	smallest, largest string
	entries           uint64
}

// shapeOfTree reads db's tables.
func shapeOfTree(db *kv.DB) (treeShape, error) {
	ts, err := db.Tables()
	if err != nil {
		return treeShape{}, err
	}
	var s treeShape
	var tables [kv.NumLevels]int
	var entries [kv.NumLevels]uint64
	for _, t := range ts {
		s.tables = append(s.tables, tableSpan{t.Level, string(t.Smallest), string(t.Largest), t.Entries})
		tables[t.Level]++
		entries[t.Level] += t.Entries
	}
	var parts []string
	for l := range tables {
		if tables[l] > 0 {
			parts = append(parts, fmt.Sprintf("L%d %dt/%d keys", l, tables[l], entries[l]))
		}
	}
	s.summary = strings.Join(parts, "; ")
	return s, nil
}

// sameTree reports whether a and b hold the same tables (levels, key
// ranges, entries), in the order db.Tables lists them.
func (a treeShape) sameTree(b treeShape) bool {
	return slices.Equal(a.tables, b.tables)
}
