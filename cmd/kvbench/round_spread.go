package main

import (
	"fmt"
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
