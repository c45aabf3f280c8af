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
	out, rs := runPairTiny(t, "sievekv,sievekv-notsi", "fillrandom,deleterandom")
	if !strings.Contains(out, "deleterandom: sievekv and sievekv-notsi run it on their main DBs") ||
		!strings.Contains(out, "measured in alternating chunks") || strings.Contains(out, "scanempty/scanshort: sievekv and sievekv-rf") {
		t.Errorf("header does not say (only) the deletes were paired:\n%s", out)
	}
	if !strings.Contains(out, "ops/s with the tombstone index >= without (sievekv-notsi, paired: alternating chunks)") {
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
	on, off := find(rs, "deleterandom", "sievekv"), find(rs, "deleterandom", "sievekv-notsi")
	if on == nil || off == nil || on.WriteAmp <= 0 || off.WriteAmp <= 0 || on.SpaceAmp <= 0 ||
		on.EngineTombstoneIndexPeak == 0 || off.EngineTombstoneIndexPeak != 0 {
		t.Errorf("deleterandom: the deletes' flush or the index is not reported for sievekv alone: %+v / %+v", on, off)
	}
}
