package main

import (
	"strings"
	"testing"
)

// TestKVBenchScanPair runs the paired scans end to end: both engines
// answer every scan right (measure's checks), each reports its own ops,
// reads and shape, and the header says how they were measured.
func TestKVBenchScanPair(t *testing.T) {
	out, rs := runPairTiny(t, "sievekv,sievekv-rf", "fillrandom,scanempty,scanshort")
	if !strings.Contains(out, "measured in alternating chunks") {
		t.Errorf("header does not say the scans were paired:\n%s", out)
	}
	for _, w := range []string{"scanempty", "scanshort"} {
		for _, e := range scanPair.engines {
			r := find(rs, w, e)
			if r == nil || r.Ops != 1000 || r.OpsPerSec <= 0 || r.ElapsedSec <= 0 || r.P50us <= 0 || r.EngineShape == "" {
				t.Errorf("%s on %s: %+v", e, w, r)
			}
		}
	}
	if rf, plain := find(rs, "scanempty", "sievekv-rf"), find(rs, "scanempty", "sievekv"); rf == nil || plain == nil ||
		rf.DataBlockReadsPerOp > 0.05 || plain.DataBlockReadsPerOp <= rf.DataBlockReadsPerOp {
		t.Errorf("scanempty reads per scan: with range filters %+v, without %+v", rf, plain)
	}
}
