package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
)

// TestKVBenchScanPair runs the paired scans end to end: both engines
// answer every scan right (measure's checks), each reports its own ops,
// reads and shape, and the header says how they were measured.
func TestKVBenchScanPair(t *testing.T) {
	dir := t.TempDir()
	jsonOut := filepath.Join(dir, "out.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-n", "3000", "-ops", "1000", "-memtable", "65536", "-cache", "65536", "-progress=false",
		"-engines", "sievekv,sievekv-rf", "-workloads", "fillrandom,scanempty,scanshort",
		"-dir", filepath.Join(dir, "db"), "-json", jsonOut}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kvbench: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "measured in alternating chunks") {
		t.Errorf("header does not say the scans were paired:\n%s", stdout.String())
	}
	rs := testutil.ReadJSON[[]result](t, jsonOut)
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
