package raftstore

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// TestPowerLossKeepsEveryAcknowledgedWrite runs random log and stable
// writes on an in-memory file system and, after every few, opens what a
// power loss at that instant would leave (vfs.MemFS.CrashClone): since
// every write syncs before it returns (R3), the crashed store must match
// the model exactly, not merely contain a prefix of it.
func TestPowerLossKeepsEveryAcknowledgedWrite(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("raft", &kv.Options{FS: fs, MemTableSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(18, 21))
	logs := map[uint64]bool{}
	term := uint64(0)
	next := uint64(1)
	for step := 0; step < 120; step++ {
		switch op := rng.IntN(10); {
		case op < 6: // append, as a leader or follower does
			var batch []*raft.Log
			for n := rng.IntN(5) + 1; n > 0; n-- {
				batch = append(batch, testLog(next))
				logs[next] = true
				next++
			}
			if err := s.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
		case op < 8: // prefix compaction or tail truncation
			first, _ := s.FirstIndex()
			last, _ := s.LastIndex()
			if last == 0 {
				continue
			}
			lo, hi := first, first+rng.Uint64N(last-first+1)
			if op == 7 {
				lo, hi = first+rng.Uint64N(last-first+1), last
				next = lo
			}
			if err := s.DeleteRange(lo, hi); err != nil {
				t.Fatal(err)
			}
			for i := lo; i <= hi; i++ {
				delete(logs, i)
			}
		default:
			term++
			if err := s.SetUint64([]byte("CurrentTerm"), term); err != nil {
				t.Fatal(err)
			}
		}
		if step%6 == 5 {
			checkCrashed(t, fs.CrashClone(), logs, term, next)
		}
	}
}

func checkCrashed(t *testing.T, crashed *vfs.MemFS, logs map[uint64]bool, term, next uint64) {
	t.Helper()
	s, err := Open("raft", &kv.Options{FS: crashed})
	if err != nil {
		t.Fatalf("open after power loss: %v", err)
	}
	defer s.Close()
	var first, last uint64
	for i := range logs {
		if first == 0 || i < first {
			first = i
		}
		last = max(last, i)
	}
	if f, _ := s.FirstIndex(); f != first {
		t.Fatalf("after power loss FirstIndex = %d; acknowledged state %d", f, first)
	}
	if l, _ := s.LastIndex(); l != last {
		t.Fatalf("after power loss LastIndex = %d; acknowledged state %d", l, last)
	}
	for i := uint64(1); i < next+5; i++ {
		var l raft.Log
		err := s.GetLog(i, &l)
		switch {
		case logs[i] && err != nil:
			t.Fatalf("acknowledged entry %d lost in a power loss: %v", i, err)
		case logs[i]:
			sameLog(t, &l, testLog(i))
		case !errors.Is(err, raft.ErrLogNotFound):
			t.Fatalf("deleted entry %d after power loss: %v", i, err)
		}
	}
	got, err := s.GetUint64([]byte("CurrentTerm"))
	if term == 0 && !errors.Is(err, ErrNotFound) || term != 0 && got != term {
		t.Fatalf("CurrentTerm after power loss = %d, %v; acknowledged %d", got, err, term)
	}
}
