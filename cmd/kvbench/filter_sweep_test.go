package main

import (
	"slices"
	"testing"
)

// TestInterleaveN: every side runs every chunk, in order of chunks, and
// over a cycle (interleaveCycle) each side leads equally often and runs
// straight after each of its neighbours equally often, across the
// chunks' boundaries too with three sides (TestInterleaveBalance checks
// three sides' cycle in full).
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
	if want := []int{0, 1, 2, 0, 2, 1, 2, 0, 1, 2, 1, 0}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	for _, n := range []int{3, 4, 5} {
		var stream []int
		leads := make([]int, n)
		cycle := interleaveCycle(n)
		if err := interleaveN(cycle, 1, n, func(side, lo, hi int) error {
			if len(stream)%n == 0 {
				leads[side]++
			}
			stream = append(stream, side)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// Within chunks for any number of sides; with three, across the
		// chunks' boundaries (and from the last chunk round to the first) too.
		follows := map[[2]int]int{}
		for i, s := range stream {
			if n == 3 || (i+1)%n != 0 {
				follows[[2]int{s, stream[(i+1)%len(stream)]}]++
			}
		}
		for side := range n {
			if leads[side] != cycle/n {
				t.Errorf("%d sides: side %d led %d of %d chunks, want %d", n, side, leads[side], cycle, cycle/n)
			}
			next, prev := (side+1)%n, (side+n-1)%n
			if follows[[2]int{side, next}] == 0 || follows[[2]int{side, next}] != follows[[2]int{side, prev}] {
				t.Errorf("%d sides: side %d ran before %d %d times and before %d %d times, want equal", n, side, next, follows[[2]int{side, next}], prev, follows[[2]int{side, prev}])
			}
		}
		if n == 3 {
			for pair, c := range follows {
				if pair[0] == pair[1] || c != cycle/2 {
					t.Errorf("3 sides: %d ran straight before %d %d times, want every ordered pair of two sides %d times: %v", pair[0], pair[1], c, cycle/2, follows)
				}
			}
		}
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
