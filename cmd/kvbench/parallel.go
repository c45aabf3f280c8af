package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// runParallel runs phase p's ops on p.readers goroutines, goroutine g
// taking ops g, g+readers, ... with its own opFor(g) (each has its own
// generator, since an opFunc is not safe for concurrent use), after a
// warmup of the same shape. Latencies land in lat at each op's index. It
// returns how many ops found their key.
func runParallel(p phaseSpec, lat []time.Duration, bar *progressbar.ProgressBar) (int, error) {
	ops := make([]opFunc, p.readers)
	for g := range ops {
		ops[g] = p.opFor(g)
		for i := range min(p.ops/10, 20000) / p.readers {
			if _, _, err := ops[g](i); err != nil {
				return 0, err
			}
		}
	}
	var wg sync.WaitGroup
	found := make([]int, p.readers)
	errs := make([]error, p.readers)
	for g := range p.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < p.ops; i += p.readers {
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
	for g := range p.readers {
		if errs[g] != nil {
			return 0, errs[g]
		}
		total += found[g]
	}
	return total, nil
}
