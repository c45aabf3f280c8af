package main

import (
	"bytes"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
)

// TestFilterBenchTinyRun runs the whole tool on a few thousand keys, so it
// cannot rot: every filter builds, answers every present key (measure
// fails on a false negative), the JSON is well formed, the charts are real
// PNGs, and the measured FP rates are within reach of their targets.
func TestFilterBenchTinyRun(t *testing.T) {
	dir := t.TempDir()
	jsonOut, md := filepath.Join(dir, "out.json"), filepath.Join(dir, "part.md")
	var stdout, stderr bytes.Buffer
	const absent = 20000
	err := run([]string{"-n", "500,3000", "-absent", "20000", "-rounds", "2", "-progress=false", "-range-queries", "500",
		"-json", jsonOut, "-plot", filepath.Join(dir, "charts"), "-md", md}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("filterbench: %v\n%s", err, stderr.String())
	}
	rs := testutil.ReadJSON[[]result](t, jsonOut)
	if want := 2 * len(specs()); len(rs) != want {
		t.Fatalf("%d results, want %d", len(rs), want)
	}
	for _, r := range rs {
		if r.BitsPerKey <= 0 || r.QueryNsAbsent <= 0 || r.QueryNsPresent <= 0 || r.BuildNsPerKey <= 0 || r.AbsentQueried != absent {
			t.Errorf("incomplete result %+v", r)
		}
		if len(r.BuildRounds) != 2 {
			t.Errorf("%s: %d rounds recorded, want 2", r.Filter, len(r.BuildRounds))
		}
		// A target is an upper bound in expectation; allow 3x plus
		// Poisson room (mean 2 at 1e-4 over 20000 keys: P(>= 16) < 1e-8).
		if r.TargetFP > 0 && r.FPRate > 3*r.TargetFP+15.0/absent {
			t.Errorf("%s at n=%d: FP rate %.5f for target %g", r.Filter, r.N, r.FPRate, r.TargetFP)
		}
		if strings.Contains(r.Name, "fuse8") || strings.Contains(r.Name, "xor8") {
			if r.FPRate > 0.01 { // 2^-8 = 0.0039 expected
				t.Errorf("%s: FP rate %.4f for an 8-bit fingerprint", r.Filter, r.FPRate)
			}
		}
	}
	testutil.CheckCharts(t, filepath.Join(dir, "charts"), "filters_fp_vs_bits.png", "filters_query_ns.png")
	testutil.CheckFileContains(t, md, "## filterbench", "sievekv/binary-fuse8 | xorfilter/binary-fuse8", "filters_fp_vs_bits.png", "### n = 3000")
}

// TestGoalsVerdict checks the goal arithmetic on made-up figures.
func TestGoalsVerdict(t *testing.T) {
	rs := []result{
		{Filter: "sievekv/xor8", N: 10, BitsPerKey: 9.85, QueryNsPresent: 10, QueryNsAbsent: 10, BuildNsPerKey: 5},
		{Filter: "xorfilter/xor8", N: 10, BitsPerKey: 9.84, QueryNsPresent: 11, QueryNsAbsent: 10, BuildNsPerKey: 5},
		{Filter: "sievekv/binary-fuse8", N: 10, BitsPerKey: 9, QueryNsPresent: 10, QueryNsAbsent: 12, BuildNsPerKey: 5},
		{Filter: "xorfilter/binary-fuse8", N: 10, BitsPerKey: 9, QueryNsPresent: 11, QueryNsAbsent: 10, BuildNsPerKey: 5},
		{Filter: "sievekv/xor8", N: 5, BitsPerKey: 20, QueryNsPresent: 100, QueryNsAbsent: 100},
	}
	gs := goals(rs)
	if len(gs) != 2 {
		t.Fatalf("%d goals, want 2 (pairs present at the largest n)", len(gs))
	}
	if !gs[0].Met || gs[0].N != 10 {
		t.Errorf("xor8 within slack and faster: %+v", gs[0])
	}
	if gs[1].Met || gs[1].Absent != 1.2 {
		t.Errorf("fuse8 absent queries 1.2x slower must fail: %+v", gs[1])
	}
}

// TestFilterBenchRangeSection runs the range section alone on small sets:
// it must find no false negative (measureRange fails on one), and every
// hashed configuration's measured FP must be within reach of its bound.
func TestFilterBenchRangeSection(t *testing.T) {
	rs, err := measureRange(1, []int{2000}, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2*3 {
		t.Fatalf("%d results, want 6", len(rs))
	}
	for _, r := range rs {
		if r.BitsPerKey <= 0 || r.BitsPerKey > r.BitsBudget+1 {
			t.Errorf("%s at %v bits: %.2f bits per key", r.Shape, r.BitsBudget, r.BitsPerKey)
		}
		for _, w := range r.Widths {
			// 3000 queries: mean 3000*bound, allow 4 sigma plus room.
			mean := float64(w.Queries) * w.Bound
			if limit := mean + 4*math.Sqrt(mean) + 5; float64(w.Queries)*w.FPRate > limit {
				t.Errorf("%s at %v bits, %d ids: FP %.4f above bound %.4f", r.Shape, r.BitsBudget, w.IDs, w.FPRate, w.Bound)
			}
		}
	}
	var b bytes.Buffer
	printRange(&b, rs)
	if !strings.Contains(b.String(), "| user%08d, runs and holes | ") {
		t.Errorf("range table lacks the runs shape:\n%s", b.String())
	}
}

// TestFilterBenchRefusesEmptyOrImpossibleRuns: a run that would measure
// nothing (the range section alone, with no range queries) is refused
// rather than reported as an empty success, and so are sizes that only
// die allocating (a 1 TiB key, a trillion absent keys).
func TestFilterBenchRefusesEmptyOrImpossibleRuns(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "range", "-range-queries", "0"},
		{"-range-queries", "-5"},
		{"-keysize", "1099511627776"},
		{"-absent", "1099511627776"},
		{"-n", "1099511627776"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if _, err := parseFlags([]string{"-quick", "-only", "range"}, io.Discard); err != nil {
		t.Fatalf("-only range: %v", err)
	}
}

// TestFilterBenchRefusesArguments: "filterbench -quick bloom -rounds 1"
// is refused; it ran the quick benchmark of every filter, ignoring bloom
// and -rounds 1.
func TestFilterBenchRefusesArguments(t *testing.T) {
	if _, err := parseFlags([]string{"-quick", "bloom", "-rounds", "1"}, io.Discard); err == nil {
		t.Fatal("no error")
	}
}

// TestFilterBenchRefusesClashingOutputs: -json and -md naming one file,
// or -json a directory, are refused before the run; the markdown replaced
// the JSON and the run exited 0, or the run failed only at its end, its
// results lost.
func TestFilterBenchRefusesClashingOutputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.out")
	for _, args := range [][]string{{"-json", out, "-md", out}, {"-json", dir}} {
		if _, err := parseFlags(append(args, "-quick"), io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
