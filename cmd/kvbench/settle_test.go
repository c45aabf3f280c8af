package main

import (
	"sync/atomic"
	"testing"
	"time"
)

// idleDueEngine is an idle engine that reports idle work due until it has
// been asked dueFor times (sievekv's idle purge, which it starts itself
// once nothing writes to it).
type idleDueEngine struct {
	idleEngine
	asked  *atomic.Int32
	dueFor int32
}

func (e idleDueEngine) idleWorkDue() bool { return e.asked.Add(1) <= e.dueFor }

// TestWaitQuietDoesNotWaitForIdleWork: the wait between a workload's
// chunks returns once flushes and compactions are done, whatever idle
// work the engine has due (waiting for it would run an idle purge after
// every chunk, work no user of the workload sees), while settle, the tree
// a user finds after leaving the DB alone, waits for that work too.
func TestWaitQuietDoesNotWaitForIdleWork(t *testing.T) {
	var asked atomic.Int32
	r := &runner{name: "sievekv", eng: idleDueEngine{asked: &asked, dueFor: 1 << 30}, io: &ioCounters{}}
	done := make(chan error, 1)
	go func() { done <- waitQuiet(r, time.Millisecond) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waitQuiet waited for idle work")
	}

	asked.Store(0)
	r.eng = idleDueEngine{asked: &asked, dueFor: 3}
	if err := settle(r); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n <= 3 {
		t.Errorf("settle returned after asking about idle work %d times; it was due for the first 3", n)
	}
}
