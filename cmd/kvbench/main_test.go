package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKVBenchTinyRun runs the whole tool on a few thousand keys, so it
// cannot rot: every engine loads, answers every Get correctly (runReads
// fails on a wrong answer), and the JSON is well formed.
func TestKVBenchTinyRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-n", "3000", "-reads", "2000", "-memtable", "65536", "-dir", filepath.Join(dir, "db"), "-json", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kvbench: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Fatalf("%d results, want 3 engines x 2 workloads", len(rs))
	}
	for _, r := range rs {
		if r.OpsPerSec <= 0 || r.Ops != 2000 {
			t.Errorf("bad result %+v", r)
		}
		if r.Engine == "sievekv" && r.FilterBytesPerKey <= 0 {
			t.Errorf("sievekv reports no filter memory: %+v", r)
		}
	}
	if !strings.Contains(stdout.String(), "sievekv/pebble ") {
		t.Errorf("no ratio lines in output:\n%s", stdout.String())
	}
}
