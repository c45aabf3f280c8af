package kv

import "math"

// bitsPerFPHalving is how many bits per key a filter spends to halve its
// FP rate: the space factor of the fingerprint filters FilterAuto picks
// (Ribbon 1.05, 4-wise fuse 1.08, 3-wise fuse 1.13 at large n;
// docs/filters.md, "Space and FP"). Monkey's allocation depends on it only
// through the spread between runs.
const bitsPerFPHalving = 1.1

// monkeyBitsPerKey returns the bits per key of run target when runs (the
// distinct key counts of the runs an absent-key Get probes: each L0 table
// and each level) share budget bits per key on average and each run's FP
// rate is 2^(-bits/bitsPerFPHalving). It minimises the sum of the FP rates
// (docs/design.md, "Filter budget"): the optimum gives run i the FP rate
// proportional to its size, i.e.
//
//	bits_i = budget + bitsPerFPHalving * log2(G / n_i)
//
// with G the key-weighted geometric mean of the run sizes, so a run ten
// times smaller than G gets 3.65 more bits per key. Runs whose bits would
// fall outside [lo, hi] are pinned there and the rest re-solved with what
// is left (as Monkey pins runs at "no filter"). Empty runs are ignored.
func monkeyBitsPerKey(runs []uint64, target int, budget, lo, hi float64) float64 {
	if target < 0 || target >= len(runs) || runs[target] == 0 {
		return budget
	}
	pinned := make([]float64, len(runs)) // 0: free
	for range len(runs) + 1 {
		var total, freeKeys, pinnedBits, weightedLog float64
		for i, n := range runs {
			if n == 0 {
				continue
			}
			total += float64(n)
			if pinned[i] != 0 {
				pinnedBits += float64(n) * pinned[i]
				continue
			}
			freeKeys += float64(n)
			weightedLog += float64(n) * math.Log2(float64(n))
		}
		if freeKeys == 0 {
			return pinned[target]
		}
		avg := (budget*total - pinnedBits) / freeKeys
		log2G := weightedLog / freeKeys
		changed := false
		for i, n := range runs {
			if n == 0 || pinned[i] != 0 {
				continue
			}
			b := avg + bitsPerFPHalving*(log2G-math.Log2(float64(n)))
			switch {
			case b < lo:
				pinned[i], changed = lo, true
			case b > hi:
				pinned[i], changed = hi, true
			}
		}
		if !changed {
			if pinned[target] != 0 {
				return pinned[target]
			}
			return avg + bitsPerFPHalving*(log2G-math.Log2(float64(runs[target])))
		}
	}
	return budget // not reached: each round pins at least one more run
}
