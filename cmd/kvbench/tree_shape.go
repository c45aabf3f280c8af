package main

import "github.com/cockroachdb/pebble/v2"

// tombstoneReporter is implemented by the engines that can say how many
// point tombstones their tables hold (sievekv and Pebble). Tombstones
// still in the tree once it settled, and the values they shadow below,
// are space compactions have yet to reclaim: after deleterandom, what
// sets one engine's space amp apart from another's.
type tombstoneReporter interface {
	tombstonesLeft() uint64
}

func (e *sieveEngine) tombstonesLeft() uint64 {
	var n uint64
	for _, lm := range e.db.Metrics().Levels {
		n += lm.Tombstones
	}
	return n
}

// tombstonesLeft reads Pebble's table properties (NumDeletions counts its
// range deletions too, so they are taken out).
func (e *pebbleEngine) tombstonesLeft() uint64 {
	levels, err := e.db.SSTables(pebble.WithProperties())
	if err != nil {
		return 0
	}
	var n uint64
	for _, ts := range levels {
		for _, t := range ts {
			if t.Properties != nil {
				n += t.Properties.NumDeletions - t.Properties.NumRangeDeletions
			}
		}
	}
	return n
}
