package testutil

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

func TestGroup(t *testing.T) {
	var g Group
	var ran atomic.Int64
	for i := range 10 {
		g.Go(func() error {
			ran.Add(1)
			if i%3 == 0 {
				return fmt.Errorf("goroutine %d", i)
			}
			return nil
		})
	}
	errs := g.Wait()
	if ran.Load() != 10 {
		t.Fatalf("Wait returned after %d of 10 goroutines", ran.Load())
	}
	if len(errs) != 4 {
		t.Fatalf("errors %v, want those of goroutines 0, 3, 6 and 9", errs)
	}
	var empty Group
	if errs := empty.Wait(); errs != nil {
		t.Fatalf("an empty group returned %v", errs)
	}
	empty.Go(func() error { return errors.New("late") })
	if errs := empty.Wait(); len(errs) != 1 {
		t.Fatalf("a reused group returned %v", errs)
	}
}

// TestGroupGoRandom: goroutine i of GoRandom draws from the source seeded
// (i, stream), so a concurrency test's workers are reproducible.
func TestGroupGoRandom(t *testing.T) {
	var g Group
	var mu sync.Mutex
	got := map[uint64]bool{}
	g.GoRandom(3, 5, func(rng *rand.Rand) error {
		mu.Lock()
		got[rng.Uint64()] = true
		mu.Unlock()
		return nil
	})
	g.Wait()
	for i := range 3 {
		if want := rand.New(rand.NewPCG(uint64(i), 5)).Uint64(); !got[want] {
			t.Fatalf("no goroutine drew from source (%d, 5): %v", i, got)
		}
	}
}
