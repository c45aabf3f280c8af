package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// TestScanLoadTreesMatch runs the scan workloads on sievekv and
// sievekv-rf, whose loads must leave the same tables (the load waits for
// the engine after each flush), and checks the report lists both trees
// with one fingerprint, an L0 and a bottom level among their levels.
func TestScanLoadTreesMatch(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run([]string{"-n", "4000", "-ops", "200", "-memtable", "65536", "-cache", "65536", "-progress=false",
		"-engines", "sievekv,sievekv-rf", "-workloads", "scanshort", "-dir", filepath.Join(dir, "db")}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kvbench: %v\n%s", err, stderr.String())
	}
	re := regexp.MustCompile(`(sievekv(?:-rf)?) scanshort tree: (.*) \(tables fingerprint ([0-9a-f]{16})\)`)
	ms := re.FindAllStringSubmatch(stdout.String(), -1)
	if len(ms) != 2 {
		t.Fatalf("want two scanshort trees in the report, got %d:\n%s", len(ms), stdout.String())
	}
	if ms[0][3] != ms[1][3] || ms[0][2] != ms[1][2] {
		t.Errorf("trees differ:\n%s\n%s", ms[0][0], ms[1][0])
	}
	for _, level := range []string{"L0 ", "L6 "} {
		if !bytes.Contains([]byte(ms[0][2]), []byte(level)) {
			t.Errorf("tree %q has no %s", ms[0][2], level)
		}
	}
}

// TestScanTreesDiffer: a second sievekv DB of a workload with other tables
// than the first fails the check, naming both; another workload's does not.
func TestScanTreesDiffer(t *testing.T) {
	open := func(flushes int) *runner {
		db, err := kv.Open("db", &kv.Options{FS: vfs.NewMem(), DisableAutomaticCompactions: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for f := 0; f < flushes; f++ {
			for i := f; i < 100; i += flushes {
				if err := db.Set(fmt.Appendf(nil, "user%08d", i), []byte("v"), kv.NoSync); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		return &runner{name: fmt.Sprintf("sievekv-%d", flushes), eng: &sieveEngine{db: db}}
	}
	var l treeLog
	if err := l.check(open(1), "scanshort"); err != nil {
		t.Fatal(err)
	}
	if err := l.check(open(1), "scanshort"); err != nil {
		t.Errorf("same tree: %v", err)
	}
	if err := l.check(open(2), "scanempty"); err != nil {
		t.Errorf("another workload: %v", err)
	}
	err := l.check(open(2), "scanshort")
	if !errors.Is(err, errScanTreesDiffer) {
		t.Fatalf("different trees: %v, want errScanTreesDiffer", err)
	}
	if got := len(l.lines("scanshort")); got != 2 {
		t.Errorf("%d scanshort trees recorded, want 2 (the mismatch is not)", got)
	}
}
