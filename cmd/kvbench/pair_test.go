package main

import (
	"bytes"
	"errors"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/internal/testutil"
)

// TestInterleaveAlternates: every op runs once on each side, chunk by
// chunk, both sides on the same ops in a chunk, and the side that goes
// first alternates, so neither is always measured first.
func TestInterleaveAlternates(t *testing.T) {
	type run struct{ side, lo, hi int }
	for _, tc := range []struct{ ops, chunk int }{{1000, 256}, {256, 256}, {1, 256}, {7, 2}} {
		var runs []run
		seen := [2][]int{make([]int, tc.ops), make([]int, tc.ops)}
		err := interleaveN(tc.ops, tc.chunk, 2, func(side, lo, hi int) error {
			runs = append(runs, run{side, lo, hi})
			for i := lo; i < hi; i++ {
				seen[side][i]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for side := range seen {
			for i, n := range seen[side] {
				if n != 1 {
					t.Fatalf("ops %d chunk %d: op %d ran %d times on side %d", tc.ops, tc.chunk, i, n, side)
				}
			}
		}
		for k := 0; 2*k < len(runs); k++ {
			a, b := runs[2*k], runs[2*k+1]
			if a.side != k%2 || b.side != 1-k%2 || a.lo != b.lo || a.hi != b.hi || a.hi-a.lo > tc.chunk {
				t.Fatalf("ops %d chunk %d: chunk %d ran as %+v then %+v", tc.ops, tc.chunk, k, a, b)
			}
		}
	}
	stop := errors.New("stop")
	calls := 0
	err := interleaveN(1000, 10, 2, func(side, lo, hi int) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("interleaveN went on after an error: %v after %d calls", err, calls)
	}
}

// TestPickPair: sievekv pairs with sievekv-rf on the scan workloads and
// with sievekv-notsi on deleterandom, whatever the order, and only when
// both run the workload on a DB of their own.
func TestPickPair(t *testing.T) {
	open := func(string, *ioCounters) (engine, error) { return nil, errors.New("not opened in this test") }
	plain := &runner{name: "sievekv", owner: true, open: open}
	rf := &runner{name: "sievekv-rf", owner: true, open: open, only: map[string]bool{"scanempty": true, "scanshort": true}}
	notsi := &runner{name: "sievekv-notsi", owner: true, open: open, only: map[string]bool{"fillrandom": true, "deleterandom": true}}
	control := &runner{name: "sievekv-control", owner: true, open: open, only: notsi.only}
	peb := &runner{name: "pebble", owner: true, open: open}
	view := &runner{name: "sievekv-rf", only: rf.only}
	for _, c := range []struct {
		order []*runner
		w     string
		want  *enginePair
		other *runner
	}{
		{[]*runner{peb, rf, notsi, plain}, "scanshort", scanPair, rf},
		{[]*runner{plain, rf, notsi}, "scanempty", scanPair, rf},
		{[]*runner{notsi, peb, rf, plain}, "deleterandom", deletePair, notsi},
		{[]*runner{plain, notsi}, "deleterandom", deletePair, notsi},
	} {
		ep, pair, ok := pickPair(c.order, c.w)
		if !ok || ep != c.want || len(pair) != 2 || pair[0] != plain || pair[1] != c.other {
			t.Errorf("%s: pair %v of %v, %v", c.w, pair, ep, ok)
		}
	}
	// The control joins the delete pair, last, whatever the order.
	if ep, pair, ok := pickPair([]*runner{control, notsi, peb, plain}, "deleterandom"); !ok || ep != deletePair ||
		!slices.Equal(pair, []*runner{plain, notsi, control}) {
		t.Errorf("deleterandom with a control: pair %v of %v, %v", pair, ep, ok)
	}
	// ...and no other pair.
	if ep, pair, ok := pickPair([]*runner{plain, rf, control}, "scanshort"); !ok || ep != scanPair || !slices.Equal(pair, []*runner{plain, rf}) {
		t.Errorf("scanshort with a control: pair %v of %v, %v", pair, ep, ok)
	}
	for _, c := range []struct {
		order []*runner
		w     string
	}{
		{[]*runner{plain, rf, notsi, peb}, "readrandom"},
		{[]*runner{plain, rf, notsi, peb}, "ycsb-c"}, // notsi does not run it
		{[]*runner{plain, peb}, "scanempty"},
		{[]*runner{plain, view}, "scanempty"},
		{[]*runner{plain, rf, peb}, "deleterandom"},
		{[]*runner{notsi, peb}, "deleterandom"},
		{[]*runner{plain, control}, "deleterandom"}, // a control is no pair
	} {
		if ep, _, ok := pickPair(c.order, c.w); ok {
			t.Errorf("%s paired as %v with %d runners", c.w, ep.engines, len(c.order))
		}
	}
}

// idleEngine is an engine with nothing in the background and no tables:
// enough for a phase meter, whose ops are the test's own.
type idleEngine struct{ engine }

func (idleEngine) busy() bool         { return false }
func (idleEngine) flush() error       { return nil }
func (idleEngine) filterBytes() int64 { return -1 }

// TestPairedPhaseChargesEachSideItsChunks: in a paired phase each side is
// timed over its own chunks only, so a slow side does not slow the other
// one's figure; every op runs once per side in alternating chunks, and
// each result counts its own ops, finds and bytes written.
func TestPairedPhaseChargesEachSideItsChunks(t *testing.T) {
	const ops, chunk, slowOp = 400, 50, 500 * time.Microsecond
	var mu sync.Mutex
	var calls [2][]int // op indices in the order each side ran them
	sides := make([]*runner, 2)
	ps := make([]phaseSpec, 2)
	for i, name := range []string{"sievekv", "sievekv-notsi"} {
		sides[i] = &runner{name: name, eng: idleEngine{}, io: &ioCounters{}, dir: t.TempDir(), owner: true, live: ops}
		ps[i] = phaseSpec{workload: "deleterandom", ops: ops, wantFound: noCheck, op: func(k int) (int64, bool, error) {
			if i == 0 {
				time.Sleep(slowOp)
			}
			mu.Lock()
			calls[i] = append(calls[i], k)
			mu.Unlock()
			return int64(i + 1), k%2 == 0, nil
		}}
	}
	rs, err := runPairedPhase(sides, ps, chunk, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d results", len(rs))
	}
	for i, r := range rs {
		if r.Engine != sides[i].name || r.PairedWith != sides[1-i].name || r.Ops != ops || r.Found != ops/2 || r.Workload != "deleterandom" {
			t.Errorf("side %d: %+v", i, r)
		}
		for k, op := range calls[i] {
			if op != k {
				t.Fatalf("side %d ran op %d as its op number %d", i, op, k)
			}
		}
		if len(calls[i]) != ops {
			t.Errorf("side %d ran %d ops", i, len(calls[i]))
		}
	}
	for i, r := range rs {
		if len(r.ChunkSeconds) != ops/chunk || len(r.ChunkCPUSeconds) != ops/chunk {
			t.Fatalf("side %d: %d chunk times and %d chunk CPU times, want %d", i, len(r.ChunkSeconds), len(r.ChunkCPUSeconds), ops/chunk)
		}
		var sum float64
		for _, c := range r.ChunkSeconds {
			sum += c
		}
		if math.Abs(sum-r.ElapsedSec) > 1e-6*r.ElapsedSec {
			t.Errorf("side %d: chunks sum to %.6f s, elapsed %.6f s", i, sum, r.ElapsedSec)
		}
	}
	if s, n, ok := pairedSpeed(&rs[1], &rs[0]); !ok || n != ops/chunk || s < 5 {
		t.Errorf("the fast side's per-chunk speed over the slow one's: %.2f over %d chunks (%v)", s, n, ok)
	}
	slow, fast := rs[0], rs[1]
	if slow.ElapsedSec < ops*slowOp.Seconds() {
		t.Errorf("the slow side's time %.4f s is less than its ops slept", slow.ElapsedSec)
	}
	// The fast side's ops do nothing: were it charged the slow side's
	// chunks, it would take as long.
	if fast.ElapsedSec > slow.ElapsedSec/5 || fast.OpsPerSec < 5*slow.OpsPerSec {
		t.Errorf("the fast side was charged the slow side's time: %.4f s vs %.4f s", fast.ElapsedSec, slow.ElapsedSec)
	}
}

// TestPairedPhaseRejectsUnlikePhases: the two sides of a pair must run
// the same phase, and in one goroutine.
func TestPairedPhaseRejectsUnlikePhases(t *testing.T) {
	op := func(int) (int64, bool, error) { return 0, false, nil }
	sides := make([]*runner, 2)
	for i := range sides {
		sides[i] = &runner{name: "sievekv", eng: idleEngine{}, io: &ioCounters{}, dir: t.TempDir(), owner: true}
	}
	base := phaseSpec{workload: "deleterandom", ops: 10, op: op, wantFound: noCheck}
	fewer, other, parallel := base, base, base
	fewer.ops = 9
	other.workload = "deleterandom-getkept"
	parallel.goroutines = 4
	for _, p := range []phaseSpec{fewer, other, parallel} {
		if _, err := runPairedPhase(sides, []phaseSpec{base, p}, 4, io.Discard); err == nil || !strings.Contains(err.Error(), p.workload) {
			t.Errorf("paired %+v with %+v: %v", base, p, err)
		}
	}
}

// runPairTiny runs kvbench on a few thousand keys with engines and
// workloads as given, and returns its stdout and results.
func runPairTiny(t *testing.T, engines, workloads string) (string, []result) {
	t.Helper()
	dir := t.TempDir()
	jsonOut := filepath.Join(dir, "out.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-n", "3000", "-ops", "1000", "-memtable", "65536", "-cache", "65536", "-progress=false",
		"-engines", engines, "-workloads", workloads, "-dir", filepath.Join(dir, "db"), "-json", jsonOut}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("kvbench: %v\n%s", err, stderr.String())
	}
	return stdout.String(), testutil.ReadJSON[[]result](t, jsonOut)
}

// TestPairedPhaseWithControl: a third side runs in the same interleave,
// every side leading equally often, and names the first as its pair.
func TestPairedPhaseWithControl(t *testing.T) {
	const ops, chunk = 120, 10 // one cycle of three sides' order
	var order []string
	names := []string{"sievekv", "sievekv-notsi", "sievekv-control"}
	sides := make([]*runner, 3)
	ps := make([]phaseSpec, 3)
	for i, name := range names {
		sides[i] = &runner{name: name, eng: idleEngine{}, io: &ioCounters{}, dir: t.TempDir(), owner: true, live: ops}
		ps[i] = phaseSpec{workload: "deleterandom", ops: ops, wantFound: noCheck, op: func(k int) (int64, bool, error) {
			if k%chunk == 0 {
				order = append(order, names[i])
			}
			return 0, false, nil
		}}
	}
	rs, err := runPairedPhase(sides, ps, chunk, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	for i, want := range []string{"sievekv-notsi", "sievekv", "sievekv"} {
		if rs[i].Engine != names[i] || rs[i].PairedWith != want || rs[i].Ops != ops || len(rs[i].ChunkSeconds) != ops/chunk {
			t.Errorf("side %d: %s paired with %s, %d ops, %d chunks", i, rs[i].Engine, rs[i].PairedWith, rs[i].Ops, len(rs[i].ChunkSeconds))
		}
	}
	leads := map[string]int{}
	for k := 0; k < len(order); k += 3 {
		leads[order[k]]++
	}
	for _, n := range names {
		if leads[n] != ops/chunk/3 {
			t.Errorf("leads %v: every side should lead %d chunks", leads, ops/chunk/3)
		}
	}
}

// TestChunkStatistics: quantiles interpolate between sorted neighbours,
// chunk ratios pair chunk k with chunk k, and the CPU-charged speed is
// the ratio of summed CPU, none when either side has no CPU times.
func TestChunkStatistics(t *testing.T) {
	sorted := []float64{1, 2, 3, 4}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.75, 3.25}, {1, 4}} {
		if got := quantile(sorted, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v", sorted, c.q, got, c.want)
		}
	}
	if got := quantile([]float64{7}, 0.5); got != 7 {
		t.Errorf("quantile of one = %v", got)
	}
	a := &result{ChunkSeconds: []float64{1, 2, 4}, ChunkCPUSeconds: []float64{1, 1, 2}}
	b := &result{ChunkSeconds: []float64{3, 2, 2}, ChunkCPUSeconds: []float64{2, 2, 4}}
	if got := chunkRatios(a, b); !slices.Equal(got, []float64{0.5, 1, 3}) {
		t.Errorf("chunkRatios = %v, want [0.5 1 3]", got)
	}
	if s, ok := pairedCPUSpeed(a, b); !ok || s != 2 {
		t.Errorf("pairedCPUSpeed = %v (%v), want 2", s, ok)
	}
	if _, ok := pairedCPUSpeed(a, &result{ChunkSeconds: b.ChunkSeconds}); ok {
		t.Error("pairedCPUSpeed without CPU times")
	}
	if got := chunkRatios(&result{ChunkSeconds: []float64{0, 1}}, &result{ChunkSeconds: []float64{1, 1}}); got != nil {
		t.Errorf("chunkRatios with an untimed chunk = %v", got)
	}
}

// TestPickEngines: all is allEngines without the controls, which a list
// names beside all or beside other engines, each once; unknown names fail.
func TestPickEngines(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []string
	}{
		{"all", allEngines},
		{"all,sievekv-control", append(slices.Clone(allEngines), "sievekv-control")},
		{"sievekv,sievekv-notsi,sievekv-control,sievekv", []string{"sievekv", "sievekv-notsi", "sievekv-control"}},
	} {
		if got, err := pickEngines(c.s); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("pickEngines(%q) = %v, %v; want %v", c.s, got, err, c.want)
		}
	}
	if slices.Contains(allEngines, "sievekv-control") {
		t.Error("all includes the control")
	}
	if _, err := pickEngines("sievekv,nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("an unknown engine: %v", err)
	}
}

