package main

import (
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// TestScriptedFillLeavesOneTree: two scripted fills of the same keys,
// under filters of very different sizes (6-bit Bloom, Monkey at 16 bits),
// leave the same tables (levels, key ranges, entries), and the tree is a
// live one: L0 tables and at least two levels below. Filter bytes used to
// count in the picker's level sizes and overlaps, and two such fills
// parted after a few dozen compactions.
func TestScriptedFillLeavesOneTree(t *testing.T) {
	const memTable, keySize, valueSize = 16 << 10, 16, 100
	ks := newKeySet(3, 8_000, keySize)
	load := func(name string, apply func(*config)) treeShape {
		c := config{dir: t.TempDir(), memTableSize: memTable, blockSize: 4096, cacheSize: 1 << 20, scripted: true}
		apply(&c)
		e, err := openSieve("sievekv", c, &ioCounters{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.close()
		r := &runner{name: "sievekv", filter: name, eng: e, io: &ioCounters{}, owner: true, keySize: keySize, valueSize: valueSize}
		tree, err := scriptedFill(r, e, ks, memTable, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %s", name, tree.summary)
		return tree
	}
	bloom := load("bloom/6", func(c *config) { c.filter, c.bloomBits = kv.FilterBloom, 6 })
	monkey := load("auto-monkey/16", func(c *config) {
		c.filter, c.filterBits, c.allocation = kv.FilterAuto, 16, kv.FilterAllocationMonkey
	})
	if !bloom.sameTree(monkey) {
		t.Fatalf("the scripted fills left different trees:\n bloom/6:        %s\n auto-monkey/16: %s", bloom.summary, monkey.summary)
	}
	levels := map[int]bool{}
	for _, s := range bloom.tables {
		levels[s.level] = true
	}
	if !levels[0] || len(levels) < 3 {
		t.Fatalf("not a live multi-level tree: %s", bloom.summary)
	}
	// sameTree must see a difference in any one table.
	other := treeShape{tables: append([]tableSpan(nil), bloom.tables...)}
	other.tables[len(other.tables)/2].entries++
	if bloom.sameTree(other) {
		t.Fatal("sameTree missed a table whose entries differ")
	}
}
