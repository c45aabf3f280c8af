package main

import "runtime"

// quiesce gives every engine's timed loop the same start in a process
// that runs them one after another: the garbage of whatever ran before
// (the key set's construction, the previous engine's phase, the warm-up)
// collected before the clock starts. Without it the first engine of a
// phase paid the collections that earlier garbage made due: in quick
// fillseq runs Pebble's p99 was 4.8 us (median of 4 runs, 4.2-5.5) when
// it ran first, after the key set was built, and 3.2 us (6 runs, 2.2-5.3)
// when it ran second. Applied before every timed loop of every engine
// alike.
//
// The heap keeps the pages it frees, as a long-running process's does, so
// an engine's allocations land in pages already present. Handing them back
// to the OS as well (debug.FreeOSMemory) would start every loop as cold as
// a fresh process: every span the loop takes then page-faults on its first
// store, which in traced quick fillseqs made sievekv's ops over 5 us
// outside collections about 2.4 times as frequent (docs/design.md,
// "What sets a sequential fill's 99th percentile").
func quiesce() {
	runtime.GC()
}