// TestInterleaveBalance: three sides' cycle (threeSideCycle) is balanced
// for each property it documents: places in a chunk (over the cycle and
// its first half), ordered pairs back to back (none of a side with
// itself), which of two sides runs first in a chunk, the waits since a
// side's previous run, and the mean place in the cycle.
func TestInterleaveBalance(t *testing.T) {
	const sides = 3
	cycle := interleaveCycle(sides)
	var stream []int
	places := map[[2]int]int{}    // side, place in chunk -> chunks
	firstHalf := map[[2]int]int{} // the same over the first cycle/2 chunks
	before := map[[2]int]int{}    // a, b -> chunks in which a runs before b
	for k := range cycle {
		var order []int
		for j := range sides {
			s := interleaveSide(k, j, sides)
			stream = append(stream, s)
			order = append(order, s)
			places[[2]int{s, j}]++
			if k < cycle/2 {
				firstHalf[[2]int{s, j}]++
			}
		}
		if slices.Sorted(slices.Values(order))[sides-1] != sides-1 || len(slices.Compact(slices.Sorted(slices.Values(order)))) != sides {
			t.Fatalf("chunk %d runs %v, want each side once", k, order)
		}
		for i, a := range order {
			for _, b := range order[i+1:] {
				before[[2]int{a, b}]++
			}
		}
	}
	n := len(stream)
	pairs := followCounts(stream)
	waits := make([][]int, sides)
	placeSum := placeSums(stream, sides)
	for i, s := range stream {
		for d := 1; d <= n; d++ {
			if stream[(i+n-d)%n] == s {
				waits[s] = append(waits[s], d)
				break
			}
		}
	}
	for a := range sides {
		for b := range sides {
			if places[[2]int{a, b}] != cycle/sides || firstHalf[[2]int{a, b}] != cycle/2/sides {
				t.Errorf("side %d runs %d-th in %d chunks of %d (%d of the first %d), want %d (%d)",
					a, b, places[[2]int{a, b}], cycle, firstHalf[[2]int{a, b}], cycle/2, cycle/sides, cycle/2/sides)
			}
			wantPairs, wantBefore := cycle/2, cycle/2
			if a == b {
				wantPairs, wantBefore = 0, 0
			}
			if pairs[[2]int{a, b}] != wantPairs {
				t.Errorf("side %d runs straight after side %d %d times a cycle, want %d", b, a, pairs[[2]int{a, b}], wantPairs)
			}
			if before[[2]int{a, b}] != wantBefore {
				t.Errorf("side %d runs before side %d in %d chunks of %d, want %d", a, b, before[[2]int{a, b}], cycle, wantBefore)
			}
		}
	}
	want := []int{2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}
	for s := range sides {
		if got := slices.Sorted(slices.Values(waits[s])); !slices.Equal(got, want) {
			t.Errorf("side %d waits %v since its previous run, want %v", s, got, want)
		}
		if placeSum[s] != placeSum[0] {
			t.Errorf("side %d's places in the cycle sum to %d, side 0's to %d, want equal", s, placeSum[s], placeSum[0])
		}
	}
}

