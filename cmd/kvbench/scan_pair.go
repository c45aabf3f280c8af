package main

// sievekv and sievekv-rf differ only in range filters, and the scan goals
// compare the two: scanshort's ops/s with range filters against without,
// within 5%. Measured one after the other, as every other engine is, the
// two saw different machines: on 2 cores shared with other builds, single
// scans wait milliseconds for a core now and then (p999 of 14-15 ms against
// a p50 of 12-14 us), these waits made most of the loop's time, and so
// ops/s of one engine moved up to 6.5x between runs while its p50 stayed.
// So when both run a scan workload they are loaded side by side, settled,
// and measured in alternating chunks over the same ranges: chunk k runs the
// same scans on both, the first engine in even chunks, the other in odd
// ones, and each engine's ops/s is its ops over the summed time of its own
// chunks. A wait for a core then falls on either engine alike.

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// scanPairChunk is the scans per chunk of a paired measurement: a few
// milliseconds of scanning, short against the load swings of a shared
// machine, long against the two clock reads and memory-stats reads
// around each chunk (outside its time).
const scanPairChunk = 256

// scanPairEngines are the engines measured as a pair on the scan workloads.
var scanPairEngines = [2]string{"sievekv", "sievekv-rf"}

// scanPair returns the two runners of order that measure w as a pair, if
// both run it on a DB of their own.
func scanPair(order []*runner, w string) (pair [2]*runner, ok bool) {
	if !isScanWorkload(w) {
		return pair, false
	}
	for _, r := range order {
		for i, name := range scanPairEngines {
			if r.name == name && r.open != nil && r.runs(w) {
				pair[i] = r
			}
		}
	}
	return pair, pair[0] != nil && pair[1] != nil
}

// runScanPair loads a DB for each runner of pair, and measures w on both
// in alternating chunks over the same ranges.
func runScanPair(pair [2]*runner, w string, fl *flags, root string, progress io.Writer) (_ []result, err error) {
	var meters [2]*phaseMeter
	for i, r := range pair {
		fr, p, done, err := loadScanDB(r, w, fl, root)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		defer func() {
			if cerr := done(); err == nil && cerr != nil {
				err = fmt.Errorf("%s: close: %w", r.name, cerr)
			}
		}()
		meters[i] = &phaseMeter{r: fr, p: p}
	}
	// The first DB's compactions had the second's load to finish in; the
	// second's are waited for here, so both start quiet.
	for _, m := range meters {
		if err := settle(m.r); err != nil {
			return nil, fmt.Errorf("%s: %w", m.r.name, err)
		}
		if err := warmUp(m.p); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", m.r.name, err)
		}
	}
	runtime.GC() // the loads' garbage, collected before the clock starts
	ops := meters[0].p.ops
	bar := newBar(progress, 2*ops, fmt.Sprintf("%-24s %-17s", w, pair[0].name+"+rf"))
	resetPeakRSS()
	var shapes [2]string // each DB's tree as the clock starts
	for i, m := range meters {
		meters[i] = newPhaseMeter(m.r, m.p)
		shapes[i] = shapeOf(m.r)
	}
	err = interleave(ops, scanPairChunk, func(side, lo, hi int) error {
		if err := meters[side].runChunk(lo, hi); err != nil {
			return fmt.Errorf("%s: %w", meters[side].r.name, err)
		}
		bar.Add(hi - lo)
		return nil
	})
	if err != nil {
		return nil, err
	}
	bar.Finish()
	var out []result
	for i, m := range meters {
		res, err := m.finish()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.r.name, err)
		}
		// The shape shows whether both scanned the same tree: background
		// compactions of the loads may end differently in the two DBs, or
		// one may compact during the timed loop.
		res.EngineShape = shapes[i]
		if end := shapeOf(m.r); end != shapes[i] {
			res.EngineShape += " -> " + end
		}
		out = append(out, res)
	}
	return out, nil
}

// shapeOf is r's tree (levelShape) if r is a sievekv engine, else "".
func shapeOf(r *runner) string {
	if s, ok := r.eng.(*sieveEngine); ok {
		return levelShape(s.db.Metrics())
	}
	return ""
}

// interleave splits ops [0, ops) into chunks of chunk and runs each chunk
// on both sides, side 0 first in even chunks and side 1 first in odd ones.
func interleave(ops, chunk int, run func(side, lo, hi int) error) error {
	for k, lo := 0, 0; lo < ops; k, lo = k+1, lo+chunk {
		hi := min(lo+chunk, ops)
		first := k % 2
		if err := run(first, lo, hi); err != nil {
			return err
		}
		if err := run(1-first, lo, hi); err != nil {
			return err
		}
	}
	return nil
}

// runChunk runs ops [lo, hi) of m's phase in this goroutine (the scan
// phases are single-threaded), timing each op and the chunk.
func (m *phaseMeter) runChunk(lo, hi int) error {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	found := 0
	start := time.Now()
	for i := lo; i < hi; i++ {
		t0 := time.Now()
		_, ok, err := m.p.op(i)
		m.lat[i] = time.Since(t0)
		if err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
		if ok {
			found++
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms1)
	m.add(elapsed, ms1.TotalAlloc-ms0.TotalAlloc, 0, found)
	return nil
}
