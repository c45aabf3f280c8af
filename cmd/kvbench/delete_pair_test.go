package main

import (
	"strings"
	"testing"
)

// TestKVBenchDeletePair runs deleterandom paired end to end: both engines
// answer every Get right (measure's checks), each phase reports both
// engines with their own ops, marked as paired, and the header and the
// goal row say how the two were measured.
func TestKVBenchDeletePair(t *testing.T) {
	out, rs := runPairTiny(t, "sievekv,sievekv-notsi,sievekv-control", "fillrandom,deleterandom")
	if !strings.Contains(out, "deleterandom: sievekv and sievekv-notsi run it on their main DBs") ||
		!strings.Contains(out, "measured in alternating chunks") || strings.Contains(out, "scanempty/scanshort: sievekv and sievekv-rf") {
		t.Errorf("header does not say (only) the deletes were paired:\n%s", out)
	}
	if !strings.Contains(out, "sievekv-control (configured as sievekv) runs in the same interleave") {
		t.Errorf("header does not name the control:\n%s", out)
	}
	if !strings.Contains(out, "ops/s with the tombstone index >= without (sievekv-notsi, paired: alternating chunks)") ||
		!strings.Contains(out, "A/A against sievekv-control: per-chunk median") {
		t.Errorf("the goal row does not say its figure is paired:\n%s", out)
	}
	nd := int(3000 * deleteFraction)
	for _, c := range []struct {
		w   string
		ops int
	}{{"deleterandom", nd}, {"deleterandom-getdeleted", 1000}, {"deleterandom-getkept", 1000}} {
		for i, e := range deletePair.engines {
			r := find(rs, c.w, e)
			if r == nil || r.Ops != c.ops || r.OpsPerSec <= 0 || r.ElapsedSec <= 0 || r.P50us <= 0 || r.EngineShape == "" ||
				r.PairedWith != deletePair.engines[1-i] {
				t.Errorf("%s on %s: %+v", e, c.w, r)
			}
		}
	}
	for _, w := range []string{"deleterandom", "deleterandom-getdeleted", "deleterandom-getkept"} {
		if c := find(rs, w, "sievekv-control"); c == nil || c.PairedWith != "sievekv" || len(c.ChunkSeconds) == 0 ||
			len(c.ChunkSeconds) != len(find(rs, w, "sievekv").ChunkSeconds) {
			t.Errorf("%s: the control is not measured in the pair's chunks: %+v", w, c)
		}
	}
	if find(rs, "fillrandom", "sievekv-control") == nil {
		t.Error("the control did not load its DB as sievekv-notsi does")
	}
	on, off := find(rs, "deleterandom", "sievekv"), find(rs, "deleterandom", "sievekv-notsi")
	if on == nil || off == nil || on.WriteAmp <= 0 || off.WriteAmp <= 0 || on.SpaceAmp <= 0 ||
		on.EngineTombstoneIndexPeak == 0 || off.EngineTombstoneIndexPeak != 0 {
		t.Errorf("deleterandom: the deletes' flush or the index is not reported for sievekv alone: %+v / %+v", on, off)
	}
}

// TestDeleteSpeedGoal: the paired goal is judged on the per-chunk median
// (one stalled chunk does not decide it), with a control a shortfall
// within the A/A median's distance from 1 is met and a wider one is not,
// and without chunk times the summed ops/s decide.
func TestDeleteSpeedGoal(t *testing.T) {
	mk := func(engine, pairedWith string, chunks ...float64) result {
		var sum float64
		for _, c := range chunks {
			sum += c
		}
		return result{Workload: "deleterandom", Engine: engine, PairedWith: pairedWith, Ops: 100, OpsPerSec: 100 / sum,
			ChunkSeconds: chunks, ChunkCPUSeconds: chunks}
	}
	// on is 4% slower per chunk, and stalled 20x in one chunk.
	on := mk("sievekv", "sievekv-notsi", 1.04, 1.04, 1.04, 1.04, 20)
	off := mk("sievekv-notsi", "sievekv", 1, 1, 1, 1, 1)
	for _, c := range []struct {
		name    string
		rs      []result
		met     bool
		contain string
	}{
		{"no control", []result{on, off}, false, "per-chunk median 0.962x"},
		{"wide A/A", []result{on, off, mk("sievekv-control", "sievekv", 1, 1, 1, 1, 1)}, false, "A/A against sievekv-control: per-chunk median 0.962x"},
		{"narrow A/A", []result{on, off, mk("sievekv-control", "sievekv", 1.03, 1.03, 1.03, 1.03, 1.03)}, false, "A/A against sievekv-control"},
		{"faster", []result{mk("sievekv", "sievekv-notsi", 1, 1, 1, 1, 20), mk("sievekv-notsi", "sievekv", 1.1, 1.1, 1.1, 1.1, 1.1)}, true, "per-chunk median 1.100x"},
	} {
		g, ok := deleteSpeedGoal(c.rs)
		if !ok || !g.Known || g.Met != c.met || !strings.Contains(g.Measured, c.contain) || !strings.Contains(g.Goal, "paired") {
			t.Errorf("%s: %+v (%v)", c.name, g, ok)
		}
	}
	// Unpaired (one after the other): the summed ops/s decide.
	slow, fast := result{Workload: "deleterandom", Engine: "sievekv", OpsPerSec: 90}, result{Workload: "deleterandom", Engine: "sievekv-notsi", OpsPerSec: 100}
	if g, ok := deleteSpeedGoal([]result{slow, fast}); !ok || g.Met || strings.Contains(g.Measured, "per-chunk") {
		t.Errorf("unpaired: %+v (%v)", g, ok)
	}
	if _, ok := deleteSpeedGoal([]result{slow}); ok {
		t.Error("a goal row without sievekv-notsi")
	}
}
