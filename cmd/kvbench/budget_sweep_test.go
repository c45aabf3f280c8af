package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKVBenchBudgetSweep runs readmissing-live and the budget sweep on a
// few thousand keys: every family is loaded at every budget (one point for
// the fixed-size binary fuse 8), every absent Get is answered absent
// (measure fails otherwise), the budget chart is a real PNG, and the goals
// of the filter budget are reported.
func TestKVBenchBudgetSweep(t *testing.T) {
	dir := t.TempDir()
	jsonOut, charts := filepath.Join(dir, "out.json"), filepath.Join(dir, "charts")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-n", "3000", "-ops", "1000", "-memtable", "65536", "-cache", "65536", "-progress=false",
		"-engines", "sievekv,pebble-l6filters", "-workloads", "fillrandom,readmissing-live,readmissing", "-budgetsweep",
		"-dir", filepath.Join(dir, "db"), "-json", jsonOut, "-plot", charts}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kvbench: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"readmissing-live", "readmissing"} {
		for _, e := range []string{"sievekv", "pebble-l6filters"} {
			if find(rs, w, e) == nil {
				t.Errorf("no result for %s on %s", e, w)
			}
		}
	}
	if s := find(rs, "readmissing-live", "sievekv"); s == nil || !strings.Contains(s.EngineShape, "L") {
		t.Errorf("readmissing-live has no sievekv shape: %+v", s)
	} else if s.Filter != "auto-monkey-10" {
		t.Errorf("sievekv ran with filter %q, want the default auto-monkey-10", s.Filter)
	}
	points := 0
	for _, r := range rs {
		if r.Workload == budgetSweepWorkload {
			points++
			if r.Found != 0 {
				t.Errorf("%s found %d absent keys", r.Filter, r.Found)
			}
		}
	}
	// Four families at each of the 5 default budgets, binary fuse 8 once.
	if want := 4*5 + 1; points != want {
		t.Errorf("%d budget sweep points, want %d", points, want)
	}
	for _, f := range []string{"bloom/10", "binary-fuse-8/fixed", "auto-uniform/10", "auto-monkey/10", "pebble-l6filters/10"} {
		if findFilter(rs, budgetSweepWorkload, f) == nil {
			t.Errorf("no budget sweep point %s", f)
		}
	}
	f, err := os.Open(filepath.Join(charts, "kv_filter_budget.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("kv_filter_budget.png: %v", err)
	}
	for _, g := range []string{"readmissing-live: reads per Get <= 0.2x pebble-l6filters",
		"auto-monkey vs auto-uniform: reads per absent Get <= 0.60x"} {
		if !strings.Contains(stdout.String(), g) {
			t.Errorf("output lacks the goal %q", g)
		}
	}
}

// TestFilterBudgetGoalsVerdict checks the budget goals' arithmetic on
// made-up figures: a ratio within the goal but at more filter memory is
// not met.
func TestFilterBudgetGoalsVerdict(t *testing.T) {
	rs := []result{
		{Workload: "readmissing-live", Engine: "sievekv", DataBlockReadsPerOp: 0.001, FilterBytesPerKey: 1.2},
		{Workload: "readmissing-live", Engine: "pebble-l6filters", DataBlockReadsPerOp: 0.01, FilterBytesPerKey: 1.25},
		{Workload: "readmissing", Engine: "sievekv", DataBlockReadsPerOp: 0.001, FilterBytesPerKey: 1.3},
		{Workload: "readmissing", Engine: "pebble-l6filters", DataBlockReadsPerOp: 0.01, FilterBytesPerKey: 1.25},
		{Workload: budgetSweepWorkload, Filter: "bloom/10", DataBlockReadsPerOp: 0.01, FilterBytesPerKey: 1.27},
		{Workload: budgetSweepWorkload, Filter: "auto-uniform/10", DataBlockReadsPerOp: 0.003, FilterBytesPerKey: 1.25},
		{Workload: budgetSweepWorkload, Filter: "auto-monkey/10", DataBlockReadsPerOp: 0.002, FilterBytesPerKey: 1.25},
	}
	want := map[string]bool{
		"readmissing-live: reads per Get <= 0.2x pebble-l6filters at <= its filter bytes/key":                         true,
		"readmissing: reads per Get <= 0.2x pebble-l6filters at <= its filter bytes/key":                              false,
		"budget sweep at 10 bits: auto-uniform vs bloom: reads per absent Get <= 0.35x at <= its filter memory":       true,
		"budget sweep at 10 bits: auto-monkey vs auto-uniform: reads per absent Get <= 0.60x at <= its filter memory": false,
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
