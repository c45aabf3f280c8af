package main

import (
	"fmt"
	"slices"
)

// engineOrder is the order in which the engines run workload w in one
// process: the -engines order shifted by w's index in allWorkloads plus
// rotate. Keying the shift to the catalogue, not to w's place among the
// selected workloads, gives a workload the same first engine whatever
// else runs beside it, and every engine a turn at the front over the
// catalogue. Running first costs an engine something no order can share
// out: the first timed loop of a fresh process grows the heap and touches
// pages the later ones reuse (Pebble's quick fillseq p99 was 4.8 us first,
// 3.2 us second, docs/design.md "In the shared-process run (WAL off)"),
// so a series of runs with -rotate 0 .. len(engines)-1 is what starts
// each workload once with every engine.
func engineOrder[R any](engines []R, w string, rotate int) []R {
	n := len(engines)
	if n == 0 {
		return nil
	}
	k := ((slices.Index(allWorkloads, w)+rotate)%n + n) % n
	return append(slices.Clone(engines[k:]), engines[:k]...)
}

// orderDescription is the header line saying who runs first (none with
// -isolate, which orders its groups per round).
func orderDescription(fl *flags) string {
	if fl.isolate {
		return ""
	}
	return fmt.Sprintf("engine order: each workload's starts at its catalogue index + %d (-rotate) of the -engines list, skipping engines that do not run it, views after their owner's writes; the engine running first pays for a fresh process's heap, so it changes with the workload and with -rotate; each workload's table lists the engines in the order they ran\n", fl.rotate)
}
