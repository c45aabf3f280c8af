package main

import (
	"runtime"
	"testing"
)

var quiesceSink [][]byte

// TestQuiesceReleasesFreePages checks that a timed loop starts with the
// garbage of what ran before collected and its pages back with the OS,
// not held by the heap for the next engine to write into.
func TestQuiesceReleasesFreePages(t *testing.T) {
	for range 64 {
		quiesceSink = append(quiesceSink, make([]byte, 1<<20))
	}
	quiesceSink = nil
	runtime.GC() // 64 MiB of free pages, which the heap keeps for a while
	quiesce()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if held := ms.HeapIdle - ms.HeapReleased; held > 16<<20 {
		t.Fatalf("after quiesce the heap holds %d MiB of free pages, want < 16", held>>20)
	}
}
