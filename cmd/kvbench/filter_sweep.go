package main

// The filter sweep compares readmissing (absent-key Gets on a DB compacted
// to one sorted run) across filter types, and its goal is a ratio of two
// of them: auto-monkey's ops/s against binary-fuse-8's. Measured one DB
// after another, the ratio moved with the machine's load between the runs
// (1.00x one run, noise either way). So every filter's DB is loaded and
// compacted first, and readmissing then runs on all of them in chunks
// over the same keys: chunk k runs the same Gets on every DB, starting
// with DB k mod n and going round, and each DB's ops/s is its ops over
// the summed time of its own chunks. A wait for a core then falls on
// every filter alike (measureInterleaved, pair.go's harness).

import (
	"fmt"
	"io"
	"os"
)

// sweepChunk is the Gets per chunk of the interleaved filter sweep: a
// millisecond or two of Gets (1 to 2 us each), short against the load swings of
// a shared machine, long against the clock and memory-stats reads around
// each chunk (outside its time).
const sweepChunk = 1024

// runSweep loads the keys into sievekv once per filter type, compacts each
// DB to one run, and measures readmissing on all of them interleaved:
// table reads per missing Get against filter bits per key, and each
// filter's Get time on the same machine moments.
func runSweep(ks *keySet, cfg config, fl *flags, root string, progress io.Writer) (_ []result, err error) {
	var meters []*phaseMeter
	defer func() {
		for _, m := range meters {
			if cerr := m.r.eng.close(); err == nil && cerr != nil {
				err = fmt.Errorf("%s: close: %w", m.r.filter, cerr)
			}
			os.RemoveAll(m.r.dir)
		}
	}()
	for _, sf := range sweepFilters {
		c := cfg
		c.filter, c.bloomBits = sf.f, sf.bits
		if sf.alloc != 0 {
			c.allocation = sf.alloc
		}
		c.dir = dirOf(root, "sweep", sf.name)
		r := &runner{name: "sievekv", filter: sf.name, io: &ioCounters{}, dir: c.dir, owner: true,
			keySize: fl.keySize, valueSize: fl.valueSize}
		e, err := openSieve("sievekv", c, r.io)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sf.name, err)
		}
		r.eng = e
		p, err := loadSweepDB(r, e, ks, fl)
		if err != nil {
			e.close()
			os.RemoveAll(c.dir)
			return nil, fmt.Errorf("%s: %w", sf.name, err)
		}
		meters = append(meters, &phaseMeter{r: r, p: p})
	}
	return measureInterleaved(meters, sweepChunk, "readmissing-sweep", progress)
}

// loadSweepDB fills r's DB with the keys (untimed), compacts it to one
// run, and returns its readmissing phase.
func loadSweepDB(r *runner, e *sieveEngine, ks *keySet, fl *flags) (phaseSpec, error) {
	load, err := phases("fillrandom", r, ks, fl.ops, fl.seed)
	if err != nil {
		return phaseSpec{}, err
	}
	for i := range load[0].ops {
		if _, _, err := load[0].op(i); err != nil {
			return phaseSpec{}, fmt.Errorf("fill op %d: %w", i, err)
		}
	}
	r.live = len(ks.present)
	if err := e.compactAll(); err != nil {
		return phaseSpec{}, err
	}
	if err := settle(r); err != nil {
		return phaseSpec{}, err
	}
	ps, err := phases("readmissing", r, ks, fl.ops, fl.seed)
	if err != nil {
		return phaseSpec{}, err
	}
	ps[0].workload = "readmissing-sweep"
	return ps[0], nil
}
