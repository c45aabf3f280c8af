package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sievekv/sievekv/internal/testutil"
)

// TestLiveReadsSameTreeEveryRun runs readmissing-live twice on the same
// flags: each engine must read the tree its settled load made, reported
// beside the result, and the same tree both times, whatever the
// background timing (the fill's own tree differed from run to run, and
// the goal's verdict with it). Each loaded DB holds every key.
func TestLiveReadsSameTreeEveryRun(t *testing.T) {
	shapes := func(run1 int) map[string]string {
		dir := t.TempDir()
		jsonOut := filepath.Join(dir, "out.json")
		var stdout, stderr bytes.Buffer
		err := run([]string{"-n", "4000", "-ops", "2000", "-memtable", "65536", "-cache", "65536", "-progress=false",
			"-engines", "sievekv,pebble,pebble-l6filters", "-workloads", "fillrandom,readmissing-live",
			"-dir", filepath.Join(dir, "db"), "-json", jsonOut}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("run %d: kvbench: %v\n%s", run1, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "a flush every 282 keys") {
			t.Errorf("run %d: the header does not state the live load:\n%s", run1, stdout.String())
		}
		out := map[string]string{}
		for _, r := range testutil.ReadJSON[[]result](t, jsonOut) {
			if r.Workload != "readmissing-live" {
				continue
			}
			if r.EngineShape == "" {
				t.Errorf("run %d: %s: no tree reported", run1, r.Engine)
			}
			if !strings.Contains(r.EngineShape, "L0 ") && !strings.Contains(r.EngineShape, "L6 ") {
				t.Errorf("run %d: %s: shape %q names no level", run1, r.Engine, r.EngineShape)
			}
			out[r.Engine] = r.EngineShape
		}
		for _, e := range []string{"sievekv", "pebble", "pebble-l6filters"} {
			if _, ok := out[e]; !ok {
				t.Errorf("run %d: no readmissing-live result for %s", run1, e)
			}
		}
		return out
	}
	a, b := shapes(1), shapes(2)
	for e, s := range a {
		if b[e] != s {
			t.Errorf("%s read %q in one run and %q in the next", e, s, b[e])
		}
	}
}

func TestLiveFlushKeys(t *testing.T) {
	for _, c := range []struct{ memTable, kvLen, want int }{
		{1 << 20, 116, 4519}, {65536, 116, 282}, {100, 116, 1},
	} {
		if got := liveFlushKeys(c.memTable, c.kvLen); got != c.want {
			t.Errorf("liveFlushKeys(%d, %d) = %d, want %d", c.memTable, c.kvLen, got, c.want)
		}
	}
}
