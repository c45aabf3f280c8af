package kv

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sievekv/sievekv/vfs"
)

// TestSettledLevels: the levels' keys are spread bottom-up at the fan-out,
// a bottom level alone is given a level above it, a level over its settled
// share keeps its own count, and the keys are conserved otherwise.
func TestSettledLevels(t *testing.T) {
	var alone [NumLevels]uint64
	alone[6] = 110_000
	got := settledLevels(alone, 6, 10)
	if got[6] != 110_000 || got[5] != 10_000 || got[4] != 0 {
		t.Fatalf("bottom alone settles as L5 %d, L6 %d; want 10000 and its own 110000", got[5], got[6])
	}
	var overfull [NumLevels]uint64
	overfull[5], overfull[6] = 50_000, 60_000
	got = settledLevels(overfull, 5, 10)
	if got[5] != 50_000 || got[6] != 100_000 {
		t.Fatalf("an overfull L5 settles as L5 %d, L6 %d; want its own 50000 and 100000", got[5], got[6])
	}
	var newBase [NumLevels]uint64
	newBase[6] = 111_000
	got = settledLevels(newBase, 4, 10) // an output to a new, empty base level
	if got[4] != 1_000 || got[5] != 10_000 || got[6] != 111_000 {
		t.Fatalf("a new base level settles as %v", got)
	}
	var none [NumLevels]uint64
	if got := settledLevels(none, 0, 10); got != none {
		t.Fatalf("no level keys settle as %v", got)
	}
}

// TestMonkeyShapeRuns: a flush sees L0 refilled to its trigger even when
// L0 is empty (the regression: L0's size was taken from its live tables
// only, so a compaction that had just emptied L0 saw no L0 runs to come),
// and a level output sees no L0.
func TestMonkeyShapeRuns(t *testing.T) {
	s := monkeyShape{flushKeys: 1000}
	s.levels[6] = 50_000
	runs, target := s.runs(0, 900, 4, 10)
	if want := []uint64{900, 1000, 1000, 1000}; !slices.Equal(runs[:4], want) || target != 0 {
		t.Fatalf("flush runs %v (target %d), want L0 %v first", runs, target, want)
	}
	runs, target = s.runs(6, 0, 4, 10)
	if len(runs) != NumLevels-1 || target != NumLevels-2 || runs[target] != 50_000 || runs[target-1] != 4546 {
		t.Fatalf("a level output's runs are %v (target %d): want the settled levels alone", runs, target)
	}
}

// TestBudgetLimitSpreadsShortfall is the regression test for a compaction
// that met a budget shortfall: the table being chosen took all of it and
// the rest of the output kept its share, so single tables got 1- to 5-bit
// filters next to 9-bit ones. Now the shortfall is spread evenly, and
// where there is room the table may round up beyond its share while
// leaving the share for the rest.
func TestBudgetLimitSpreadsShortfall(t *testing.T) {
	// 10 tables of 1000 keys, 9 bits each wanted, 80k bits left.
	share, limit := budgetLimit(9, 80_000, 1000, 9000)
	if math.Abs(limit-8) > 1e-9 || math.Abs(share-8) > 1e-9 {
		t.Fatalf("shortfall: share %v limit %v, want both 8 (80k bits over 10k keys)", share, limit)
	}
	share, limit = budgetLimit(9, 100_000, 1000, 9000)
	if share != 9 || math.Abs(limit-19) > 1e-9 {
		t.Fatalf("room: share %v limit %v, want 9 and 19 (the rest at 9 leaves 19k bits)", share, limit)
	}
	if share, limit = budgetLimit(9, -5000, 1000, 0); share != monkeyMinBitsPerKey || limit != monkeyMinBitsPerKey {
		t.Fatalf("nothing left: share %v limit %v, want the minimum", share, limit)
	}
}

// TestMonkeyBottomAloneLeavesRoom: a bottom level written while it is the
// only level (after a full compaction, L0 empty) gets fewer bits than the
// budget, so the level that forms above it finds some; with the moment's
// shape it took the whole budget.
func TestMonkeyBottomAloneLeavesRoom(t *testing.T) {
	d := openMem(t, vfs.NewMem(), budgetShape(&Options{FilterBitsPerKey: 10, FilterAllocation: FilterAllocationMonkey}))
	defer d.Close()
	fillRandom(t, d, rand.New(rand.NewPCG(9, 9)), 4000, map[string]bool{}, nil)
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	v := d.filterBudget.version.Load()
	if len(v.Levels[0]) != 0 || len(v.Levels[NumLevels-1]) == 0 {
		t.Fatalf("want everything in the bottom level, have %d L0 tables", len(v.Levels[0]))
	}
	var inputs []levelTable
	for _, m := range v.Levels[NumLevels-1] {
		inputs = append(inputs, levelTable{level: NumLevels - 1, meta: m})
	}
	rewrite := newFilterTarget(NumLevels-1, inputs)
	share, _, _ := d.monkeyBits(rewrite, 1<<40, 500)
	if share > 9.7 {
		t.Fatalf("the bottom level alone gets %.2f bits per key of 10; want the share of 10/11 of the keys (about 9.55)", share)
	}
}
