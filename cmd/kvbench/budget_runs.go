package main

// The budget sweep's per-run report (-budgetruns FILE): for each sievekv
// configuration, every run an absent Get probes (each L0 table, each
// level) with its keys, filter bits per key, chosen widths, the FP rate
// its filters predict, and what absent Gets measured of it through
// DB.ExplainGet: false positives, and how many of those missed the block
// cache. Beside them, for the same tree and the same filter memory, the
// allocations no configuration can beat: the continuous Monkey optimum,
// the best mix of whole fingerprint widths per table, and the best mix
// weighted by each run's measured cache miss rate (a bound on the
// block reads that miss the cache). Monkey prices every false positive
// as one read; the last bound says what any allocation could save on
// reads where the small runs' blocks are cached.

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/kv"
)

// budgetRun is one run of a tree as the per-run report sees it.
type budgetRun struct {
	name string
	// tables are the run's tables' distinct keys.
	tables []uint64
	keys   uint64
	// payloadBits: the filters' bytes less each table's header.
	payloadBits float64
	filterBytes uint64
	// fp: the run's predicted FP rate per absent Get (one table of a
	// level is probed, with probability its share of the level's keys).
	fp    float64
	kinds map[string]int
	// Measured over the report's absent Gets.
	probes, falsePositives, fpMisses int
}

// treeRuns groups db's tables into the runs an absent Get probes.
func treeRuns(db *kv.DB) ([]*budgetRun, error) {
	ts, err := db.Tables()
	if err != nil {
		return nil, err
	}
	var runs []*budgetRun
	byLevel := map[int]*budgetRun{}
	for _, t := range ts {
		var r *budgetRun
		if t.Level == 0 {
			r = &budgetRun{name: fmt.Sprintf("L0 %06d", t.FileNum), kinds: map[string]int{}}
			runs = append(runs, r)
		} else if r = byLevel[t.Level]; r == nil {
			r = &budgetRun{name: fmt.Sprintf("L%d", t.Level), kinds: map[string]int{}}
			byLevel[t.Level] = r
			runs = append(runs, r)
		}
		keys := t.FilterKeys
		if keys == 0 {
			keys = t.Entries
		}
		r.tables = append(r.tables, keys)
		r.keys += keys
		r.filterBytes += t.FilterBytes
		if t.FilterBytes > filters.TableFilterHeaderBytes {
			r.payloadBits += 8 * float64(t.FilterBytes-filters.TableFilterHeaderBytes)
		}
		r.fp += float64(keys) * t.FilterFP // divided by the run's keys below
		r.kinds[t.FilterKind]++
	}
	for _, r := range runs {
		if r.keys > 0 {
			r.fp /= float64(r.keys)
		}
	}
	return runs, nil
}

// measureRuns runs gets absent-key Gets through ExplainGet and counts each
// run's probes, false positives and false positives that read a block
// from the file (a block-cache miss).
func measureRuns(db *kv.DB, runs []*budgetRun, ks *keySet, gets int, seed uint64) error {
	byTable := map[string]*budgetRun{}
	for _, r := range runs {
		byTable[r.name] = r
	}
	rng := rand.New(rand.NewPCG(seed, 23))
	buf := make([]byte, ks.keySize)
	for range gets {
		copy(buf, ks.present[rng.IntN(len(ks.present))])
		buf[len(buf)-1] |= 1 // absent, as readmissing's keys
		tr, err := db.ExplainGet(buf)
		if err != nil {
			return err
		}
		for _, s := range tr.Steps {
			if s.Source != "table" {
				continue
			}
			name := fmt.Sprintf("L%d", s.Level)
			if s.Level == 0 {
				name = fmt.Sprintf("L0 %06d", s.Table)
			}
			r := byTable[name]
			if r == nil {
				continue
			}
			r.probes++
			if s.FalsePositive {
				r.falsePositives++
				if s.DataBlockReads > 0 {
					r.fpMisses++
				}
			}
		}
	}
	return nil
}

// widthOption is one whole fingerprint width for a table: its payload
// bits and FP rate.
type widthOption struct {
	bits, fp float64
}

// widthOptions lists the fingerprint widths a table of n keys can take,
// at filters.FingerprintBitsPerKey's payload.
func widthOptions(n uint64) []widthOption {
	var out []widthOption
	for w := 1; w <= filters.MaxTableFingerprintBits; w++ {
		out = append(out, widthOption{filters.FingerprintBitsPerKey(int(n), w) * float64(n), math.Exp2(-float64(w))})
	}
	return out
}

