package main

import (
	"fmt"
	"math"
	"slices"
)

// An isolated run's goal compares two engines' figures of one round with
// each other, round by round: round k ran every engine group in turn,
// moments apart, so the per-round ratio takes out most of what the
// machine did between rounds. The goal's figures are each engine's median
// over the rounds and its verdict is theirs; beside it the goal reports
// the per-round ratios' median and range, and says "within noise" when
// that range holds the goal's limit: the rounds then disagree on the
// verdict, and a run's met or NOT met says which way this run's median
// fell, not which engine is ahead. Quick isolated fillseq runs 100k
// writes in about 0.15 s per engine, and paired reruns of it spread by
// about 2%, more than its ratio to Pebble's stood from 1.0.

// roundFigures are r's per-round figures of the metric a goal names
// ("ops/s", "write amp"); nil where r has no rounds or the goal another
// metric.
func roundFigures(r *result, what string) []float64 {
	switch what {
	case "ops/s":
		return r.RoundOpsPerSec
	case "write amp":
		return r.RoundWriteAmp
	}
	return nil
}

// lowerMedian is the lower middle of xs (the median of an odd count), the
// convention medianRounds keeps rounds by.
func lowerMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// roundSpread is a's figures over b's round by round (sorted), or nil
// unless both have the same two or more rounds with b's all above zero.
func roundSpread(a, b []float64) []float64 {
	if len(a) < 2 || len(a) != len(b) {
		return nil
	}
	out := make([]float64, len(a))
	for k := range a {
		if b[k] <= 0 {
			return nil
		}
		out[k] = a[k] / b[k]
	}
	slices.Sort(out)
	return out
}

// spreadNote describes sorted per-round ratios against a goal's limit:
// their median and range, and whether the range holds the limit.
func spreadNote(ratios []float64, limit float64) string {
	lo, hi := ratios[0], ratios[len(ratios)-1]
	note := fmt.Sprintf("; per round %.2fx (%.2f-%.2f) over %d rounds", lowerMedian(ratios), lo, hi, len(ratios))
	if lo <= limit && limit <= hi {
		note += fmt.Sprintf(": the rounds' range holds %.1fx, within noise", limit)
	}
	return note
}

// medianCI is a 95% confidence interval for the median of the population
// sorted was drawn from, by order statistics (distribution-free: the
// number of draws below the median is Binomial(n, 1/2)): the values at
// ranks n/2 -+ 0.98 sqrt(n). ok is false below 6 values, where the
// interval would be the whole sample.
func medianCI(sorted []float64) (lo, hi float64, ok bool) {
	n := len(sorted)
	if n < 6 {
		return 0, 0, false
	}
	half := 0.98 * math.Sqrt(float64(n))
	j := max(0, int(math.Floor(float64(n)/2-half)))
	k := min(n-1, int(math.Ceil(float64(n)/2+half))-1)
	return sorted[j], sorted[k], true
}

// medianCINote is ", 95% CI lo-hi" for sorted per-chunk ratios, with
// "within noise" where the interval holds limit: the chunks then leave
// which side of it the median lies on open. "" without an interval.
func medianCINote(sorted []float64, limit float64) string {
	lo, hi, ok := medianCI(sorted)
	if !ok {
		return ""
	}
	note := fmt.Sprintf(" (median's 95%% CI %.3f-%.3f", lo, hi)
	if lo <= limit && limit <= hi {
		note += fmt.Sprintf(": holds %.2gx, within noise", limit)
	}
	return note + ")"
}
