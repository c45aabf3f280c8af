package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sievekv/sievekv/kv"
)

// parseBudgetBits reads -budgetbits: the budgets, in bits per key, the
// budget sweep loads a DB at.
func parseBudgetBits(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		b, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || b < 1 || b > 32 {
			return nil, fmt.Errorf("-budgetbits: %q is not a budget from 1 to 32 bits per key", f)
		}
		out = append(out, b)
	}
	return out, nil
}

// budgetSweepFamily is one line of the budget chart: how a budget of bits
// per key configures the engine.
type budgetSweepFamily struct {
	name string
	// pebble: a Pebble DB with Bloom filters of the budget, read through
	// the UseL6Filters view; otherwise sievekv configured by apply.
	pebble bool
	apply  func(c *config, bits float64)
	// fixed: the filter has one size; it is loaded once.
	fixed bool
}

var budgetSweepFamilies = []budgetSweepFamily{
	{name: "bloom", apply: func(c *config, bits float64) { c.filter, c.bloomBits = kv.FilterBloom, int(bits) }},
	{name: "binary-fuse-8", fixed: true, apply: func(c *config, _ float64) { c.filter = kv.FilterBinaryFuse8 }},
	{name: "auto-uniform", apply: func(c *config, bits float64) {
		c.filter, c.filterBits, c.allocation = kv.FilterAuto, bits, kv.FilterAllocationUniform
	}},
	{name: "auto-monkey", apply: func(c *config, bits float64) {
		c.filter, c.filterBits, c.allocation = kv.FilterAuto, bits, kv.FilterAllocationMonkey
	}},
	{name: "pebble-l6filters", pebble: true, apply: func(c *config, bits float64) { c.filterBits = bits }},
}

// budgetSweepWorkload names the budget sweep's results.
const budgetSweepWorkload = "readmissing-live-budget"

// runBudgetSweep loads a fresh DB for every family and budget, then
// measures readmissing-live on all of them interleaved (measureInterleaved,
// as the filter sweep): absent-key Gets on the live shape (L0 and several
// levels, no full compaction), where every run's filter is probed.
// sievekv's DBs are loaded by scriptedFill, so every family and budget
// reads the same tree and only the filters differ; a point whose tree
// differs from the first's is an error, since its reads would compare
// shapes again. Pebble's DB is loaded as a live fill. The result's Filter
// is "family/bits", its EngineShape the tree.
func runBudgetSweep(ks *keySet, cfg config, fl *flags, root string, progress io.Writer) (_ []result, err error) {
	budgets, err := parseBudgetBits(fl.budgetBits)
	if err != nil {
		return nil, err
	}
	if fl.budgetN > 0 && fl.budgetN != len(ks.present) {
		ks = newKeySet(fl.seed, fl.budgetN, fl.keySize)
	}
	var points []*budgetPoint
	defer func() {
		for _, p := range points {
			if cerr := p.close(); err == nil && cerr != nil {
				err = fmt.Errorf("%s: close: %w", p.meter.r.filter, cerr)
			}
		}
	}()
	var first *budgetPoint
	for _, fam := range budgetSweepFamilies {
		for i, bits := range budgets {
			if fam.fixed && i > 0 {
				break
			}
			c := cfg
			if fl.budgetMemTable > 0 {
				c.memTableSize = fl.budgetMemTable
			}
			fam.apply(&c, bits)
			c.scripted = !fam.pebble
			c.dir = dirOf(root, "budget", fmt.Sprintf("%s-%g", fam.name, bits))
			p, err := loadBudgetPoint(ks, c, fl, fam, bits)
			if err != nil {
				os.RemoveAll(c.dir)
				return nil, fmt.Errorf("%s at %g bits: %w", fam.name, bits, err)
			}
			points = append(points, p)
			if fam.pebble {
				continue
			}
			if first == nil {
				first = p
			} else if !p.tree.sameTree(first.tree) {
				return nil, fmt.Errorf("%w: %s left %s, %s left %s", errBudgetTreesDiffer,
					p.meter.r.filter, p.tree.summary, first.meter.r.filter, first.tree.summary)
			}
		}
	}
	meters := make([]*phaseMeter, len(points))
	for i, p := range points {
		meters[i] = p.meter
	}
	out, err := measureInterleaved(meters, sweepChunk, budgetSweepWorkload, progress)
	if err != nil {
		return nil, err
	}
	if fl.budgetRuns != "" {
		if err := writeBudgetRunsFile(fl.budgetRuns, points, ks, fl.ops, fl.seed); err != nil {
			return nil, err
		}
	}
	for i, p := range points {
		if p.tree.summary != "" {
			// The tables and keys per level, with levelShape's filter
			// bits and FP per level, so the report shows one tree.
			out[i].EngineShape = p.tree.summary + " | " + out[i].EngineShape
		}
	}
	return out, nil
}

