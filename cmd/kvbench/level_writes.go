package main

import (
	"fmt"
	"strings"

	"github.com/sievekv/sievekv/kv"
)

// levelWrites is, for an engine that reports it, where a phase's table
// bytes went: the bytes written into each level (flushes into L0,
// compactions below) and the compactions run. Two engines with the same
// write amp can get it differently (one large base-level rewrite against
// several small ones), and a run-to-run spread in write amp shows up here
// as a compaction more or fewer into one level.
type levelWrites struct {
	bytes       [kv.NumLevels]uint64
	compactions uint64
	// tables is each level's table count when the snapshot was taken.
	tables [kv.NumLevels]int
}

// levelReporter is implemented by the engines that expose per-level
// write counts (sievekv and Pebble; goleveldb does not).
type levelReporter interface {
	levelWrites() levelWrites
}

func (e *sieveEngine) levelWrites() levelWrites {
	m := e.db.Metrics()
	var w levelWrites
	for l := range w.bytes {
		w.bytes[l] = m.Levels[l].BytesWritten
		w.tables[l] = m.Levels[l].Tables
	}
	// Count leaves out trivial moves (TrivialMoves counts the tables
	// they moved).
	w.compactions = m.Compaction.Count
	return w
}

func (e *pebbleEngine) levelWrites() levelWrites {
	m := e.db.Metrics()
	var w levelWrites
	for l := range w.bytes {
		w.bytes[l] = m.Levels[l].TableBytesFlushed + m.Levels[l].TableBytesCompacted
		w.tables[l] = int(m.Levels[l].TablesCount)
	}
	w.compactions = uint64(m.Compact.Count - m.Compact.MoveCount - m.Compact.DeleteOnlyCount)
	return w
}

// phaseLevelWrites fills res's per-level fields from the snapshots taken
// as the phase began (w0) and once it settled (w1).
func phaseLevelWrites(res *result, w0, w1 levelWrites) {
	res.LevelBytesWritten = make([]uint64, len(w1.bytes))
	for l := range w1.bytes {
		res.LevelBytesWritten[l] = w1.bytes[l] - w0.bytes[l]
	}
	res.Compactions = w1.compactions - w0.compactions
	res.LevelTablesAfter = w1.tables[:]
}

// levelWritesLine says, for a write workload, where each reporting
// engine's table bytes went: "table MB written per level: sievekv L0 8.0,
// L6 24.6 (compactions 3, L0 tables left 1); pebble ...". Empty when no
// engine reported.
func levelWritesLine(rs []result, w string) string {
	var parts []string
	for _, r := range rs {
		if r.Workload != w || r.LevelBytesWritten == nil {
			continue
		}
		var per []string
		for l, b := range r.LevelBytesWritten {
			if b > 0 {
				per = append(per, fmt.Sprintf("L%d %.1f", l, float64(b)/1e6))
			}
		}
		left := 0
		if len(r.LevelTablesAfter) > 0 {
			left = r.LevelTablesAfter[0]
		}
		tombs := ""
		if r.TombstonesAfter != nil {
			tombs = fmt.Sprintf(", tombstones left %d", *r.TombstonesAfter)
		}
		parts = append(parts, fmt.Sprintf("%s %s (compactions %d, L0 tables left %d%s)", r.Engine, strings.Join(per, ", "), r.Compactions, left, tombs))
	}
	if len(parts) == 0 {
		return ""
	}
	return "table MB written per level: " + strings.Join(parts, "; ")
}
