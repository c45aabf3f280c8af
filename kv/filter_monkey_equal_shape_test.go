package kv

import "testing"

// TestMonkeyBeatsUniformOnEqualShape builds the same multi-level tree (L0
// tables, an upper level and the bottom, of ~1,040-key tables) under both
// allocations at 10 bits per key and compares the FP sum the filters
// predict for an absent-key Get (deterministic: the shape and the filters
// depend on the keys alone). At these table sizes a 9-bit Ribbon costs 9.9
// bits per key, so Monkey has bits to move only if the bottom level keeps
// to its share (9.4) instead of rounding up to 9.9, and only then do L0
// and the upper level get theirs; when every table rounded up, Monkey's
// sum was uniform's. A full compaction, with no other run left, must keep
// the bottom level's filters as good as uniform's.
func TestMonkeyBeatsUniformOnEqualShape(t *testing.T) {
	const keys, flushKeys, l0Left, gets = 100_000, 1040, 2, 1000
	fill := func(alloc FilterAllocation) equalShapeResult {
		return fillEqualShape(t, Options{FilterAllocation: alloc, LBaseMaxBytes: 1 << 20}, 5, keys, flushKeys, l0Left, gets)
	}
	uniform, monkey := fill(FilterAllocationUniform), fill(FilterAllocationMonkey)
	t.Logf("uniform: %.5f predicted, %.2f bits/key,%s", uniform.predicted, uniform.bitsPerKey, uniform.shape)
	t.Logf("monkey:  %.5f predicted, %.2f bits/key,%s", monkey.predicted, monkey.bitsPerKey, monkey.shape)
	if uniform.shape == "" || monkey.bitsPerKey > uniform.bitsPerKey+0.01 {
		t.Fatalf("Monkey spent %.2f bits per key against uniform's %.2f", monkey.bitsPerKey, uniform.bitsPerKey)
	}
	if ratio := monkey.predicted / uniform.predicted; ratio > 0.6 {
		t.Fatalf("Monkey's FP sum is %.2fx uniform's on the same shape, want <= 0.6x", ratio)
	}
	if monkey.compactedPredicted > 1.05*uniform.compactedPredicted {
		t.Fatalf("after a full compaction Monkey's FP is %.5f against uniform's %.5f", monkey.compactedPredicted, uniform.compactedPredicted)
	}
}
