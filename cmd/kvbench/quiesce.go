package main

import "runtime/debug"

// quiesce gives every engine's timed loop the same start in a process
// that runs them one after another: the garbage of whatever ran before
// (the key set's construction, the previous engine's phase, the warm-up)
// collected, and the heap's free pages handed back to the OS. Without it
// the first engine of a phase paid the collections the earlier garbage
// made due, while the next one wrote into pages the first had freed and
// the heap still held, which a process of its own never has: in quick
// fillseq runs Pebble's p99 was 4.8 us (median of 4 runs, 4.2-5.5) when
// it ran first and 3.2 us (6 runs, 2.2-5.3) when it ran second. After quiesce each loop starts as it would in a
// process whose heap holds only live data (the open engines and the key
// set). Applied before every timed loop of every engine alike.
func quiesce() {
	debug.FreeOSMemory() // a full collection, then every free page released
}