// followCounts counts, in a cycle's stream of side-chunks, how often each
// ordered pair of sides runs back to back, the cycle taken round (its
// last side-chunk runs before the next cycle's first).
func followCounts(stream []int) map[[2]int]int {
	n := len(stream)
	pairs := map[[2]int]int{}
	for i, s := range stream {
		pairs[[2]int{stream[(i+n-1)%n], s}]++
	}
	return pairs
}

// placeSums is each side's positions in stream, summed.
func placeSums(stream []int, sides int) []int {
	sums := make([]int, sides)
	for i, s := range stream {
		sums[s] += i
	}
	return sums
}

// TestInterleaveManyBalance checks williamsRow's cycle for 4 to 23 sides
// (the filter and budget sweeps): each side at each place twice, each
// side straight after every other 2 or 3 times a cycle (never after
// itself), equal mean places. The rotations used before failed it: a side
// ran after only its two ring neighbours.
func TestInterleaveManyBalance(t *testing.T) {
	for sides := 4; sides <= 23; sides++ {
		cycle := interleaveCycle(sides)
		var stream []int
		places := map[[2]int]int{}
		for k := range cycle {
			for j := range sides {
				s := interleaveSide(k, j, sides)
				stream = append(stream, s)
				places[[2]int{s, j}]++
			}
		}
		pairs := followCounts(stream)
		sums := placeSums(stream, sides)
		for a := range sides {
			for b := range sides {
				if places[[2]int{a, b}] != 2 {
					t.Errorf("%d sides: side %d runs %d-th in %d chunks of %d, want 2", sides, a, b, places[[2]int{a, b}], cycle)
				}
				got := pairs[[2]int{a, b}]
				if a == b && got != 0 || a != b && (got < 2 || got > 3) {
					t.Errorf("%d sides: side %d runs straight after side %d %d times a cycle, want 2-3 (0 for itself)", sides, b, a, got)
				}
			}
			if sums[a] != sums[0] {
				t.Errorf("%d sides: side %d's places sum to %d, side 0's to %d", sides, a, sums[a], sums[0])
			}
		}
	}
}
