package memtable

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestSpinLockExcludes: writers under lock and readers under rlock, more
// goroutines than processors so that holders get descheduled and the
// spinning falls back to blocking. A writer moves a pair of plain ints
// from (i, i) to (i+1, i+1) one field at a time; no reader may see them
// differ, and no two writers may interleave (the final count). -race
// checks the happens-before edges as well.
func TestSpinLockExcludes(t *testing.T) {
	m := New()
	var a, b int
	const writers, readers, rounds = 3, 3 * 2, 2000
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := range rounds {
				m.lock()
				a++
				if i%64 == 0 {
					runtime.Gosched() // descheduled while holding the lock
				}
				b++
				m.mu.Unlock()
			}
		})
	}
	errs := make(chan string, readers)
	for range readers {
		wg.Go(func() {
			for range rounds {
				m.rlock()
				x, y := a, b
				m.mu.RUnlock()
				if x != y {
					errs <- "a reader saw a write half done"
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if a != writers*rounds || b != writers*rounds {
		t.Fatalf("counts %d, %d after %d writes: writers interleaved", a, b, writers*rounds)
	}
}

// TestSpinLockFallsBackToBlocking: a reader that cannot get the lock for
// far longer than its spinning lasts (the writer rebuilding the key
// filter) blocks, and gets it when the writer lets go.
func TestSpinLockFallsBackToBlocking(t *testing.T) {
	m := New()
	m.mu.Lock()
	got := make(chan struct{})
	go func() {
		m.rlock()
		m.mu.RUnlock()
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("rlock succeeded while the write lock was held")
	case <-time.After(50 * time.Millisecond):
	}
	m.mu.Unlock()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("rlock never got the lock after it was released")
	}
}
