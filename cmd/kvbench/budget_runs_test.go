package main

import (
	"math"
	"testing"

	"github.com/sievekv/sievekv/filters"
)

// TestBestAllocationsBeatUniform: on a tree of two small L0 tables, an
// upper level and the bottom, every table at a 9-bit width (uniform), the
// per-run report's bounds spend no more than uniform's bits and reach a
// lower FP sum, the whole-width one within the bits it was given; and
// weighting the L0 tables by a zero miss rate takes their bits and leaves
// the levels no worse.
func TestBestAllocationsBeatUniform(t *testing.T) {
	mk := func(name string, tables int, keys uint64) *budgetRun {
		r := &budgetRun{name: name}
		for range tables {
			r.tables = append(r.tables, keys)
			r.keys += keys
		}
		return r
	}
	runs := []*budgetRun{mk("L0 a", 1, 1500), mk("L0 b", 1, 1500), mk("L5", 30, 1600), mk("L6", 120, 1600)}
	var total, uniformFP float64
	for _, r := range runs {
		for _, n := range r.tables {
			total += filters.FingerprintBitsPerKey(int(n), 9) * float64(n)
		}
		uniformFP += math.Exp2(-9)
	}
	ones := []float64{1, 1, 1, 1}
	best, fps, bits := bestDiscrete(runs, ones, total)
	var spent, sum float64
	for i := range runs {
		spent += bits[i]
		sum += fps[i]
	}
	t.Logf("uniform %.5f, best widths %.5f (runs %.5f) at %.0f of %.0f bits", uniformFP, best, sum, spent, total)
	if spent > total || best >= 0.7*uniformFP || math.Abs(sum-best) > 1e-12 {
		t.Fatalf("best widths: FP %.5f (runs sum %.5f) at %.0f bits; uniform %.5f at %.0f", best, sum, spent, uniformFP, total)
	}
	ideal, _ := continuousMonkey(runs, total)
	if ideal >= uniformFP {
		t.Fatalf("continuous Monkey %.5f not below uniform %.5f", ideal, uniformFP)
	}
	aware, _, awareBits := bestDiscrete(runs, []float64{0, 0, 1, 1}, total)
	if awareBits[0] >= bits[0] || aware > fps[2]+fps[3] {
		t.Fatalf("cached L0 kept its bits (%.0f, was %.0f) or the levels lost: %.5f against %.5f",
			awareBits[0], bits[0], aware, fps[2]+fps[3])
	}
}
