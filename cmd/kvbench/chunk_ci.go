package main

// The confidence interval printed beside a paired goal's per-chunk median.
//
// A pair's chunk ratios are not independent draws: neighbouring chunks
// share a background flush or compaction, a garbage-collection cycle, a
// spell of load from the machine's other jobs. An interval that treats
// the n chunks as n independent ratios (order statistics over all of
// them) is too narrow, by about the square root of the number of chunks
// one disturbance spans: an A/A comparison (sievekv against
// sievekv-control, two identically configured DBs, deleterandom at 1M)
// once gave a per-chunk median of 0.982x with such an interval of
// 0.973-0.991, excluding 1, and reruns of one build moved the on/off
// median 0.976-1.001 while each run's interval was +-0.01. On synthetic
// AR(1) series with lag-one correlation 0.5 that interval held the true
// median in 80-83% of series, at 0.8 in 55-59% (TestChunkCICoverage).
//
// So the interval comes from batch medians. The chunks, in the order
// they ran, are cut into B consecutive batches, and the interval is the
// order-statistics interval for the median over the B batch medians.
// Once a batch is longer than the correlation's reach, neighbouring
// batches share only what straddles their border, and the batch medians
// are close to independent draws. A batch's median, not its summed-time
// ratio, because the verdict is the median of the chunk ratios: the
// median of an odd batch of independent draws lies below the population
// median exactly when most of the batch does, with probability 1/2, so
// the batch medians scatter around the verdict's figure; a batch's
// summed times would estimate the ratio of summed speeds instead, which
// one stalled chunk moves. The method is deterministic (no resampling),
// and B needs no estimate of the correlation itself.
//
// B is sqrt(n), so a batch is sqrt(n) chunks long (the usual batch size
// for batch means: batch length and count both grow with the run), held
// to 10-30 batches: over fewer than 10 batch medians the order-statistics
// interval is nearly their whole range (over 10 it runs from the 2nd to
// the 9th, 97.9%), and beyond 30 a run's batches only get shorter, nearer
// the correlation's reach, for little narrower an interval. In
// TestChunkCICoverage's simulation (59 and 390 chunks) it held the median
// in 97-98% of independent series and in 92-97% of AR(1) series with
// lag-one correlation 0.5-0.8, the lowest at 59 chunks and 0.8, where
// batches of six chunks are shorter than the correlation's reach. Below
// 20 chunks (batches of one chunk would be the chunks again) there is
// none.

import (
	"fmt"
	"math"
	"slices"
)

const (
	// minBatches and maxBatches bound the batch count, see above.
	minBatches = 10
	maxBatches = 30
	// minBatchChunks is the shortest batch chunkMedianCI cuts.
	minBatchChunks = 2
)

// batchCount is the number of batches chunkMedianCI cuts n chunks into:
// sqrt(n) within [minBatches, maxBatches], 0 when n is too short for
// minBatches batches of minBatchChunks.
func batchCount(n int) int {
	if n < minBatches*minBatchChunks {
		return 0
	}
	return min(maxBatches, max(minBatches, int(math.Sqrt(float64(n)))))
}

// batchMedians cuts ordered (chunk ratios in the order the chunks ran)
// into b consecutive batches whose lengths differ by at most one, and
// returns each batch's median, sorted.
func batchMedians(ordered []float64, b int) []float64 {
	n := len(ordered)
	meds := make([]float64, b)
	for i := range meds {
		batch := slices.Clone(ordered[i*n/b : (i+1)*n/b])
		slices.Sort(batch)
		meds[i] = quantile(batch, 0.5)
	}
	slices.Sort(meds)
	return meds
}

// chunkMedianCI is a 95% confidence interval for the median chunk ratio
// of a pair from its ratios in chunk order: medianCI over the batch
// medians (see above). ok is false below 20 chunks.
func chunkMedianCI(ordered []float64) (lo, hi float64, ok bool) {
	b := batchCount(len(ordered))
	if b == 0 {
		return 0, 0, false
	}
	return medianCI(batchMedians(ordered, b))
}

// medianCI is a 95% confidence interval for the median of the population
// sorted was drawn from independently, by order statistics
// (distribution-free): the number of draws below the median is
// Binomial(n, 1/2), so the r-th smallest and the r-th largest value hold
// the median with probability 1 - 2 P(Binomial(n, 1/2) < r), and r is the
// largest rank for which that is at least 95%. Exact rather than the
// normal approximation n/2 -+ 0.98 sqrt(n) because it takes 10-30 batch
// medians, where the approximation's ranks hold the median anywhere from
// 93.6% (19 values) to 97.9% (10). ok is false below 6 values, where the
// interval would be the whole sample.
func medianCI(sorted []float64) (lo, hi float64, ok bool) {
	n := len(sorted)
	if n < 6 {
		return 0, 0, false
	}
	// tail is P(Binomial(n, 1/2) < r) for r = 1, 2, ..., summed term by
	// term in logs (2^-n underflows no float64 for the n it is given,
	// but the binomial coefficients would overflow one past about 1000).
	r, tail := 0, 0.0
	for k := 0; k < n/2; k++ {
		lc, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		tail += math.Exp(lc - lk - lnk - float64(n)*math.Ln2)
		if 1-2*tail < 0.95 {
			break
		}
		r = k + 1
	}
	return sorted[r-1], sorted[n-r], true
}

// medianCINote is " (median's 95% CI lo-hi)" for a pair's chunk ratios
// in chunk order (chunkMedianCI), with "within noise" where the interval
// holds limit: the chunks then leave which side of it the median lies
// on open. "" without an interval.
func medianCINote(ordered []float64, limit float64) string {
	lo, hi, ok := chunkMedianCI(ordered)
	if !ok {
		return ""
	}
	note := fmt.Sprintf(" (median's 95%% CI %.3f-%.3f", lo, hi)
	if lo <= limit && limit <= hi {
		note += fmt.Sprintf(": holds %.2gx, within noise", limit)
	}
	return note + ")"
}
