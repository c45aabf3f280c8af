package main

import (
	"io"
	"slices"
	"testing"
)

// TestDeletePairLoadedAlike: the delete pair's DBs must reach deleterandom
// alike, so sievekv-notsi and sievekv-control run every workload before it
// that writes to sievekv's main DB. The while-writing workloads' writer
// was once missing, and sievekv alone took its overwrites.
func TestDeletePairLoadedAlike(t *testing.T) {
	del := slices.Index(allWorkloads, "deleterandom")
	ownDB := func(w string) bool {
		return w == "fillseq" || w == "fillsync8" || isDeleteLarge(w) || isDeleteChurn(w) || isScanWorkload(w)
	}
	for _, w := range allWorkloads[:del+1] {
		mainWriter := isWhileWriting(w) || w == "ycsb-a" || w == "ycsb-b" || (writes(w) && !ownDB(w))
		if mainWriter != slices.Contains(mainDBWriters, w) {
			t.Errorf("%s: writes to the main DB %v, in mainDBWriters %v", w, mainWriter, !mainWriter)
		}
	}
	fl, err := parseFlags([]string{"-quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := openRunners([]string{"sievekv-notsi", "sievekv-control"}, config{memTableSize: fl.memTable, blockSize: fl.blockSize, cacheSize: fl.cache}, t.TempDir(), fl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		for _, w := range mainDBWriters {
			if !r.runs(w) {
				t.Errorf("%s does not run %s, which writes to sievekv's main DB", r.name, w)
			}
		}
		if err := r.eng.close(); err != nil {
			t.Fatal(err)
		}
	}
}
