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
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// enginePair is two engines measured as a pair on the workloads it
// applies to, and optionally a control: an engine configured as the
// first, measured with them in the same interleave, so that the first
// against the control (an A/A comparison) shows the harness's resolution
// beside the pair's ratio.
type enginePair struct {
	engines [2]string
	// control, if set, names an engine configured as engines[0]; it is
	// measured with the pair when the run includes it.
	control string
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
var enginePairs = []*enginePair{scanPair, deletePair, churnPair}

// pickPair returns the pair that measures w and its runners of order (the
// pair's two, then the control if order has it), if there is one and both
// of its engines run w on a DB of their own.
func pickPair(order []*runner, w string) (*enginePair, []*runner, bool) {
	for _, ep := range enginePairs {
		if !ep.applies(w) {
			continue
		}
		var pair [3]*runner
		names := [3]string{ep.engines[0], ep.engines[1], ep.control}
		for _, r := range order {
			for i, name := range names {
				if name != "" && r.name == name && r.owner && r.open != nil && r.runs(w) {
					pair[i] = r
				}
			}
		}
		if pair[0] != nil && pair[1] != nil {
			if pair[2] == nil {
				return ep, pair[:2], true
			}
			return ep, pair[:], true
		}
	}
	return nil, nil, false
}

// pairDescriptions are the header lines of the pairs a run of fl measures
// (none with -isolate, where each engine has a process of its own).
func pairDescriptions(fl *flags) string {
	if fl.isolate {
		return ""
	}
	engines, err := pickEngines(fl.engines)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, ep := range enginePairs {
		if slices.Contains(engines, ep.engines[0]) && slices.Contains(engines, ep.engines[1]) {
			b.WriteString(ep.describe(ep))
			if ep.control != "" && slices.Contains(engines, ep.control) {
				fmt.Fprintf(&b, "; %s (configured as %s) runs in the same interleave, the three taking turns to lead a chunk, an A/A control: "+
					"%s against it shows what the harness resolves", ep.control, ep.engines[0], ep.engines[0])
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// runPair loads w on the runners of pair as ep says, and measures each
// of w's phases on all of them in interleaved chunks.
func runPair(ep *enginePair, pair []*runner, w string, ks *keySet, fl *flags, root string, progress io.Writer) (_ []result, err error) {
	sides := make([]*runner, len(pair))
	phases := make([][]phaseSpec, len(pair))
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
	for i := 1; i < len(phases); i++ {
		if len(phases[0]) != len(phases[i]) {
			return nil, fmt.Errorf("%s has %d phases, %s %d", pair[0].name, len(phases[0]), pair[i].name, len(phases[i]))
		}
	}
	var out []result
	for j := range phases[0] {
		ps := make([]phaseSpec, len(sides))
		for i := range sides {
			ps[i] = phases[i][j]
		}
		rs, err := runPairedPhase(sides, ps, ep.chunk, progress)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", phases[0][j].workload, err)
		}
		out = append(out, rs...)
	}
	return out, nil
}

// runPairedPhase measures ps[i] on sides[i], all in interleaved chunks
// of chunk ops. sides[0] and sides[1] are the pair, each result naming
// the other as PairedWith; a third side is a control, paired with
// sides[0].
func runPairedPhase(sides []*runner, ps []phaseSpec, chunk int, progress io.Writer) ([]result, error) {
	p := ps[0]
	for _, q := range ps[1:] {
		if q.workload != p.workload || q.ops != p.ops {
			return nil, fmt.Errorf("the pair's phases differ: %s of %d ops against %s of %d", p.workload, p.ops, q.workload, q.ops)
		}
	}
	for _, q := range ps {
		if q.readers > 1 || q.goroutines > 1 {
			return nil, fmt.Errorf("a paired phase runs in one goroutine, %s asks for more", q.workload)
		}
	}
	// All start quiet: the first DB's compactions had the others' loads
	// (or their finish) to end in, the others' are waited for here.
	meters := make([]*phaseMeter, len(sides))
	shapes := make([]string, len(sides)) // each DB's tree as the clock starts
	names := make([]string, len(sides))
	for i, r := range sides {
		if err := settle(r); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		meters[i] = &phaseMeter{r: r, p: ps[i]}
		shapes[i] = shapeOf(r)
		names[i] = r.name
	}
	out, err := measureInterleaved(meters, chunk, fmt.Sprintf("%-24s %-17s", p.workload, strings.Join(names, "+")), progress)
	if err != nil {
		return nil, err
	}
	for i := range out {
		res := &out[i]
		res.PairedWith = sides[1-min(i, 1)].name
		// The shape shows whether all ran on the same tree: background
		// compactions may end differently in the DBs, or one may compact
		// during the timed loop.
		res.EngineShape = shapes[i]
		if end := shapeOf(sides[i]); end != shapes[i] {
			res.EngineShape += " -> " + end
		}
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

// measureInterleaved warms up every meter's phase, then runs the phases
// (the same ops, in this goroutine) in interleaved chunks of chunk ops
// (interleaveN), and returns each meter's result with its ChunkSeconds
// and ChunkCPUSeconds. The meters name the runners and phases; the timed
// meters are made after the warm-up. label heads the progress bar.
func measureInterleaved(meters []*phaseMeter, chunk int, label string, progress io.Writer) ([]result, error) {
	for _, m := range meters {
		if err := warmUp(m.p); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", meterName(m), err)
		}
	}
	runtime.GC() // the loads' garbage, collected before the clock starts
	ops := meters[0].p.ops
	bar := newBar(progress, len(meters)*ops, label)
	resetPeakRSS()
	chunks := make([][]float64, len(meters))
	cpu := make([][]float64, len(meters))
	timed := make([]*phaseMeter, len(meters))
	for i, m := range meters {
		timed[i] = newPhaseMeter(m.r, m.p)
	}
	err := interleaveN(ops, chunk, len(timed), func(side, lo, hi int) error {
		m := timed[side]
		before := m.elapsed
		cpu0 := processCPUTime()
		if err := m.runChunk(lo, hi); err != nil {
			return fmt.Errorf("%s: %w", meterName(m), err)
		}
		cpu[side] = append(cpu[side], (processCPUTime() - cpu0).Seconds())
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
			return nil, fmt.Errorf("%s: %w", meterName(m), err)
		}
		res.ChunkSeconds, res.ChunkCPUSeconds = chunks[i], cpu[i]
		out = append(out, res)
	}
	return out, nil
}

// meterName names m's runner in errors: the engine, and the filter where
// DBs of one engine differ by it (the filter and budget sweeps).
func meterName(m *phaseMeter) string {
	if m.r.filter == "" {
		return m.r.name
	}
	return m.r.name + " " + m.r.filter
}

// interleaveN splits ops [0, ops) into chunks of chunk and runs each chunk
// on every side, in an order that shares out what a side's place costs or
// gains: a chunk pays for the background work (flushes, compactions, GC)
// its predecessor left, and a side that ran a moment ago finds its DB's
// blocks and data structures warmer in the CPU's caches than one that ran
// long ago. With two sides, side 0 leads even chunks and side 1 odd ones.
// With three (a pair and its A/A control), threeSideCycle; with more
// (the filter and budget sweeps), williamsRow's cycle, in which each side
// runs straight after every other side about equally often.
func interleaveN(ops, chunk, sides int, run func(side, lo, hi int) error) error {
	for k, lo := 0, 0; lo < ops; k, lo = k+1, lo+chunk {
		hi := min(lo+chunk, ops)
		for j := range sides {
			if err := run(interleaveSide(k, j, sides), lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}

// threeSideCycle is the order of three sides in chunk k%12. Over its 12
// chunks (36 side-chunks, repeated) it is balanced for each property of a
// place in the sequence that we know to favour a side or could
// (TestInterleaveBalance):
//   - each side runs first, second and third in 4 chunks each, and in 2
//     each of the first 6 chunks, so a run cut half-way is balanced too;
//   - every ordered pair of sides runs back to back 6 times, across the
//     chunks' boundaries too, and no side runs twice in a row;
//   - in each pair of sides, each runs before the other in 6 chunks;
//   - every side waits 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4 side-chunks
//     since its own previous run;
//   - the sides' mean places in the cycle are equal, so a drift along the
//     run (a tree growing under the deletes) falls on all alike.
//
// The six-chunk cycle used before (rotations, then reversed rotations)
// balanced the first two but not the waits: side 1 waited 2, 2, 2, 2, 5,
// 5 and the others 2, 2, 2, 3, 4, 5. At 1M keys a side running 2 after
// its previous chunk beat one running 3-5 after by about 3-5%, and the
// delete pair (sides 0 and 1) carried that where its A/A (0 and 2) did
// not. No six-chunk cycle balances all of the above; this one was found
// by an exhaustive search over 12-chunk cycles.
var threeSideCycle = [12][3]int{
	{0, 1, 2}, {0, 2, 1}, {2, 0, 1}, {2, 1, 0}, {1, 2, 0}, {1, 0, 2},
	{0, 1, 2}, {1, 0, 2}, {1, 2, 0}, {2, 1, 0}, {2, 0, 1}, {0, 2, 1},
}

// interleaveCycle is the number of chunks after which interleaveN's
// order of sides repeats.
func interleaveCycle(sides int) int {
	switch {
	case sides <= 2:
		return 2
	case sides == 3:
		return len(threeSideCycle)
	}
	return 2 * sides
}

// interleaveSide is the side that runs j-th in chunk k (interleaveN).
func interleaveSide(k, j, sides int) int {
	switch {
	case sides <= 2:
		return (k + j) % sides
	case sides == 3:
		return threeSideCycle[k%len(threeSideCycle)][j]
	}
	m := k % interleaveCycle(sides)
	if m < sides {
		return (williamsRow(sides, j) + m) % sides
	}
	// The second half runs the first's chunks reversed, each shifted by
	// one side, so that no side runs twice in a row where the halves meet.
	return (williamsRow(sides, sides-1-j) + 2*sides - m) % sides
}

// williamsRow is the side at place j of the first chunk of a Williams
// design for n sides: 0, 1, n-1, 2, n-2, ... Chunk m of the first half
// adds m to every side (mod n), and the second half runs the same chunks
// reversed (shifted by one). Over the 2n chunks of a cycle, counting the
// boundaries between chunks too (TestInterleaveManyBalance):
//   - each side runs at each place twice;
//   - each side runs straight after every other side 2 or 3 times, and
//     never straight after itself: consecutive sides in the first row
//     differ by 1, n-2, 3, n-4, ..., every difference once for even n,
//     and with the reversed rows every ordered pair twice within chunks
//     for odd n too; the 2n boundaries add at most one more to a pair;
//   - the sides' mean places in the cycle are equal.
//
// The rotations used before (0 1 2 3, 1 2 3 0, ..., then the reversed
// ones) put each side straight after only its two neighbours in the
// ring. In the filter sweep auto-monkey's neighbour was none, the side
// with no filter, whose chunks read blocks and wash the CPU's caches and
// the block cache; auto-monkey ran after it in half its chunks and
// binary-fuse-8 never did, and the goal row comparing the two carried
// that place, 0.94-0.99x.
func williamsRow(n, j int) int {
	switch {
	case j == 0:
		return 0
	case j%2 == 1:
		return (j + 1) / 2
	}
	return n - j/2
}

// chunkSeries are b's time over a's for each chunk both ran interleaved
// (above 1: a was faster in that chunk), in the order the chunks ran;
// nil unless both ran the same chunks and every one of a's took time.
func chunkSeries(a, b *result) []float64 {
	if len(a.ChunkSeconds) == 0 || len(a.ChunkSeconds) != len(b.ChunkSeconds) {
		return nil
	}
	ratios := make([]float64, len(a.ChunkSeconds))
	for k, ta := range a.ChunkSeconds {
		if ta <= 0 {
			return nil
		}
		ratios[k] = b.ChunkSeconds[k] / ta
	}
	return ratios
}

// chunkRatios are chunkSeries(a, b) sorted.
func chunkRatios(a, b *result) []float64 {
	ratios := chunkSeries(a, b)
	slices.Sort(ratios)
	return ratios
}

// pairedSpeed is a's speed relative to b's over the chunks both ran
// interleaved: the median of chunkRatios (above 1: a is faster). A chunk
// in which the machine stalled one of the two is one outlier among many,
// where in summed times it moved the ratio by as much as the stall. ok is
// false unless both ran the same chunks.
func pairedSpeed(a, b *result) (speed float64, chunks int, ok bool) {
	ratios := chunkRatios(a, b)
	if ratios == nil {
		return 0, 0, false
	}
	return quantile(ratios, 0.5), len(ratios), true
}

// quantile is the q-quantile of sorted, linear between neighbours (the
// median of an even count is the mean of the middle two).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// pairedCPUSpeed is a's speed relative to b's charged by process CPU
// time: b's CPU over its chunks over a's. A chunk's CPU counts every
// thread's work while it ran (the flushes and compactions its ops set
// off, the index's updates among them, and the garbage collector; but
// also whatever the other DB's background work did meanwhile), and none
// of the time the process waited for a core, which the wall clock
// charges to whichever side the wait hit.
func pairedCPUSpeed(a, b *result) (speed float64, ok bool) {
	if len(a.ChunkCPUSeconds) == 0 || len(a.ChunkCPUSeconds) != len(b.ChunkCPUSeconds) {
		return 0, false
	}
	var ta, tb float64
	for k := range a.ChunkCPUSeconds {
		ta += a.ChunkCPUSeconds[k]
		tb += b.ChunkCPUSeconds[k]
	}
	if ta <= 0 {
		return 0, false
	}
	return tb / ta, true
}

// runChunk runs ops [lo, hi) of m's phase in this goroutine, timing each
// op and the chunk.
func (m *phaseMeter) runChunk(lo, hi int) error {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var written int64
	found := 0
	// The chunk's ops, and the flushes and compactions they start, carry
	// the engine's label in -cpuprofile (openSieve).
	if m.labels == nil {
		m.labels = pprof.WithLabels(context.Background(), pprof.Labels("engine", m.r.name, "phase", m.p.workload))
	}
	pprof.SetGoroutineLabels(m.labels)
	defer pprof.SetGoroutineLabels(context.Background())
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
	if m.p.afterChunk != nil {
		if err := m.p.afterChunk(hi); err != nil {
			return fmt.Errorf("after ops [%d, %d): %w", lo, hi, err)
		}
	}
	return nil
}
