package main

import (
	"slices"
	"testing"
)

// TestEngineOrderRotates checks that a workload's first engine depends on
// the workload and -rotate only, and that -rotate 0 .. n-1 starts a
// workload once with every engine.
func TestEngineOrderRotates(t *testing.T) {
	engines := []string{"sievekv", "pebble", "goleveldb", "sievekv-notsi"}
	for _, w := range allWorkloads {
		var firsts []string
		for r := range len(engines) {
			o := engineOrder(engines, w, r)
			if len(o) != len(engines) {
				t.Fatalf("%s, rotate %d: order %v lost engines", w, r, o)
			}
			firsts = append(firsts, o[0])
		}
		slices.Sort(firsts)
		want := slices.Sorted(slices.Values(engines))
		if !slices.Equal(firsts, want) {
			t.Errorf("%s: first engines over rotate 0..%d are %v, want each once", w, len(engines)-1, firsts)
		}
	}
	// The same workload starts with the same engine whatever precedes it.
	if a, b := engineOrder(engines, "overwrite", 0)[0], engineOrder(engines, "overwrite", len(engines))[0]; a != b {
		t.Errorf("overwrite starts with %s and %s at rotate 0 and %d", a, b, len(engines))
	}
	if got := engineOrder(engines, "fillrandom", -1)[0]; got != "sievekv" {
		t.Errorf("fillrandom at rotate -1 starts with %s, want sievekv", got)
	}
}
