package main

// sievekv and sievekv-rf differ only in range filters, and the scan goals
// compare the two: scanshort's ops/s with range filters against without,
// within 5%. Measured one after the other, the two saw different
// machines: single scans wait milliseconds for a core now and then (p999
// of 14-15 ms against a p50 of 12-14 us), these waits made most of the
// loop's time, and so ops/s of one engine moved up to 6.5x between runs
// while its p50 stayed. So when both run a scan workload they are
// measured as a pair (pair.go): each loads a DB of its own with the same
// keys, and both run the same ranges in alternating chunks.

import "fmt"

// scanPair measures sievekv against sievekv-rf on the scan workloads.
var scanPair = &enginePair{
	engines: [2]string{"sievekv", "sievekv-rf"},
	applies: isScanWorkload,
	load: func(r *runner, w string, _ *keySet, fl *flags, root string) (*runner, []phaseSpec, func() error, error) {
		fr, p, done, err := loadScanDB(r, w, fl, root)
		if err != nil {
			return nil, nil, nil, err
		}
		return fr, []phaseSpec{p}, done, nil
	},
	// 256 scans are a few milliseconds of scanning.
	chunk: 256,
	describe: func(ep *enginePair) string {
		return fmt.Sprintf("scanempty/scanshort: %s and %s are loaded side by side and measured in alternating chunks of %d scans over the same ranges "+
			"(the first of the two in even chunks, the other in odd ones); ops/s is each one's scans over the time of its own chunks",
			ep.engines[0], ep.engines[1], ep.chunk)
	},
}