// bestDiscrete spends at most totalBits over runs' tables, each table one
// whole width, to minimise sum over runs of weight x FP (a table's FP
// counts with its share of its run's keys). Each table minimises weight x
// FP + l x bits, with l bisected to the smallest price that fits
// totalBits: an allocation that exists, optimal for the bits it spends
// and within one table's width step of the optimum for totalBits (each
// table's options on their lower convex hull, as mixing widths across a
// run's tables reaches). It returns the weighted FP sum and each run's FP
// and bits.
func bestDiscrete(runs []*budgetRun, weights []float64, totalBits float64) (float64, []float64, []float64) {
	type table struct {
		run  int
		n    uint64
		w    float64
		opts []widthOption
	}
	var ts []table
	for i, r := range runs {
		for _, n := range r.tables {
			if n == 0 {
				continue
			}
			ts = append(ts, table{i, n, weights[i] * float64(n) / float64(r.keys), widthOptions(n)})
		}
	}
	// solve gives each table the width minimising weight x FP + l x bits,
	// and returns the bits spent, the weighted FP sum, and each run's
	// key-weighted FP and bits.
	solve := func(l float64) (bits, sum float64, fps, runBits []float64) {
		fps, runBits = make([]float64, len(runs)), make([]float64, len(runs))
		for _, t := range ts {
			best := t.opts[0]
			for _, o := range t.opts[1:] {
				if t.w*o.fp+l*o.bits < t.w*best.fp+l*best.bits {
					best = o
				}
			}
			bits += best.bits
			sum += t.w * best.fp
			runBits[t.run] += best.bits
			fps[t.run] += float64(t.n) / float64(runs[t.run].keys) * best.fp
		}
		return bits, sum, fps, runBits
	}
	lo, hi := 0.0, 1.0 // l: weighted FP saved per bit
	for range 200 {
		mid := (lo + hi) / 2
		if bits, _, _, _ := solve(mid); bits > totalBits {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, sum, fps, runBits := solve(hi)
	return sum, fps, runBits
}

// continuousMonkey is the sum of FP rates of Monkey's continuous optimum
// for runs at totalBits (p = 2^(-b/c) per run, c = 1.1 bits per halving,
// a run's bits within [0, 36] per key) and each run's bits per key.
func continuousMonkey(runs []*budgetRun, totalBits float64) (float64, []float64) {
	const c = 1.1
	// p_i = K n_i up to the bounds: bisect log K so the bits sum to totalBits.
	bitsAt := func(logK float64) []float64 {
		out := make([]float64, len(runs))
		for i, r := range runs {
			p := math.Exp2(logK + math.Log2(float64(r.keys)))
			out[i] = min(36, max(0, -c*math.Log2(min(1, p))))
		}
		return out
	}
	lo, hi := -200.0, 0.0
	for range 200 {
		mid := (lo + hi) / 2
		var total float64
		for i, b := range bitsAt(mid) {
			total += b * float64(runs[i].keys)
		}
		if total > totalBits {
			lo = mid
		} else {
			hi = mid
		}
	}
	bits := bitsAt(hi)
	var sum float64
	for _, b := range bits {
		sum += math.Exp2(-b / c)
	}
	return sum, bits
}

// writeBudgetRuns writes the per-run report of the budget sweep's sievekv
// points: each configuration's runs, measured over gets absent Gets, then
// the bounds for the tree at the configuration's own filter memory.
func writeBudgetRuns(w io.Writer, points []*budgetPoint, ks *keySet, gets int, seed uint64) error {
	for _, p := range points {
		se, ok := p.meter.r.eng.(*sieveEngine)
		if !ok {
			continue
		}
		runs, err := treeRuns(se.db)
		if err != nil {
			return err
		}
		if err := measureRuns(se.db, runs, ks, gets, seed); err != nil {
			return err
		}
		var keys uint64
		var payload, predicted, measured, misses float64
		for _, r := range runs {
			keys += r.keys
			payload += r.payloadBits
			predicted += r.fp
			measured += float64(r.falsePositives) / float64(gets)
			misses += float64(r.fpMisses) / float64(gets)
		}
		fmt.Fprintf(w, "## %s: %d keys, filter payload %.3f bits/key, predicted FP sum %.5f, measured FP %.5f per Get (cache-missing %.5f)\n\n",
			p.meter.r.filter, keys, payload/float64(keys), predicted, measured, misses)
		fmt.Fprintln(w, "| run | tables | keys | bits/key (payload) | widths | predicted FP | measured FP/Get | FP miss rate | ideal Monkey bits/key | best widths bits/key, FP | cache-aware bits/key, FP |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
		ideal, idealBits := continuousMonkey(runs, payload)
		ones := make([]float64, len(runs))
		missRate := make([]float64, len(runs))
		for i, r := range runs {
			ones[i] = 1
			missRate[i] = 1 // a run without a measured false positive: priced as a read
			if r.falsePositives > 0 {
				missRate[i] = float64(r.fpMisses) / float64(r.falsePositives)
			}
		}
		best, bestFP, bestBits := bestDiscrete(runs, ones, payload)
		aware, awareFP, awareBits := bestDiscrete(runs, missRate, payload)
		var bestMisses, actualMisses float64
		for i, r := range runs {
			bestMisses += bestFP[i] * missRate[i]
			actualMisses += r.fp * missRate[i]
		}
		for i, r := range runs {
			kinds := make([]string, 0, len(r.kinds))
			for k, c := range r.kinds {
				kinds = append(kinds, fmt.Sprintf("%d x %s", c, k))
			}
			sort.Strings(kinds)
			fmt.Fprintf(w, "| %s | %d | %d | %.2f | %s | %.5f | %.5f | %.2f | %.2f (FP %.5f) | %.2f, %.5f | %.2f, %.5f |\n",
				r.name, len(r.tables), r.keys, r.payloadBits/float64(r.keys), strings.Join(kinds, ", "), r.fp,
				float64(r.falsePositives)/float64(gets), missRate[i], idealBits[i], math.Exp2(-idealBits[i]/1.1),
				bestBits[i]/float64(r.keys), bestFP[i], awareBits[i]/float64(r.keys), awareFP[i])
		}
		fmt.Fprintf(w, "\nAt this memory: predicted FP sum %.5f; continuous Monkey %.5f; best whole widths %.5f. "+
			"Cache-missing FP (FP x measured miss rate): this allocation %.5f, best-FP widths %.5f, best cache-aware widths %.5f.\n\n",
			predicted, ideal, best, actualMisses, bestMisses, aware)
	}
	return nil
}

// writeBudgetRunsFile writes the per-run report to path.
func writeBudgetRunsFile(path string, points []*budgetPoint, ks *keySet, gets int, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-budgetruns: %w", err)
	}
	if err := writeBudgetRuns(f, points, ks, gets, seed); err != nil {
		f.Close()
		return fmt.Errorf("-budgetruns: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-budgetruns: %w", err)
	}
	return nil
}
