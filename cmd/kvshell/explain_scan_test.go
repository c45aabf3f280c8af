package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// TestExplainScanAndStatsShowRangeFilters runs `explain scan` and `stats`
// on tables written with range filters: the explanation names the table
// ruled out, and stats shows the range filters' bytes and what a scan
// they ruled out counted.
func TestExplainScanAndStatsShowRangeFilters(t *testing.T) {
	db, err := kv.Open("db", &kv.Options{FS: vfs.NewMem(), RangeFilterBitsPerKey: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out bytes.Buffer
	in := NewInterp(db, &out, &out)
	ctx := context.Background()
	for _, line := range []string{"put user00000100 a", "put user00000300 b", "flush",
		"put user00000200 c", "flush", "count user00000150 user00000190"} {
		if err := in.Exec(ctx, line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
	}
	out.Reset()
	if err := in.Exec(ctx, "explain scan user00000150 user00000250"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"scan [user00000150, user00000250):", "L0 table 000009: range filter says maybe (code width 1, FP bound 0)",
		"L0 table 000007: range filter rules it out, no block read", "2 table(s) overlap the range, 2 with a range filter, 1 ruled out"} {
		if !strings.Contains(got, want) {
			t.Errorf("explain scan lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if err := in.Exec(ctx, "stats"); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "range filters: ") || !strings.Contains(got, "tables skipped by scans: 1 of 1 checks") {
		t.Errorf("stats lacks the range filter line:\n%s", got)
	}
	out.Reset()
	if err := in.Exec(ctx, "explain scan b a"); err == nil {
		t.Error("explain scan with END before START succeeded")
	}
}
