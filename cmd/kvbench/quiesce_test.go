package main

import (
	"runtime"
	"testing"
)

var quiesceSink [][]byte

// TestQuiesceCollectsEarlierGarbage checks that a timed loop starts with
// the garbage of what ran before already collected, not left for the
// loop's own allocations to pay for.
func TestQuiesceCollectsEarlierGarbage(t *testing.T) {
	for range 64 {
		quiesceSink = append(quiesceSink, make([]byte, 1<<20))
	}
	quiesceSink = nil // 64 MiB of garbage
	quiesce()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > 32<<20 {
		t.Fatalf("after quiesce the heap holds %d MiB, want the 64 MiB of garbage gone", ms.HeapAlloc>>20)
	}
}
