package main

// Paired measurement. Some goals compare two builds of sievekv that differ
// in one option (range filters, the tombstone index), and the difference
// they look for is a few percent. Measured one after the other, as every
// other engine is, the two see different machines: on 2 cores shared with
// other builds, a wait for a core lasts milliseconds, and the engine that
// runs second pays for the background compactions and garbage the first
// left behind. Either swamps the effect. So a pair is loaded alike, both
// DBs are settled, and each timed phase runs in alternating chunks over
// the same ops: chunk k runs ops [lo, hi) on both, the first engine first
// in even chunks and the other in odd ones, and each engine's ops/s is
// its ops over the summed time of its own chunks. A wait for a core, a
// garbage collection or the other DB's compaction then falls on either
// engine alike.

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// enginePair is two engines measured as a pair on the workloads it
// applies to.
type enginePair struct {
	engines [2]string
	// applies reports whether workload w is measured as a pair.
	applies func(w string) bool
	// load prepares w on r: the runner to measure (r itself, or a copy of
	// it on a fresh DB), w's phases on it in order, and done, which undoes
	// what load made (closing and removing a fresh DB).
	load func(r *runner, w string, ks *keySet, fl *flags, root string) (*runner, []phaseSpec, func() error, error)
	// chunk is the ops per chunk: short against the load swings of a
	// shared machine, long against the clock and memory-stats reads
	// around each chunk (outside its time).
	chunk int
	// describe is the header line saying how the pair is measured.
	describe func(ep *enginePair) string
}

// enginePairs are the pairs runTogether measures together.
var enginePairs = []*enginePair{scanPair, deletePair}

// pickPair returns the pair that measures w and its two runners of order,
// if there is one and both of its engines run w on a DB of their own.
func pickPair(order []*runner, w string) (*enginePair, [2]*runner, bool) {
	for _, ep := range enginePairs {
		if !ep.applies(w) {
			continue
		}
		var pair [2]*runner
		for _, r := range order {
			for i, name := range ep.engines {
				if r.name == name && r.owner && r.open != nil && r.runs(w) {
					pair[i] = r
				}
			}
		}
		if pair[0] != nil && pair[1] != nil {
			return ep, pair, true
		}
	}
	return nil, [2]*runner{}, false
}

// pairDescriptions are the header lines of the pairs a run of fl measures
// (none with -isolate, where each engine has a process of its own).
func pairDescriptions(fl *flags) string {
	if fl.isolate {
		return ""
	}
	engines, err := pickList(fl.engines, allEngines)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, ep := range enginePairs {
		if slices.Contains(engines, ep.engines[0]) && slices.Contains(engines, ep.engines[1]) {
			b.WriteString(ep.describe(ep) + "\n")
		}
	}
	return b.String()
}

// runPair loads w on both runners of pair as ep says, and measures each
// of w's phases on both in alternating chunks.
func runPair(ep *enginePair, pair [2]*runner, w string, ks *keySet, fl *flags, root string, progress io.Writer) (_ []result, err error) {
	var sides [2]*runner
	var phases [2][]phaseSpec
	for i, r := range pair {
		fr, ps, done, err := ep.load(r, w, ks, fl, root)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		defer func() {
			if cerr := done(); err == nil && cerr != nil {
				err = fmt.Errorf("%s: close: %w", r.name, cerr)
			}
		}()
		sides[i], phases[i] = fr, ps
	}
	if len(phases[0]) != len(phases[1]) {
		return nil, fmt.Errorf("%s has %d phases, %s %d", pair[0].name, len(phases[0]), pair[1].name, len(phases[1]))
	}
	var out []result
	for j := range phases[0] {
		rs, err := runPairedPhase(sides, [2]phaseSpec{phases[0][j], phases[1][j]}, ep.chunk, progress)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", phases[0][j].workload, err)
		}
		out = append(out, rs...)
	}
	return out, nil
}

// runPairedPhase measures ps[i] on sides[i], both in alternating chunks
// of chunk ops.
func runPairedPhase(sides [2]*runner, ps [2]phaseSpec, chunk int, progress io.Writer) ([]result, error) {
	p := ps[0]
	if ps[1].workload != p.workload || ps[1].ops != p.ops {
		return nil, fmt.Errorf("the pair's phases differ: %s of %d ops against %s of %d", p.workload, p.ops, ps[1].workload, ps[1].ops)
	}
	for _, q := range ps {
		if q.readers > 1 || q.goroutines > 1 {
			return nil, fmt.Errorf("a paired phase runs in one goroutine, %s asks for more", q.workload)
		}
	}
	// Both start quiet: the first DB's compactions had the second's load
	// (or its finish) to end in, the second's are waited for here.
	for i, r := range sides {
		if err := settle(r); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		if err := warmUp(ps[i]); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", r.name, err)
		}
	}
	runtime.GC() // the loads' garbage, collected before the clock starts
	bar := newBar(progress, 2*p.ops, fmt.Sprintf("%-24s %-17s", p.workload, sides[0].name+"+"+sides[1].name))
	resetPeakRSS()
	var meters [2]*phaseMeter
	var shapes [2]string // each DB's tree as the clock starts
	for i, r := range sides {
		meters[i] = newPhaseMeter(r, ps[i])
		shapes[i] = shapeOf(r)
	}
	err := interleave(p.ops, chunk, func(side, lo, hi int) error {
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
		res.PairedWith = sides[1-i].name
		// The shape shows whether both ran on the same tree: background
		// compactions may end differently in the two DBs, or one may
		// compact during the timed loop.
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

// runChunk runs ops [lo, hi) of m's phase in this goroutine, timing each
// op and the chunk.
func (m *phaseMeter) runChunk(lo, hi int) error {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var written int64
	found := 0
	start := time.Now()
	for i := lo; i < hi; i++ {
		t0 := time.Now()
		w, ok, err := m.p.op(i)
		m.lat[i] = time.Since(t0)
		if err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
		written += w
		if ok {
			found++
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms1)
	m.add(elapsed, ms1.TotalAlloc-ms0.TotalAlloc, written, found)
	return nil
}
