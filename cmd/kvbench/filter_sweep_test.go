package main

import (
	"slices"
	"testing"
)

// TestInterleaveN: every side runs every chunk, in order of chunks, and
// each side leads (and comes last) equally often over sides chunks.
func TestInterleaveN(t *testing.T) {
	const ops, chunk, sides = 10, 3, 3
	var order []int
	seen := make([][]int, sides)
	err := interleaveN(ops, chunk, sides, func(side, lo, hi int) error {
		order = append(order, side)
		seen[side] = append(seen[side], lo, hi)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for side, got := range seen {
		if want := []int{0, 3, 3, 6, 6, 9, 9, 10}; !slices.Equal(got, want) {
			t.Errorf("side %d ran %v, want %v", side, got, want)
		}
	}
	if want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

// TestPairedSpeed: the median of per-chunk ratios ignores one stalled
// chunk that the summed times do not, and unpaired results give none.
func TestPairedSpeed(t *testing.T) {
	a := &result{ChunkSeconds: []float64{1, 1, 1, 1, 20}} // stalled in its last chunk
	b := &result{ChunkSeconds: []float64{2, 2, 2, 2, 2}}
	if s, n, ok := pairedSpeed(a, b); !ok || n != 5 || s != 2 {
		t.Errorf("pairedSpeed = %v over %d (%v), want 2 over 5", s, n, ok)
	}
	if _, _, ok := pairedSpeed(a, &result{ChunkSeconds: []float64{1}}); ok {
		t.Error("pairedSpeed paired results of different chunks")
	}
}
