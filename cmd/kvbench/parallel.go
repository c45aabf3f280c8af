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
// or, if p.duration is set, that time from the start run out. Latencies
// land in lat at each op's index; if the time ran out first, those of
// the ops that ran are moved to lat's front. onReader, if set, runs first
// in each goroutine, and what it returns runs as the goroutine ends. It
// returns how many ops ran and how many found their key.
func runParallel(p phaseSpec, ops []opFunc, lat []time.Duration, bar *progressbar.ProgressBar, onReader func() func()) (done, found int, err error) {
	readers := len(ops)
	var wg sync.WaitGroup
	founds, ran := make([]int, readers), make([]int, readers)
	errs := make([]error, readers)
	end := time.Now().Add(p.duration)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if onReader != nil {
				defer onReader()()
			}
			for i := g; i < p.ops; i += readers {
				t0 := time.Now()
				if p.duration > 0 && t0.After(end) {
					return
				}
				_, ok, err := ops[g](i)
				lat[i] = time.Since(t0)
				ran[g]++
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
		done += ran[g]
		found += founds[g]
	}
	if done < p.ops {
		k := 0
		for i := range p.ops {
			if g := i % readers; i/readers < ran[g] {
				lat[k] = lat[i]
				k++
			}
		}
	}
	bar.Add(done)
	return done, found, nil
}
