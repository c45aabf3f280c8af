package raftstore

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// A nil entry (or a nil destination) is a caller's mistake the store
// reports as ErrInvalidArgument, writing nothing, instead of panicking
// inside the raft goroutine that called it.
func TestNilLogsAreInvalidArguments(t *testing.T) {
	h := newHarness(t)
	good := &raft.Log{Index: 7, Term: 1, Data: []byte("x")}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"StoreLog(nil)", func() error { return h.s.StoreLog(nil) }},
		{"StoreLogs([nil])", func() error { return h.s.StoreLogs([]*raft.Log{nil}) }},
		{"StoreLogs([good, nil])", func() error { return h.s.StoreLogs([]*raft.Log{good, nil}) }},
		{"GetLog(7, nil)", func() error { return h.s.GetLog(7, nil) }},
	} {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s panicked: %v", tc.name, r)
				}
			}()
			err = tc.call()
		}()
		if !errors.Is(err, kv.ErrInvalidArgument) {
			t.Errorf("%s = %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	// The batch holding a nil wrote none of its entries.
	var l raft.Log
	if err := h.s.GetLog(7, &l); err != raft.ErrLogNotFound {
		t.Errorf("GetLog(7) after a rejected batch = %v, want raft.ErrLogNotFound", err)
	}
	h.bounds(0, 0)
}

// Once Close has begun waiting for the reclaimer, a DeleteRange that got
// in just before the DB closed must not start a compaction: that would Add
// to the WaitGroup Close is waiting on, and compact a DB being closed.
func TestReclaimStartsNothingOnceCloseWaits(t *testing.T) {
	h := newHarness(t)
	h.s.reclaim.wait()
	if err := h.s.reclaim.deleted(reclaimDeletedEntries, 1<<20); err != nil {
		t.Fatal(err)
	}
	h.s.reclaim.mu.Lock()
	running := h.s.reclaim.running
	h.s.reclaim.mu.Unlock()
	if running {
		t.Fatal("a compaction started after Close began waiting")
	}
}

// A reclaim compaction's failure is reported by the next DeleteRange, whose
// own deletion has already been committed by then: the cached bounds must
// follow that deletion (R2) even though the call returns the old failure,
// or FirstIndex names an entry GetLog no longer finds.
func TestDeleteRangeReportingAReclaimFailureKeepsTheBounds(t *testing.T) {
	h := newHarness(t)
	h.storeRange(1, 10)
	injected := errors.New("injected compaction failure")
	h.s.reclaim.mu.Lock()
	h.s.reclaim.err = injected
	h.s.reclaim.mu.Unlock()

	if err := h.s.DeleteRange(1, 4); !errors.Is(err, injected) {
		t.Fatalf("DeleteRange(1, 4) = %v, want the reclaim failure", err)
	}
	h.present(4, false)
	h.present(5, true)
	if first, _ := h.s.FirstIndex(); first != 5 {
		t.Fatalf("FirstIndex = %d after deleting 1-4, want 5", first)
	}
	// The failure is reported once.
	h.deleteRange(9, 10)
	h.bounds(5, 8)
}

// Without a WAL the DB's synced writes live only in memory until a flush,
// so StoreLogs could not be durable on return (R3): raft would count on
// entries a crash loses. Open refuses the option instead of accepting it
// silently.
func TestOpenRefusesDisableWAL(t *testing.T) {
	s, err := Open(t.TempDir(), &kv.Options{DisableWAL: true})
	if err == nil {
		s.Close()
	}
	if !errors.Is(err, kv.ErrInvalidOptions) {
		t.Fatalf("Open with DisableWAL = %v, want kv.ErrInvalidOptions", err)
	}
}

// TestEveryMethodAfterCloseIsErrClosed: after Close every method fails
// with kv.ErrClosed. FirstIndex and LastIndex, which read cached bounds
// and no DB, used to return them with a nil error.
func TestEveryMethodAfterCloseIsErrClosed(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs([]*raft.Log{{Index: 1, Term: 1}, {Index: 2, Term: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	calls := map[string]func() error{
		"FirstIndex":  func() error { _, err := s.FirstIndex(); return err },
		"LastIndex":   func() error { _, err := s.LastIndex(); return err },
		"GetLog":      func() error { return s.GetLog(1, &l) },
		"StoreLog":    func() error { return s.StoreLog(&raft.Log{Index: 3, Term: 1}) },
		"StoreLogs":   func() error { return s.StoreLogs([]*raft.Log{{Index: 3, Term: 1}}) },
		"DeleteRange": func() error { return s.DeleteRange(1, 1) },
		"Set":         func() error { return s.Set([]byte("k"), []byte("v")) },
		"Get":         func() error { _, err := s.Get([]byte("k")); return err },
		"SetUint64":   func() error { return s.SetUint64([]byte("k"), 1) },
		"GetUint64":   func() error { _, err := s.GetUint64([]byte("k")); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, kv.ErrClosed) {
			t.Errorf("%s after Close: %v; want kv.ErrClosed", name, err)
		}
	}
}
