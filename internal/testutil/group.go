package testutil

import (
	"math/rand/v2"
	"sync"
)

// Group runs the goroutines of a concurrency test and gathers their
// errors, so a test states what each goroutine does and what failure it
// returns rather than its WaitGroup and error channel. The zero Group is
// ready to use; it must not be copied after first use.
type Group struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error // guarded by mu
}

// Go runs fn in a new goroutine; a non-nil error it returns is kept for
// Wait.
func (g *Group) Go(fn func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := fn(); err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, err)
			g.mu.Unlock()
		}
	}()
}

// GoRandom runs n goroutines of fn, goroutine i with its own random source
// seeded (i, stream): the workers of a concurrency test draw different but
// reproducible operations.
func (g *Group) GoRandom(n int, stream uint64, fn func(rng *rand.Rand) error) {
	for i := range n {
		g.Go(func() error { return fn(rand.New(rand.NewPCG(uint64(i), stream))) })
	}
}

// Wait waits for every goroutine Go started and returns the errors they
// returned, in the order they returned them (none: all succeeded).
func (g *Group) Wait() []error {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.errs
}
