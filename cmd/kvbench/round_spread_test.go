package main

import (
	"strings"
	"testing"
)

// TestRoundSpreadGoal: an isolated run's ratio goal is judged on each
// engine's median over the rounds, reports the per-round ratios' range,
// and says "within noise" exactly when that range holds the limit.
func TestRoundSpreadGoal(t *testing.T) {
	mk := func(e string, ops, wa []float64) []result {
		var rounds []result
		for k := range ops {
			rounds = append(rounds, result{Workload: "fillseq", Engine: e, OpsPerSec: ops[k], WriteAmp: wa[k]})
		}
		return rounds
	}
	run := func(sOps, pOps, sWA, pWA []float64) []goal {
		s, p := mk("sievekv", sOps, sWA), mk("pebble", pOps, pWA)
		var rounds [][]result
		for k := range s {
			rounds = append(rounds, []result{s[k], p[k]})
		}
		return goals(medianRounds(rounds, []string{"sievekv", "pebble"}))
	}
	get := func(gs []goal, prefix string) goal {
		for _, g := range gs {
			if strings.HasPrefix(g.Goal, prefix) {
				return g
			}
		}
		t.Fatalf("no goal %q in %v", prefix, gs)
		return goal{}
	}
	// Rounds disagree: 0.98, 1.02, 0.97 -> median ratio 0.98, range
	// holds 1.0. The write amps' medians (not the median-ops/s round's
	// 3.0) decide the write-amp goal: 2.0 vs 2.1.
	gs := run([]float64{98, 102, 97}, []float64{100, 100, 100}, []float64{3.0, 2.0, 1.9}, []float64{2.1, 2.1, 2.2})
	ops := get(gs, "fillseq: ops/s")
	if ops.Met || !strings.Contains(ops.Measured, "0.97-1.02") || !strings.Contains(ops.Measured, "within noise") {
		t.Errorf("disagreeing rounds: %+v", ops)
	}
	wa := get(gs, "fillseq: write amp")
	if !wa.Met || !strings.HasPrefix(wa.Measured, "2 vs 2.1 =") || !strings.Contains(wa.Measured, "within noise") {
		t.Errorf("write amp on the median-ops/s round's figure, or its spread lost: %+v", wa)
	}
	// Every round below: NOT met, and not within noise.
	gs = run([]float64{90, 91, 92}, []float64{100, 100, 100}, []float64{2, 2, 2}, []float64{3, 3, 3})
	if g := get(gs, "fillseq: ops/s"); g.Met || strings.Contains(g.Measured, "within noise") || !strings.Contains(g.Measured, "over 3 rounds") {
		t.Errorf("rounds agreeing below the goal: %+v", g)
	}
	// One round only: no spread to report.
	gs = run([]float64{110}, []float64{100}, []float64{2}, []float64{3})
	if g := get(gs, "fillseq: ops/s"); !g.Met || strings.Contains(g.Measured, "round") {
		t.Errorf("one round: %+v", g)
	}
}
