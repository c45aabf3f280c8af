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
// loop's shape, before the clock starts.
func warmReaders(p phaseSpec) ([]opFunc, error) {
	ops := make([]opFunc, p.readers)
	for g := range ops {
		ops[g] = p.opFor(g)
		for i := range min(p.ops/10, 20000) / p.readers {
			if _, _, err := ops[g](i); err != nil {
				return nil, err
			}
		}
	}
	return ops, nil
}

// runParallel runs phase p's ops on len(ops) goroutines, goroutine g
// taking ops g, g+len(ops), ... with ops[g] (warmReaders'). Latencies land
// in lat at each op's index. onReader, if set, runs first in each
// goroutine, and what it returns runs as the goroutine ends. It returns
// how many ops found their key.
func runParallel(p phaseSpec, ops []opFunc, lat []time.Duration, bar *progressbar.ProgressBar, onReader func() func()) (int, error) {
	readers := len(ops)
	var wg sync.WaitGroup
	found := make([]int, readers)
	errs := make([]error, readers)
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if onReader != nil {
				defer onReader()()
			}
			for i := g; i < p.ops; i += readers {
				t0 := time.Now()
				_, ok, err := ops[g](i)
				lat[i] = time.Since(t0)
				if err != nil {
					errs[g] = fmt.Errorf("reader %d op %d: %w", g, i, err)
					return
				}
				if ok {
					found[g]++
				}
			}
		}()
	}
	wg.Wait()
	bar.Add(p.ops)
	total := 0
	for g := range readers {
		if errs[g] != nil {
			return 0, errs[g]
		}
		total += found[g]
	}
	return total, nil
}