// errBudgetTreesDiffer: two of the budget sweep's scripted fills left
// different trees.
var errBudgetTreesDiffer = errors.New("budget sweep: the scripted fills left different trees")

// budgetPoint is one loaded configuration of the budget sweep: its
// readmissing-live phase, the tree it reads (sievekv's), and how to close
// and remove its DB.
type budgetPoint struct {
	meter *phaseMeter
	tree  treeShape
	close func() error
}

func loadBudgetPoint(ks *keySet, c config, fl *flags, fam budgetSweepFamily, bits float64) (_ *budgetPoint, err error) {
	label := fmt.Sprintf("%s/%g", fam.name, bits)
	if fam.fixed {
		label = fam.name + "/fixed"
	}
	r := &runner{name: "sievekv", filter: label, io: &ioCounters{}, dir: c.dir,
		owner: true, keySize: fl.keySize, valueSize: fl.valueSize}
	var reader engine
	p := &budgetPoint{}
	if fam.pebble {
		pe, err := openPebble(c, r.io)
		if err != nil {
			return nil, err
		}
		r.name, r.eng, reader = "pebble-l6filters", pe, pebbleL6View{pe}
	} else {
		se, err := openSieve("sievekv", c, r.io)
		if err != nil {
			return nil, err
		}
		r.eng, reader = se, se
	}
	p.close = func() error {
		err := r.eng.close()
		os.RemoveAll(c.dir)
		return err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if se, ok := r.eng.(*sieveEngine); ok {
		if p.tree, err = scriptedFill(r, se, ks, c.memTableSize, fl.seed); err != nil {
			return nil, err
		}
	} else {
		load, err := phases("fillrandom", r, ks, fl.ops, fl.seed)
		if err != nil {
			return nil, err
		}
		// measure flushes and settles after a write phase: the reads
		// then see the shape the fill left, as readmissing-live does.
		load[0].workload = "fillrandom-budget"
		if _, err := measure(r, load[0], io.Discard); err != nil {
			return nil, err
		}
	}
	r.live = len(ks.present)
	read := *r
	read.eng = reader
	ps, err := phases("readmissing-live", &read, ks, budgetReads(fl.ops), fl.seed)
	if err != nil {
		return nil, err
	}
	ps[0].workload = budgetSweepWorkload
	p.meter = &phaseMeter{r: &read, p: ps[0]}
	return p, nil
}

// budgetReads is how many absent Gets the budget sweep times on each of
// its DBs: -ops, raised towards 400k (390 interleaved chunks) by at most
// eight times. Its speed goal compares two filters a few percent apart,
// and 49 chunks (quick's 50k Gets, a millisecond each) put the median's
// own spread at about as much: the same code read 1.00x, 1.02x and
// 1.04x. The Gets cost about half a second per DB.
func budgetReads(ops int) int { return min(8*ops, max(ops, 400_000)) }

// levelShape describes sievekv's tree for a readmissing-live result: the
// tables, filter bits per key and expected FP of each non-empty level
// ("L0 5t 13.6b 0.0040; L5 31t 10.9b 0.0008; ..."). Two DBs loaded alike
// can be left with different L0 counts by background timing, and each L0
// table is one more filter probed, so the reads of two configurations
// compare only alongside their shapes.
func levelShape(m kv.Metrics) string {
	var parts []string
	for l, lm := range m.Levels {
		if lm.Tables > 0 {
			parts = append(parts, fmt.Sprintf("L%d %dt %.1fb %.4f", l, lm.Tables, lm.FilterBitsPerKey(), lm.FilterFP))
		}
	}
	return strings.Join(parts, "; ")
}

// findFilter returns the result of the sievekv configuration labelled
// filter on workload (nil if it did not run).
func findFilter(rs []result, workload, filter string) *result {
	return findWhere(rs, func(r *result) bool { return r.Workload == workload && r.Filter == filter })
}

// filterBudgetGoals are the filter budget's goals: absent-key reads on the
// live shape against Pebble's Bloom filters at no more filter memory, and,
// from the budget sweep at 10 bits per key, the automatic choice against a
// Bloom filter and Monkey against a uniform allocation.
func filterBudgetGoals(rs []result) []goal {
	var gs []goal
	// readmissing's twin of this goal, on the compacted DB, is in goals.
	if s, p := find(rs, "readmissing-live", "sievekv"), find(rs, "readmissing-live", "pebble-l6filters"); s != nil && p != nil {
		gs = append(gs, goal{"20", "readmissing-live: reads per Get <= 0.2x pebble-l6filters at <= its filter bytes/key",
			fmt.Sprintf("reads %.4f vs %.4f = %s; filter B/key %.3f vs %.3f = %s; trees read (loaded alike, live_load.go): sievekv %s, pebble %s",
				s.DataBlockReadsPerOp, p.DataBlockReadsPerOp, ratioStr(s.DataBlockReadsPerOp, p.DataBlockReadsPerOp),
				s.FilterBytesPerKey, p.FilterBytesPerKey, ratioStr(s.FilterBytesPerKey, p.FilterBytesPerKey), s.EngineShape, p.EngineShape),
			s.DataBlockReadsPerOp <= 0.2*p.DataBlockReadsPerOp && s.FilterBytesPerKey <= p.FilterBytesPerKey, true})
	}
	// The budget sweep's pairs read one tree (scriptedFill), so their
	// ratios are the filters'. They are judged on the filters' false
	// positives per Get (the data blocks the filters let each Get read),
	// since kvbench's ReadAt count misses those the block cache held: the
	// few L0 tables' blocks, written last, stay cached, so the counted
	// reads discount most of uniform's L0 false positives, which are what
	// Monkey moves bits to avoid (docs/design.md, "Filter budget").
	pair := func(desc, a, b string, ratio float64) {
		x, y := findFilter(rs, budgetSweepWorkload, a), findFilter(rs, budgetSweepWorkload, b)
		if x == nil || y == nil || x.EngineFilterFPPerOp == nil || y.EngineFilterFPPerOp == nil {
			return
		}
		fx, fy := *x.EngineFilterFPPerOp, *y.EngineFilterFPPerOp
		gs = append(gs, goal{"20", fmt.Sprintf("%s: filter false positives per absent Get <= %.2fx at <= its filter memory, same tree", desc, ratio),
			fmt.Sprintf("FP %.4f vs %.4f = %s; block reads (cache misses) %.4f vs %.4f = %s; filter B/key %.3f vs %.3f",
				fx, fy, ratioStr(fx, fy), x.DataBlockReadsPerOp, y.DataBlockReadsPerOp,
				ratioStr(x.DataBlockReadsPerOp, y.DataBlockReadsPerOp), x.FilterBytesPerKey, y.FilterBytesPerKey),
			fx <= ratio*fy && x.FilterBytesPerKey <= y.FilterBytesPerKey, true})
	}
	pair("budget sweep at 10 bits: auto-uniform vs bloom", "auto-uniform/10", "bloom/10", 0.35)
	pair("budget sweep at 10 bits: auto-monkey vs auto-uniform", "auto-monkey/10", "auto-uniform/10", 0.6)
	// Both sweeps run their configurations interleaved, so their speed
	// goals are judged on the paired per-chunk speed; the summed ops/s
	// are shown beside it.
	faster := func(desc, w, a, b string) {
		x, y := findFilter(rs, w, a), findFilter(rs, w, b)
		if x == nil || y == nil {
			return
		}
		if speed, chunks, ok := pairedSpeed(x, y); ok {
			gs = append(gs, goal{"20", desc + " (interleaved, median of per-chunk ratios)",
				fmt.Sprintf("%.2fx over %d chunks%s; summed %.0f vs %.0f = %s", speed, chunks, medianCINote(chunkSeries(x, y), 1),
					x.OpsPerSec, y.OpsPerSec, ratioStr(x.OpsPerSec, y.OpsPerSec)), speed >= 1, true})
		}
	}
	faster("filter sweep: readmissing ops/s with auto-monkey >= binary-fuse-8's", "readmissing-sweep", "auto-monkey", "binary-fuse-8")
	faster("budget sweep: readmissing-live ops/s with auto-monkey at 10 bits >= binary-fuse-8's", budgetSweepWorkload,
		"auto-monkey/10", "binary-fuse-8/fixed")
	return gs
}
