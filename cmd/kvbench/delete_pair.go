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
// alternating chunks over the same keys.

import "fmt"

// deletePair measures sievekv against sievekv-notsi on deleterandom.
var deletePair = &enginePair{
	engines: [2]string{"sievekv", "sievekv-notsi"},
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
