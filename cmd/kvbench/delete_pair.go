package main

// sievekv and sievekv-notsi differ only in the tombstone index, and the
// delete goal compares the two: deleterandom's ops/s with the index on at
// least its ops/s with it off. Measured one after the other, the ratio
// moved 0.21-6.76x over six quick runs of one binary, with Gets of deleted
// keys (which never consult the index) swinging 0.38-2.19x the same way:
// the engine that ran second paid for the first's background compactions
// and garbage. So when both run deleterandom they are measured as a pair
// (pair.go) on their main DBs, which the same earlier workloads loaded
// alike: the deletes, then the Gets of deleted and of kept keys, each in
// alternating chunks over the same keys. Even so the deletes' ratio
// spread as wide as an A/A comparison's (two DBs with the index on), so
// -engines may add sievekv-control, sievekv once more, to the same
// interleave, and the goal row then prints sievekv against it beside the
// on/off ratio.

import (
	"fmt"
)

// deletePair measures sievekv against sievekv-notsi on deleterandom.
var deletePair = &enginePair{
	engines: [2]string{"sievekv", "sievekv-notsi"},
	control: "sievekv-control",
	applies: func(w string) bool { return w == "deleterandom" },
	load: func(r *runner, w string, ks *keySet, fl *flags, _ string) (*runner, []phaseSpec, func() error, error) {
		ps, err := phases(w, r, ks, fl.ops, fl.seed)
		return r, ps, func() error { return nil }, err
	},
	// 512 deletes take about half a millisecond, 512 Gets of kept keys
	// a few: both span many chunks at -quick (30k deletes) and at 1M.
	chunk: 512,
	describe: func(ep *enginePair) string {
		return fmt.Sprintf("deleterandom: %s and %s run it on their main DBs, loaded alike by the same earlier workloads, and each phase "+
			"(the deletes, getdeleted, getkept) is measured in alternating chunks of %d ops over the same keys "+
			"(the first of the two in even chunks, the other in odd ones); ops/s is each one's ops over the time of its own chunks",
			ep.engines[0], ep.engines[1], ep.chunk)
	},
}

// deleteSpeedGoal is the delete goal's row: sievekv's deleterandom ops/s
// against sievekv-notsi's. Measured as a pair, it is judged on the median
// of per-chunk time ratios (pairedSpeed), and prints beside it their
// interquartile range, the ratio charged by process CPU per chunk
// (pairedCPUSpeed), and, if sievekv-control ran, the same figures for
// sievekv against it. The goal is met when the per-chunk median is at
// least 1; the A/A figures say how far that median moves between two
// identical engines, for the reader, and never widen the verdict.
func deleteSpeedGoal(rs []result) (goal, bool) {
	on, off := find(rs, "deleterandom", deletePair.engines[0]), find(rs, "deleterandom", deletePair.engines[1])
	if on == nil || off == nil {
		return goal{}, false
	}
	name := "deleterandom: ops/s with the tombstone index >= without (" + off.Engine + howMeasured(on, off) + ")"
	measured := fmt.Sprintf("%.0f vs %.0f = %s", on.OpsPerSec, off.OpsPerSec, ratioStr(on.OpsPerSec, off.OpsPerSec))
	speed, chunks, ok := pairedSpeed(on, off)
	if !ok {
		return goal{"19", name, measured, on.OpsPerSec >= off.OpsPerSec, true}, true
	}
	measured += "; " + chunkFigures(on, off, chunks)
	// The A/A control is printed beside the verdict so a reader sees the
	// harness's resolution, but the verdict itself stays the goal's own
	// test: a shortfall inside the noise is not a goal met.
	if ctl := find(rs, "deleterandom", deletePair.control); ctl != nil && ctl.PairedWith == on.Engine {
		if _, n, ok := pairedSpeed(on, ctl); ok {
			measured += "; A/A against " + ctl.Engine + ": " + chunkFigures(on, ctl, n)
		}
	}
	return goal{"19", name, measured, speed >= 1, true}, true
}

// chunkFigures prints a's speed relative to b's per chunk: the median,
// its 95% confidence interval (chunkMedianCI, over batches of chunks) and
// the interquartile range of the chunk ratios, and the CPU-charged ratio.
func chunkFigures(a, b *result, chunks int) string {
	ratios := chunkRatios(a, b)
	out := fmt.Sprintf("per-chunk median %.3fx%s (IQR %.3f-%.3f, %d chunks)", quantile(ratios, 0.5), medianCINote(chunkSeries(a, b), 1),
		quantile(ratios, 0.25), quantile(ratios, 0.75), chunks)
	if cpu, ok := pairedCPUSpeed(a, b); ok {
		out += fmt.Sprintf(", CPU-charged %.3fx", cpu)
	}
	return out
}
