package kv

import (
	"errors"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// TestClosesQueuedTogetherTearDownOnce: two Closes that queue behind the
// same commit both passed asLeader's closed check before either ran; the
// first closed the DB and the second, given the lead, ran the whole
// teardown again and panicked closing a closed channel (and would have
// closed the manifest, the tables and the lock twice). A Sync commit is
// held in its fsync, as the head of the commit queue, while both Closes
// and a Flush queue behind it; once it is let through, exactly one Close
// does the work and the others get ErrClosed.
func TestClosesQueuedTogetherTearDownOnce(t *testing.T) {
	fs := &syncGateFS{FS: vfs.NewMem()}
	d := openMem(t, fs, nil)
	d.mu.Lock()
	log := d.path(fileKindLog, d.mem.logNum)
	d.mu.Unlock()
	reached, release := fs.hold(log)
	defer release()
	setDone := make(chan error, 1)
	go func() { setDone <- d.Set([]byte("k"), []byte("v"), Sync) }()
	<-reached // the Set leads the queue, in its fsync

	type result struct {
		name string
		err  error
		pnc  any
	}
	results := make(chan result, 3)
	run := func(name string, fn func() error) {
		go func() {
			defer func() {
				if p := recover(); p != nil {
					results <- result{name: name, pnc: p}
				}
			}()
			results <- result{name: name, err: fn()}
		}()
	}
	run("Close 1", d.Close)
	run("Close 2", d.Close)
	run("Flush", d.Flush)
	deadline := time.Now().Add(10 * time.Second)
	for queued := 0; queued < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want the Set and three behind it", queued)
		}
		time.Sleep(time.Millisecond)
		d.mu.Lock()
		queued = len(d.writers)
		d.mu.Unlock()
	}
	release()
	if err := <-setDone; err != nil {
		t.Fatalf("the held Set: %v", err)
	}
	var nils []string
	for range 3 {
		r := <-results
		switch {
		case r.pnc != nil:
			t.Fatalf("%s panicked: %v", r.name, r.pnc)
		case r.err == nil:
			nils = append(nils, r.name)
		case !errors.Is(r.err, ErrClosed):
			t.Errorf("%s = %v, want nil or ErrClosed", r.name, r.err)
		}
	}
	// The Flush may run before either Close (then it succeeds) or after
	// one (ErrClosed); exactly one Close succeeds.
	closes := 0
	for _, n := range nils {
		if n != "Flush" {
			closes++
		}
	}
	if closes != 1 {
		t.Fatalf("calls that succeeded: %v; want exactly one Close", nils)
	}
	d2 := openMem(t, fs.FS, nil)
	defer d2.Close()
	if v, err := d2.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("after reopening: Get = %q, %v", v, err)
	}
}
