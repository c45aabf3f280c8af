package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// warmReaders makes the opFuncs of phase p's p.readers goroutines, one
// opFor(g) each (each has its own generator, since an opFunc is not safe
// for concurrent use), and runs each one's untimed warm-up: the timed
// loop's shape, before the clock starts: a tenth of the phase's ops, or
// of its time for a time-bound phase, whose ops are only a cap
// (timeWhileWriting): a tenth of that cap warmed each engine's readers for
// up to 20,000 reads, far longer than the phase then read (a fifth of
// kvbench's own tests' time under the race detector).
func warmReaders(p phaseSpec) ([]opFunc, error) {
	ops := make([]opFunc, p.readers)
	for g := range ops {
		ops[g] = p.opFor(g)
		stop := time.Now().Add(p.duration / 10 / time.Duration(p.readers))
		for i := range min(p.ops/10, 20000) / p.readers {
			if p.duration > 0 && time.Now().After(stop) {
				break
			}
			if _, _, err := ops[g](i); err != nil {
				return nil, err
			}
		}
	}
	return ops, nil
}

// runParallel runs phase p's ops on len(ops) goroutines, goroutine g
// taking ops g, g+len(ops), ... with ops[g] (warmReaders'), until the ops
// or, if p.duration is set, that time from the start run out; a timed
// phase's ops are then only a guard no engine reaches. Each goroutine
// records its latencies in a buffer of its own, sized for its share of
// the ops or, timed, of timedOpsPerSecondHint, and grown past it; *lat
// then holds them all, in no particular order (percentiles sort them).
// onReader, if set, runs first in each goroutine, and what it returns runs
// as the goroutine ends. It returns how many ops ran and how many found
// their key.
func runParallel(p phaseSpec, ops []opFunc, lat *[]time.Duration, bar *progressbar.ProgressBar, onReader func() func()) (done, found int, err error) {
	readers := len(ops)
	var wg sync.WaitGroup
	founds := make([]int, readers)
	lats := make([][]time.Duration, readers)
	errs := make([]error, readers)
	hint := (p.ops + readers - 1) / readers
	var end time.Time
	if p.duration > 0 {
		hint = min(p.ops, int(p.duration.Seconds()*timedOpsPerSecondHint)) / readers
		end = time.Now().Add(p.duration)
	}
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if onReader != nil {
				defer onReader()()
			}
			mine := make([]time.Duration, 0, hint+1)
			defer func() { lats[g] = mine }()
			for i := g; i < p.ops; i += readers {
				t0 := time.Now()
				if p.duration > 0 && t0.After(end) {
					return
				}
				_, ok, err := ops[g](i)
				mine = append(mine, time.Since(t0))
				if err != nil {
					errs[g] = fmt.Errorf("reader %d op %d: %w", g, i, err)
					return
				}
				if ok {
					founds[g]++
				}
			}
		}()
	}
	wg.Wait()
	for g := range readers {
		if errs[g] != nil {
			return 0, 0, errs[g]
		}
		done += len(lats[g])
		found += founds[g]
	}
	all := (*lat)[:0]
	if cap(all) < done {
		all = make([]time.Duration, 0, done)
	}
	for g := range readers {
		all = append(all, lats[g]...)
	}
	*lat = all
	bar.Add(done)
	return done, found, nil
}

// timedOpsPerSecondHint sizes a timed phase's latency buffers: a million
// reads a second, which engines beside a writer come near; a faster
// reader's buffer grows (sievekv's Gets of absent keys ran at 1.7 million
// a second, and with a buffer this size as the phase's cap they stopped
// at 85-130 ms of a 150 ms phase, reporting the time they read).
const timedOpsPerSecondHint = 1_000_000
