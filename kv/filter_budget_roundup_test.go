package kv

import (
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/vfs"
)

// TestMonkeyBottomRoundsUpIntoUnclaimedBits: a bottom-level table
// rewritten on a tree of L5 (10-bit Ribbons) and L6 (8-bit ones, below
// the budget; 9-bit ones cost 9.9 bits per key at these table sizes) with no L0 table has bits left that no favoured run will
// claim when flushes are small: it may round up past its share (to the
// 9-bit width a uniform allocation would give it) instead of leaving them
// unspent. When the flushes are large enough that L0 tables at their
// share would take those bits, it keeps to its share.
func TestMonkeyBottomRoundsUpIntoUnclaimedBits(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{FilterBitsPerKey: 10, FilterAllocation: FilterAllocationMonkey,
		DisableAutomaticCompactions: true})
	defer d.Close()
	const tableKeys = 1040
	v := &manifest.Version{}
	num := uint64(1000)
	for range 25 {
		num++
		v.Levels[5] = append(v.Levels[5], budgetTable(num, tableKeys, filters.FingerprintBitsPerKey(tableKeys, 10)))
	}
	for range 200 {
		num++
		v.Levels[6] = append(v.Levels[6], budgetTable(num, tableKeys, filters.FingerprintBitsPerKey(tableKeys, 8)))
	}
	d.filterBudget.version.Store(v)
	nine := filters.FingerprintBitsPerKey(tableKeys, 9)
	bottomBits := func(flushKeys uint64) (share, limit float64, roundUp bool) {
		d.filterBudget.mu.Lock()
		d.filterBudget.flushKeys = flushKeys
		d.filterBudget.mu.Unlock()
		// Rewrite one bottom table in place (an L6 -> L6 move stands in
		// for any bottom output that leaves other tables live).
		target := newFilterTarget(6, []levelTable{{level: 6, meta: v.Levels[6][0]}})
		return d.monkeyBits(target, 1<<40, tableKeys)
	}

	// L0 tables of 1,040 keys at their share (about 18 bits per key, up
	// to L0StopWritesThreshold of them) leave room; of 4,000 keys they
	// would take it all.
	const smallFlush, largeFlush = 1040, 4000
	share, limit, roundUp := bottomBits(smallFlush)
	if share >= nine {
		t.Fatalf("bottom share %.2f already buys a 9-bit filter (%.2f): the test needs one that does not", share, nine)
	}
	if !roundUp || limit < nine {
		t.Fatalf("small flushes, no L0: bottom limit %.2f (round up %v), want at least %.2f (a 9-bit filter)", limit, roundUp, nine)
	}
	choice, err := filters.ChooseTableFilterPriced(tableKeys, limit, filters.MarginalBitValue(share, bitsPerFPHalving))
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(choice.PayloadBits) / tableKeys; got < nine-0.01 {
		t.Fatalf("with limit %.2f the choice spends %.2f bits per key, want the 9-bit width's %.2f", limit, got, nine)
	}

	if share, limit, roundUp := bottomBits(largeFlush); roundUp && limit > share {
		t.Fatalf("large flushes: the bottom may spend %.2f bits per key past its share %.2f, which L0 tables would claim", limit, share)
	}
}
