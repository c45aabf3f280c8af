package kv

import (
	"math"
	"slices"
)

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

// monkeyShape is the tree as Monkey allocates for it: the keys of each L0
// table and of each level, live or being written, and the keys of a flush.
type monkeyShape struct {
	l0        []uint64
	levels    [NumLevels]uint64
	flushKeys uint64
}

// runs returns the runs an absent-key Get will probe in the shape the tree
// settles into, and which of them is the output's (an n-key table for a
// flush, level outLevel for a compaction). A table keeps its filter for
// its whole life, so it is sized for that shape rather than the moment's:
//   - A flush sees L0 refilled to its compaction trigger: at least
//     l0Trigger runs, the missing ones of a flush's size.
//   - A level table sees no L0. L0 is a large part of the keys only while
//     the tree is small; a bottom-level table written then was given
//     8.8 bits per key at a 10-bit budget (the L0 runs outweighed it) and
//     kept them once the bottom held 90% of the keys, where its share is
//     9.6. L0's tables live for one compaction; what they take beyond the
//     budget comes out of the levels' deficit rule in DB.monkeyBits.
//   - The levels' keys are spread as the dynamic level targets settle
//     them (settledLevels).
func (s *monkeyShape) runs(outLevel int, n uint64, l0Trigger int, mult float64) ([]uint64, int) {
	var runs []uint64
	target := -1
	if outLevel == 0 {
		runs = append(slices.Clone(s.l0), n)
		target = len(runs) - 1
		for len(runs) < l0Trigger && s.flushKeys > 0 {
			runs = append(runs, s.flushKeys)
		}
	}
	settled := settledLevels(s.levels, outLevel, mult)
	for l := 1; l < NumLevels; l++ {
		if l == outLevel {
			target = len(runs)
		}
		runs = append(runs, settled[l])
	}
	return runs, target
}

// settledLevels spreads the keys of levels 1 and below as a leveled tree
// of fan-out mult settles them (compaction's P1): the bottom level
// 1 - 1/mult of them and each level above a mult-th of the one below, up
// to the shallowest level holding keys or being written and at least to
// the level above the bottom; a level holding more than that keeps its
// own count. The moment's shape strays from the settled one, and a table
// sized by the moment keeps filters the settled tree cannot afford: a
// bottom level written while it was the only level took the whole budget
// (it was all the keys), and the level that formed above it found none
// left; a new base level, still nearly empty, looked small enough for 20
// bits per key.
func settledLevels(levels [NumLevels]uint64, outLevel int, mult float64) [NumLevels]uint64 {
	const bottom = NumLevels - 1
	top := bottom - 1
	var total float64
	for l := 1; l <= bottom; l++ {
		if levels[l] > 0 {
			total += float64(levels[l])
			top = min(top, l)
		}
	}
	if outLevel > 0 {
		top = min(top, outLevel)
	}
	if total == 0 {
		return levels
	}
	var weights float64
	for l, w := bottom, 1.0; l >= top; l, w = l-1, w/mult {
		weights += w
	}
	var out [NumLevels]uint64
	for l, w := bottom, 1.0; l >= top; l, w = l-1, w/mult {
		out[l] = max(uint64(math.Ceil(total*w/weights)), levels[l])
	}
	return out
}
