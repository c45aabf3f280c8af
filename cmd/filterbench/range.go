package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/sievekv/sievekv/filters"
)

// rangeResult is the range filter at one key shape, size and budget: its
// size, build time, and for each query width the measured false-positive
// rate of empty ranges beside the Grafite bound (filters.RangeFilter, R3).
type rangeResult struct {
	Shape         string       `json:"shape"`
	N             int          `json:"n"`
	BitsBudget    float64      `json:"bits_budget"`
	BitsPerKey    float64      `json:"bits_per_key"`
	Exact         bool         `json:"exact"`
	BuildNsPerKey float64      `json:"build_ns_per_key"`
	Widths        []rangeWidth `json:"widths"`
}

type rangeWidth struct {
	IDs     int64   `json:"ids"`     // the query's width in ids
	Queries int     `json:"queries"` // empty ranges asked
	FPRate  float64 `json:"fp_rate"`
	// Bound is the mean over the queries of n*w/r, w the query's code width
	// (0 in exact mode); coder false positives (codes shared by keys the
	// coder does not tell apart) count in FPRate but are outside it.
	Bound   float64 `json:"bound"`
	QueryNs float64 `json:"query_ns"`
}

// rangeShapes are the key sets the range section measures, as users write
// them: decimal ids in ASCII behind a shared prefix, with holes.
var rangeShapes = []struct {
	name string
	// digits of the id, and the ids' span; keys are user%0*d.
	digits int
	span   func(n int) int64
	// runs lays ids out in runs and holes (a table's own slice of a dense
	// id space); otherwise ids are uniform over the span.
	runs bool
}{
	{name: "user%08d, runs and holes", digits: 8, span: func(n int) int64 { return int64(4 * n) }, runs: true},
	{name: "user%010d, sparse over 10^10", digits: 10, span: func(int) int64 { return 10_000_000_000 }},
}

func rangeKeys(rng *rand.Rand, digits int, span int64, n int, runs bool) [][]byte {
	var keys [][]byte
	if runs {
		for id := int64(0); id < span && len(keys) < n; {
			for end := min(id+1+rng.Int64N(500), span); id < end && len(keys) < n; id++ {
				if rng.IntN(2) == 0 {
					keys = append(keys, fmt.Appendf(nil, "user%0*d", digits, id))
				}
			}
			id += 1 + rng.Int64N(1000)
		}
		return keys
	}
	seen := map[int64]bool{}
	for len(seen) < n {
		seen[rng.Int64N(span)] = true
	}
	for id := range seen {
		keys = append(keys, fmt.Appendf(nil, "user%0*d", digits, id))
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

// measureRange runs the range section: every shape, size in sizes (at most
// 1M keys) and budget, queries empty ranges of 1 to 4000 ids.
func measureRange(seed uint64, sizes []int, queries int) ([]rangeResult, error) {
	var out []rangeResult
	for _, shape := range rangeShapes {
		for _, n := range sizes {
			n = min(n, 1_000_000)
			rng := rand.New(rand.NewPCG(seed, uint64(n)))
			span := shape.span(n)
			keys := rangeKeys(rng, shape.digits, span, n, shape.runs)
			if shape.runs {
				// The generator stops at n keys: the ids end where they did.
				last := keys[len(keys)-1]
				fmt.Sscanf(string(last[4:]), "%d", &span)
				span++
			}
			for _, bpk := range []float64{10, 16, 22} {
				t0 := time.Now()
				f, err := filters.NewRangeFilter(keys, bpk)
				if err != nil {
					return nil, err
				}
				build := time.Since(t0)
				enc, _ := f.MarshalBinary()
				r := rangeResult{Shape: shape.name, N: len(keys), BitsBudget: bpk, Exact: f.Exact(),
					BitsPerKey:    8 * float64(len(enc)) / float64(len(keys)),
					BuildNsPerKey: float64(build.Nanoseconds()) / float64(len(keys))}
				for _, w := range []int64{1, 9, 180, 400, 4000} {
					rw, err := measureRangeWidth(rng, f, keys, shape.digits, span, w, queries)
					if err != nil {
						return nil, fmt.Errorf("%s n=%d %v bits: %w", shape.name, n, bpk, err)
					}
					r.Widths = append(r.Widths, rw)
				}
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func measureRangeWidth(rng *rand.Rand, f *filters.RangeFilter, keys [][]byte, digits int, span, w int64, queries int) (rangeWidth, error) {
	type q struct{ lo, hi []byte }
	var qs []q
	for tries := 0; len(qs) < queries && tries < 20*queries; tries++ {
		x := rng.Int64N(max(span-w, 1))
		lo, hi := fmt.Appendf(nil, "user%0*d", digits, x), fmt.Appendf(nil, "user%0*d", digits, x+w)
		i, _ := slices.BinarySearchFunc(keys, lo, bytes.Compare)
		if i < len(keys) && bytes.Compare(keys[i], hi) < 0 {
			// Not empty: the filter must say so (no false negatives, R1).
			if !f.MayContainRange(lo, hi) {
				return rangeWidth{}, fmt.Errorf("false negative for [%s, %s)", lo, hi)
			}
			continue
		}
		qs = append(qs, q{lo, hi})
	}
	rw := rangeWidth{IDs: w, Queries: len(qs)}
	if len(qs) == 0 {
		return rw, nil
	}
	var bound float64
	for _, q := range qs {
		bound += f.FPBound(f.CodeWidth(q.lo, q.hi))
	}
	// Timed over three passes, the fastest kept (noise only adds time).
	fps := 0
	for pass := 0; pass < 3; pass++ {
		fps = 0
		t0 := time.Now()
		for _, q := range qs {
			if f.MayContainRange(q.lo, q.hi) {
				fps++
			}
		}
		ns := float64(time.Since(t0).Nanoseconds()) / float64(len(qs))
		if pass == 0 || ns < rw.QueryNs {
			rw.QueryNs = ns
		}
	}
	rw.FPRate = float64(fps) / float64(len(qs))
	rw.Bound = bound / float64(len(qs))
	return rw, nil
}

// printRange writes the range section as a markdown table.
func printRange(w io.Writer, rs []rangeResult) {
	fmt.Fprintln(w, "\n## Range filter (filters.RangeFilter): FP of empty id ranges against the bound n*w/r")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| keys | n | budget | bits/key | mode | build ns/key | ids | FP | bound | query ns |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		mode := "hashed"
		if r.Exact {
			mode = "exact"
		}
		for _, x := range r.Widths {
			if x.Queries == 0 {
				continue // no empty range that wide in these keys
			}
			fmt.Fprintf(w, "| %s | %d | %g | %.2f | %s | %.0f | %d | %.5f | %.5f | %.0f |\n",
				r.Shape, r.N, r.BitsBudget, r.BitsPerKey, mode, r.BuildNsPerKey, x.IDs, x.FPRate, x.Bound, x.QueryNs)
		}
	}
}

// rangeMarkdown is printRange as a string, for -md.
func rangeMarkdown(rs []rangeResult) string {
	var b strings.Builder
	printRange(&b, rs)
	return b.String()
}
