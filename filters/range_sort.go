package filters

import "slices"

// sortRuns sorts v, made of ascending runs, in place, using scratch (grown
// as needed and returned for reuse). A RangeFilter's hashed codes are such
// runs: the hash keeps the order of codes within a block and cuts it at
// most once (where a block's image wraps past r), so sorted keys give at
// most two runs per block, and a table's keys span few blocks. Merging the
// runs pairwise costs n*log2(runs) rather than a sort's n*log2(n); with
// many short runs (keys spread over many blocks) it falls back to a sort.
func sortRuns(v, scratch []uint64) []uint64 {
	bounds := []int{0}
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			bounds = append(bounds, i)
			if len(bounds) > maxMergedRuns {
				slices.Sort(v)
				return scratch
			}
		}
	}
	bounds = append(bounds, len(v))
	if len(bounds) <= 2 {
		return scratch // one run: sorted already
	}
	scratch = slices.Grow(scratch[:0], len(v))[:len(v)]
	src, dst := v, scratch
	for len(bounds) > 2 {
		next := []int{0}
		for i := 0; i+1 < len(bounds); i += 2 {
			lo, mid, hi := bounds[i], bounds[i+1], bounds[i+1]
			if i+2 < len(bounds) {
				hi = bounds[i+2]
			}
			mergeSorted(dst[lo:hi], src[lo:mid], src[mid:hi])
			next = append(next, hi)
		}
		bounds = next
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
	return scratch
}

// maxMergedRuns is where sortRuns gives up merging: past it, log2(runs)
// nears log2(n) for tables of some thousands of keys.
const maxMergedRuns = 64

// mergeSorted merges ascending a and b into out, len(a)+len(b) long.
func mergeSorted(out, a, b []uint64) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			out[k] = b[j]
			j++
		} else {
			out[k] = a[i]
			i++
		}
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}
