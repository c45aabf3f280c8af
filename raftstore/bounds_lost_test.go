package raftstore

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/vfs/errorfs"
)

// storeOfTwoHundredInTables returns a store over efs holding entries
// 1..200 in a table, reopened so that seeking them reads the table file
// (the reads efs can then fail).
func storeOfTwoHundredInTables(t *testing.T, efs *errorfs.FS) *Store {
	t.Helper()
	s, err := Open("db", &kv.Options{FS: efs})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 200; i++ {
		l := testLog(i)
		l.Data = bytes.Repeat([]byte{byte(i)}, 2000)
		logs = append(logs, l)
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open("db", &kv.Options{FS: efs}); err != nil {
		t.Fatal(err)
	}
	return s
}

// boundsNameEntries fails the test unless FirstIndex and LastIndex either
// fail or name entries GetLog finds, and returns them (0, 0 on a failure).
func boundsNameEntries(t *testing.T, s *Store, what string) (first, last uint64) {
	t.Helper()
	first, ferr := s.FirstIndex()
	last, lerr := s.LastIndex()
	if ferr != nil || lerr != nil {
		return 0, 0
	}
	var l raft.Log
	for _, i := range []uint64{first, last} {
		if err := s.GetLog(i, &l); err != nil {
			t.Fatalf("%s: bounds %d-%d, but GetLog(%d) = %v", what, first, last, i, err)
		}
	}
	return first, last
}

// A DeleteRange commits its range tombstone and then seeks the bound it
// moved. When that seek failed on a read error, it used to return the
// error and leave the bound naming a deleted entry until a reopen: raft,
// told the truncation of a conflicting tail failed, keeps the deleted
// entries as its last and asks GetLog for them on every later append,
// each refused. Now the deletion succeeds and the next bound read seeks
// the lost bounds.
func TestDeleteRangeWhoseSeekFailsLosesNoBound(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		lo, hi, wantLo, wantHi uint64
	}{
		{"prefix", 1, 100, 101, 200},
		{"tail", 101, 200, 1, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpRead)
			s := storeOfTwoHundredInTables(t, efs)
			defer s.Close()
			efs.Reset()
			efs.FailAt(1, false) // the seek's table read
			if err := s.DeleteRange(tc.lo, tc.hi); err != nil {
				t.Fatalf("DeleteRange(%d, %d) = %v after committing it", tc.lo, tc.hi, err)
			}
			if efs.Injected() != 1 {
				t.Fatalf("%d reads failed, want the seek's one", efs.Injected())
			}
			if first, last := boundsNameEntries(t, s, "after the failed seek"); first != tc.wantLo || last != tc.wantHi {
				t.Fatalf("bounds %d-%d, want %d-%d", first, last, tc.wantLo, tc.wantHi)
			}
			var l raft.Log
			for i := tc.lo; i <= tc.hi; i++ {
				if err := s.GetLog(i, &l); err != raft.ErrLogNotFound {
					t.Fatalf("GetLog(%d) = %v after its deletion", i, err)
				}
			}
		})
	}
}

// While the reads keep failing, the lost bounds are an error, never a
// guess; once reads work again they are sought. A StoreLogs meanwhile
// leaves them to that seek, which finds its entries too.
func TestLostBoundsAreAnErrorUntilSought(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpRead)
	s := storeOfTwoHundredInTables(t, efs)
	defer s.Close()
	efs.Reset()
	efs.FailAt(1, true) // every read from here on
	if err := s.DeleteRange(101, 200); err != nil {
		t.Fatal(err)
	}
	if last, err := s.LastIndex(); err == nil {
		t.Fatalf("LastIndex = %d with every read failing, want an error", last)
	}
	if err := s.DeleteRange(50, 60); err == nil {
		t.Fatal("DeleteRange without bounds succeeded with every read failing")
	}
	if err := s.StoreLogs([]*raft.Log{testLog(300)}); err != nil {
		t.Fatal(err)
	}
	efs.FailAt(0, false)
	if first, last := boundsNameEntries(t, s, "reads back"); first != 1 || last != 300 {
		t.Fatalf("bounds %d-%d, want 1-300", first, last)
	}
	if err := s.DeleteRange(50, 60); err != nil {
		t.Fatal(err)
	}
}

// Whichever single read or open a DeleteRange of the log's head or tail
// fails, the bounds afterwards name entries (or are an error), and a
// reopen finds the same ones.
func TestDeleteRangeReadFaultSweepKeepsBounds(t *testing.T) {
	for _, r := range [][2]uint64{{1, 100}, {101, 200}} {
		for n := int64(1); ; n++ {
			efs := errorfs.Wrap(vfs.NewMem(), errorfs.OpRead|errorfs.OpOpen)
			s := storeOfTwoHundredInTables(t, efs)
			efs.Reset()
			efs.FailAt(n, false)
			derr := s.DeleteRange(r[0], r[1])
			efs.FailAt(0, false)
			what := fmt.Sprintf("DeleteRange(%d, %d) failing read or open %d (%v)", r[0], r[1], n, derr)
			first, last := boundsNameEntries(t, s, what)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := Open("db", &kv.Options{FS: efs})
			if err != nil {
				t.Fatal(err)
			}
			if f, l := boundsNameEntries(t, s, what+", reopened"); f != first || l != last {
				t.Fatalf("%s: bounds %d-%d, after a reopen %d-%d", what, first, last, f, l)
			}
			s.Close()
			if efs.Injected() == 0 {
				break // n is past the call's last read
			}
		}
	}
}
