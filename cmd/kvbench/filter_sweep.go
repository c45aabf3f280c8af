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
// every filter alike. interleaveN is the n-way form of scan_pair.go's
// two-way interleave.

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
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

// measureInterleaved warms up every meter's phase, then runs the phases
// (the same ops, single-threaded reads) in interleaved chunks of chunk
// ops, and returns each meter's result with its ChunkSeconds. The meters
// hold loaded, settled DBs; the caller closes them.
func measureInterleaved(meters []*phaseMeter, chunk int, label string, progress io.Writer) ([]result, error) {
	for _, m := range meters {
		if err := warmUp(m.p); err != nil {
			return nil, fmt.Errorf("%s %s: warm-up: %w", m.r.name, m.r.filter, err)
		}
	}
	runtime.GC() // the loads' garbage, collected before the clock starts
	ops := meters[0].p.ops
	bar := newBar(progress, len(meters)*ops, fmt.Sprintf("%-24s %-17s", label, "interleaved"))
	resetPeakRSS()
	chunks := make([][]float64, len(meters))
	timed := make([]*phaseMeter, len(meters))
	for i, m := range meters {
		timed[i] = newPhaseMeter(m.r, m.p)
	}
	err := interleaveN(ops, chunk, len(timed), func(side, lo, hi int) error {
		m := timed[side]
		before := m.elapsed
		if err := m.runChunk(lo, hi); err != nil {
			return fmt.Errorf("%s %s: %w", m.r.name, m.r.filter, err)
		}
		chunks[side] = append(chunks[side], (m.elapsed - before).Seconds())
		bar.Add(hi - lo)
		return nil
	})
	if err != nil {
		return nil, err
	}
	bar.Finish()
	var out []result
	for i, m := range timed {
		res, err := m.finish()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", m.r.name, m.r.filter, err)
		}
		res.ChunkSeconds = chunks[i]
		out = append(out, res)
	}
	return out, nil
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

// interleaveN splits ops [0, ops) into chunks of chunk and runs each chunk
// on every one of sides sides, side k mod sides first in chunk k and the
// others after it in turn, so each side is first, second, ... equally
// often.
func interleaveN(ops, chunk, sides int, run func(side, lo, hi int) error) error {
	for k, lo := 0, 0; lo < ops; k, lo = k+1, lo+chunk {
		hi := min(lo+chunk, ops)
		for j := range sides {
			if err := run((k+j)%sides, lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}

// pairedSpeed is a's speed relative to b's over the chunks both ran
// interleaved: the median over chunks k of b's time for chunk k over a's
// (above 1: a is faster). A chunk in which the machine stalled one of the
// two is one outlier among many, where in summed times it moved the
// ratio by as much as the stall. ok is false unless both ran the same
// chunks.
func pairedSpeed(a, b *result) (speed float64, chunks int, ok bool) {
	if len(a.ChunkSeconds) == 0 || len(a.ChunkSeconds) != len(b.ChunkSeconds) {
		return 0, 0, false
	}
	ratios := make([]float64, len(a.ChunkSeconds))
	for k, ta := range a.ChunkSeconds {
		if ta <= 0 {
			return 0, 0, false
		}
		ratios[k] = b.ChunkSeconds[k] / ta
	}
	slices.Sort(ratios)
	n := len(ratios)
	if n%2 == 1 {
		return ratios[n/2], n, true
	}
	return (ratios[n/2-1] + ratios[n/2]) / 2, n, true
}
