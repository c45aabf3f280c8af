package kv

import (
	"math"
	"testing"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// budgetTable is a live table of keys keys whose filter spends bitsPerKey
// on its payload, for monkeyBits to count.
func budgetTable(num, keys uint64, bitsPerKey float64) *manifest.TableMetadata {
	payload := uint64(math.Ceil(bitsPerKey * float64(keys) / 8))
	return &manifest.TableMetadata{FileNum: num, Props: &sstable.Properties{
		NumEntries: keys, FilterKeys: keys, FilterSize: payload + filters.TableFilterHeaderBytes}}
}

// TestMonkeyFlushNotHeldBackByLevelsAtTheirWidth is the regression test
// for kvbench's 1M-key tree: L6 and L5 at the widths their shares buy
// (9- and 11-bit Ribbons of 26k-key tables), one L0 table at 14.5 bits
// per key, and a second flush due. A fixed reserve of a quarter bit per
// key left that flush the budget (10 bits, a 9-bit Ribbon) although the
// levels needed none of it; with the reserve set by the levels' deficit
// it gets what is left, more than 11 bits. When the bottom level's tables
// are a width short, the bits they do not spend are their rewrite's: the
// flush gets no more than with the bottom at its width.
func TestMonkeyFlushNotHeldBackByLevelsAtTheirWidth(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{FilterBitsPerKey: 10, FilterAllocation: FilterAllocationMonkey,
		DisableAutomaticCompactions: true})
	defer d.Close()
	const tableKeys, flushKeys = 26_000, 28_000
	shape := func(bottomBits float64) *manifest.Version {
		v := &manifest.Version{}
		num := uint64(1000)
		num++
		v.Levels[0] = append(v.Levels[0], budgetTable(num, flushKeys, 14.5))
		for range 7 {
			num++
			v.Levels[5] = append(v.Levels[5], budgetTable(num, tableKeys, filters.FingerprintBitsPerKey(tableKeys, 11)))
		}
		for range 28 {
			num++
			v.Levels[6] = append(v.Levels[6], budgetTable(num, tableKeys, bottomBits))
		}
		return v
	}
	flushShare := func(v *manifest.Version) float64 {
		d.filterBudget.version.Store(v)
		d.filterBudget.mu.Lock()
		d.filterBudget.flushKeys = flushKeys
		d.filterBudget.mu.Unlock()
		share, _, _ := d.monkeyBits(newFilterTarget(0, nil), 1<<40, flushKeys)
		return share
	}
	atWidth := flushShare(shape(filters.FingerprintBitsPerKey(tableKeys, 9)))
	if atWidth < 11 {
		t.Fatalf("levels at their width: the flush gets %.2f bits per key, want more than 11", atWidth)
	}
	if short := flushShare(shape(filters.FingerprintBitsPerKey(tableKeys, 8))); short > atWidth+0.05 {
		t.Fatalf("the bottom level a width short: the flush gets %.2f bits per key, more than the %.2f it gets with the bottom at its width",
			short, atWidth)
	}
}

// TestLevelDeficit: a level at the width its share buys owes nothing, one
// a width short owes a width's bits per key, and one over owes nothing.
func TestLevelDeficit(t *testing.T) {
	const keys, tables = 260_000, 10
	nine, eight := filters.FingerprintBitsPerKey(keys/tables, 9), filters.FingerprintBitsPerKey(keys/tables, 8)
	if d := levelDeficit(keys, tables, uint64(nine*keys), 9.56); d > keys*1e-3 {
		t.Fatalf("a level at its width owes %.0f bits", d)
	}
	if d, want := levelDeficit(keys, tables, uint64(eight*keys), 9.56), (nine-eight)*keys; math.Abs(d-want) > 1 {
		t.Fatalf("a level a width short owes %.0f bits, want %.0f", d, want)
	}
	if d := levelDeficit(keys, tables, uint64(11*keys), 9.56); d != 0 {
		t.Fatalf("a level over its width owes %.0f bits", d)
	}
	if d := levelDeficit(0, 0, 0, 9.56); d != 0 {
		t.Fatalf("an empty level owes %.0f bits", d)
	}
}
