package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
)

// TestInterleaveAlternates: every op runs once on each side, chunk by
// chunk, both sides on the same ops in a chunk, and the side that goes
// first alternates, so neither is always measured first.
func TestInterleaveAlternates(t *testing.T) {
	type run struct{ side, lo, hi int }
	for _, tc := range []struct{ ops, chunk int }{{1000, 256}, {256, 256}, {1, 256}, {7, 2}} {
		var runs []run
		seen := [2][]int{make([]int, tc.ops), make([]int, tc.ops)}
		err := interleave(tc.ops, tc.chunk, func(side, lo, hi int) error {
			runs = append(runs, run{side, lo, hi})
			for i := lo; i < hi; i++ {
				seen[side][i]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for side := range seen {
			for i, n := range seen[side] {
				if n != 1 {
					t.Fatalf("ops %d chunk %d: op %d ran %d times on side %d", tc.ops, tc.chunk, i, n, side)
				}
			}
		}
		for k := 0; 2*k < len(runs); k++ {
			a, b := runs[2*k], runs[2*k+1]
			if a.side != k%2 || b.side != 1-k%2 || a.lo != b.lo || a.hi != b.hi || a.hi-a.lo > tc.chunk {
				t.Fatalf("ops %d chunk %d: chunk %d ran as %+v then %+v", tc.ops, tc.chunk, k, a, b)
			}
		}
	}
	stop := errors.New("stop")
	calls := 0
	err := interleave(1000, 10, func(side, lo, hi int) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("interleave went on after an error: %v after %d calls", err, calls)
	}
}

// TestScanPairPicks: sievekv and sievekv-rf pair on the scan workloads
// only, and only when both run them on a DB of their own.
func TestScanPairPicks(t *testing.T) {
	open := func(string, *ioCounters) (engine, error) { return nil, errors.New("not opened in this test") }
	plain := &runner{name: "sievekv", owner: true, open: open}
	rf := &runner{name: "sievekv-rf", owner: true, open: open, only: map[string]bool{"scanempty": true, "scanshort": true}}
	peb := &runner{name: "pebble", owner: true, open: open}
	view := &runner{name: "sievekv-rf", only: rf.only}
	if pair, ok := scanPair([]*runner{peb, rf, plain}, "scanshort"); !ok || pair[0] != plain || pair[1] != rf {
		t.Errorf("scanshort: pair %v, %v", pair, ok)
	}
	for _, c := range []struct {
		order []*runner
		w     string
	}{
		{[]*runner{plain, rf, peb}, "readrandom"},
		{[]*runner{plain, peb}, "scanempty"},
		{[]*runner{plain, view}, "scanempty"},
	} {
		if _, ok := scanPair(c.order, c.w); ok {
			t.Errorf("%s paired with %d runners", c.w, len(c.order))
		}
	}
}

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
		for _, e := range scanPairEngines {
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
