package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sievekv/sievekv/kv"
)

// budgetSweepBits are the filter budgets the budget sweep loads a DB at.
var budgetSweepBits = []float64{6, 8, 10, 12, 14}

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

// runBudgetSweep loads a fresh DB for every family and budget and measures
// readmissing-live on it: absent-key Gets on the shape the fill left (L0
// and several levels, no full compaction), where every run's filter is
// probed. The result's Filter is "family/bits".
func runBudgetSweep(ks *keySet, cfg config, fl *flags, root string, progress io.Writer) ([]result, error) {
	var out []result
	for _, fam := range budgetSweepFamilies {
		for i, bits := range budgetSweepBits {
			if fam.fixed && i > 0 {
				break
			}
			c := cfg
			fam.apply(&c, bits)
			c.dir = dirOf(root, "budget", fmt.Sprintf("%s-%g", fam.name, bits))
			res, err := budgetPoint(ks, c, fl, fam, bits, progress)
			os.RemoveAll(c.dir)
			if err != nil {
				return nil, fmt.Errorf("%s at %g bits: %w", fam.name, bits, err)
			}
			out = append(out, res)
		}
	}
	return out, nil
}

func budgetPoint(ks *keySet, c config, fl *flags, fam budgetSweepFamily, bits float64, progress io.Writer) (result, error) {
	label := fmt.Sprintf("%s/%g", fam.name, bits)
	if fam.fixed {
		label = fam.name + "/fixed"
	}
	r := &runner{name: "sievekv", filter: label, io: &ioCounters{}, dir: c.dir,
		owner: true, keySize: fl.keySize, valueSize: fl.valueSize}
	var reader engine
	if fam.pebble {
		pe, err := openPebble(c, r.io)
		if err != nil {
			return result{}, err
		}
		r.name, r.eng, reader = "pebble-l6filters", pe, pebbleL6View{pe}
	} else {
		se, err := openSieve("sievekv", c, r.io)
		if err != nil {
			return result{}, err
		}
		r.eng, reader = se, se
	}
	defer r.eng.close()
	load, err := phases("fillrandom", r, ks, fl.ops, fl.seed)
	if err != nil {
		return result{}, err
	}
	// measure flushes and settles after a write phase: the reads then see
	// the shape the fill left, as readmissing-live does.
	load[0].workload = "fillrandom-budget"
	if _, err := measure(r, load[0], io.Discard); err != nil {
		return result{}, err
	}
	read := *r
	read.eng = reader
	ps, err := phases("readmissing-live", &read, ks, fl.ops, fl.seed)
	if err != nil {
		return result{}, err
	}
	ps[0].workload = budgetSweepWorkload
	return measure(&read, ps[0], progress)
}
