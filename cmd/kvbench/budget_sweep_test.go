package main

import (
	"bytes"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
)

// TestKVBenchBudgetSweep runs the budget sweep on a few thousand keys:
// every family is loaded at every budget (one point for the fixed-size
// binary fuse 8), every absent Get is answered absent (measure fails
// otherwise), the budget chart is a real PNG, and the per-run report
// (-budgetruns) covers every sievekv point's runs with measured figures.
func TestKVBenchBudgetSweep(t *testing.T) {
	runsPath := filepath.Join(t.TempDir(), "runs.md")
	fl, err := parseFlags([]string{"-n", "3000", "-ops", "1000", "-memtable", "65536", "-budgetsweep", "-budgetbits", "6,10", "-budgetruns", runsPath}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{memTableSize: fl.memTable, blockSize: fl.blockSize, cacheSize: 65536, filterBits: 10,
		allocation: kv.FilterAllocationMonkey}
	rs, err := runBudgetSweep(newKeySet(fl.seed, fl.n, fl.keySize), cfg, fl, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Four families at each of the two budgets, binary fuse 8 once.
	if want := 4*2 + 1; len(rs) != want {
		t.Errorf("%d budget sweep points, want %d", len(rs), want)
	}
	for _, f := range []string{"bloom/6", "bloom/10", "binary-fuse-8/fixed", "auto-uniform/10", "auto-monkey/6", "pebble-l6filters/10"} {
		if r := findFilter(rs, budgetSweepWorkload, f); r == nil || r.Found != 0 || r.Ops != budgetReads(fl.ops) {
			t.Errorf("budget sweep point %s: %+v", f, r)
		}
	}
	at6, at10 := findFilter(rs, budgetSweepWorkload, "auto-monkey/6"), findFilter(rs, budgetSweepWorkload, "auto-monkey/10")
	if at6 != nil && at10 != nil && at6.FilterBytesPerKey >= at10.FilterBytesPerKey {
		t.Errorf("auto-monkey spent %.3f filter bytes per key at 6 bits, %.3f at 10", at6.FilterBytesPerKey, at10.FilterBytesPerKey)
	}
	report, err := os.ReadFile(runsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## auto-monkey/10: 3000 keys", "## bloom/6: 3000 keys", "| L6 |", "best cache-aware widths"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("per-run report lacks %q:\n%s", want, report)
		}
	}
	path, err := budgetChart(filepath.Join(t.TempDir(), "kv_filter_budget.png"), rs)
	if err != nil || path == "" {
		t.Fatalf("budget chart: %q, %v", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

// TestKVBenchReadMissingLive: readmissing-live runs on the DB as the fill
// left it, before the full compaction, with sievekv's default auto filter,
// and its shape and the filter budget goals are reported.
func TestKVBenchReadMissingLive(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run([]string{"-n", "3000", "-ops", "1000", "-memtable", "65536", "-cache", "65536", "-progress=false",
		"-engines", "sievekv,pebble-l6filters", "-workloads", "fillrandom,readmissing-live,readmissing",
		"-dir", filepath.Join(t.TempDir(), "db")}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kvbench: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"== readmissing-live\n", "sievekv auto-monkey-10 shape: L",
		"readmissing-live: reads per Get <= 0.2x pebble-l6filters"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if live, full := strings.Index(out, "== readmissing-live\n"), strings.Index(out, "== readmissing\n"); live < 0 || full < live {
		t.Errorf("readmissing-live did not run before readmissing")
	}
}

// TestFilterBudgetGoalsVerdict checks the budget goals' arithmetic on
// made-up figures: a ratio within the goal but at more filter memory is
// not met, and plain Pebble is not the live-shape goal's peer.
func TestFilterBudgetGoalsVerdict(t *testing.T) {
	fp := func(v float64) *float64 { return &v }
	rs := []result{
		{Workload: "readmissing-live", Engine: "sievekv", DataBlockReadsPerOp: 0.001, FilterBytesPerKey: 1.2},
		{Workload: "readmissing-live", Engine: "pebble-l6filters", DataBlockReadsPerOp: 0.01, FilterBytesPerKey: 1.25},
		{Workload: "readmissing-live", Engine: "pebble", DataBlockReadsPerOp: 0.001, FilterBytesPerKey: 1.3},
		// The budget pairs are judged on the filters' false positives,
		// not on the cache-miss reads (which here say the opposite).
		{Workload: budgetSweepWorkload, Filter: "bloom/10", DataBlockReadsPerOp: 0.001, EngineFilterFPPerOp: fp(0.01), FilterBytesPerKey: 1.27},
		{Workload: budgetSweepWorkload, Filter: "auto-uniform/10", DataBlockReadsPerOp: 0.003, EngineFilterFPPerOp: fp(0.003), FilterBytesPerKey: 1.28},
		{Workload: budgetSweepWorkload, Filter: "auto-monkey/10", DataBlockReadsPerOp: 0.003, EngineFilterFPPerOp: fp(0.0015), FilterBytesPerKey: 1.25},
		// Summed ops/s favour binary fuse 8; the paired chunks favour
		// auto-monkey in most chunks.
		{Workload: "readmissing-sweep", Filter: "auto-monkey", OpsPerSec: 100, ChunkSeconds: []float64{1, 1, 9}},
		{Workload: "readmissing-sweep", Filter: "binary-fuse-8", OpsPerSec: 200, ChunkSeconds: []float64{1.1, 1.2, 1}},
	}
	same := ": filter false positives per absent Get <= "
	want := map[string]bool{
		"readmissing-live: reads per Get <= 0.2x pebble-l6filters at <= its filter bytes/key":                           true,
		"budget sweep at 10 bits: auto-uniform vs bloom" + same + "0.35x at <= its filter memory, same tree":            false,
		"budget sweep at 10 bits: auto-monkey vs auto-uniform" + same + "0.60x at <= its filter memory, same tree":      true,
		"filter sweep: readmissing ops/s with auto-monkey >= binary-fuse-8's (interleaved, median of per-chunk ratios)": true,
	}
	gs := filterBudgetGoals(rs)
	if len(gs) != len(want) {
		t.Errorf("%d goals, want %d: %+v", len(gs), len(want), gs)
	}
	for _, g := range gs {
		met, ok := want[g.Goal]
		if !ok || g.Met != met {
			t.Errorf("goal %q: met=%v, want present with met=%v (present %v)", g.Goal, g.Met, met, ok)
		}
	}
}
