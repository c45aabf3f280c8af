package raftstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/internal/testutil"
	"github.com/sievekv/sievekv/kv"
)

// A node's raft directory must open with every later build: its entries,
// bounds and votes are what keep a restarted member from forgetting what
// it acknowledged. Each testdata/store-<date>.tar.gz is a Store as
// writeGoldenStore left it on that date and is never rewritten (as kv's
// testdata/db-*.tar.gz; docs/format.md).
//
// To add one: SIEVEKV_WRITE_GOLDEN_STORE=testdata/store-<date>.tar.gz go test ./raftstore -run TestGoldenStores

// The fixtures hold entries goldenFirst..goldenLast, written as
// goldenLog(1..goldenLast) and then truncated below goldenFirst as raft
// does after a snapshot, and these stable keys.
const (
	goldenFirst, goldenLast = 41, 120
	goldenTerm              = 17
	goldenCandidate         = "node-3"
)

// goldenLog is the entry the fixtures hold at index: every field set,
// every log type. It must never change; the fixtures were written from it.
func goldenLog(index uint64) *raft.Log {
	return &raft.Log{
		Index:      index,
		Term:       index/9 + 1,
		Type:       raft.LogType(index % 6),
		Data:       []byte(fmt.Sprintf("golden-%d-%s", index, strings.Repeat("d", int(index%50)))),
		Extensions: []byte(fmt.Sprintf("x%d", index%4)),
		AppendedAt: time.Unix(1_764_900_000+int64(index), int64(index*1_000_003%1e9)),
	}
}

func TestGoldenStores(t *testing.T) {
	if path := os.Getenv("SIEVEKV_WRITE_GOLDEN_STORE"); path != "" {
		writeGoldenStore(t, path)
	}
	testutil.EachFixture(t, "store", func(t *testing.T, dir string) {
		s, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkGoldenStore(t, s, goldenLast)
		// It takes raft's next append and truncation as a new store does.
		if err := s.StoreLogs([]*raft.Log{goldenLog(goldenLast + 1), goldenLog(goldenLast + 2)}); err != nil {
			t.Fatal(err)
		}
		checkGoldenStore(t, s, goldenLast+2)
		if err := s.DeleteRange(goldenLast+1, goldenLast+2); err != nil {
			t.Fatal(err)
		}
		checkGoldenStore(t, s, goldenLast)
	})
}

// checkGoldenStore requires s to hold exactly goldenFirst..last as
// goldenLog wrote them, and the fixtures' stable keys.
func checkGoldenStore(t *testing.T, s *Store, last uint64) {
	t.Helper()
	if first, err := s.FirstIndex(); err != nil || first != goldenFirst {
		t.Fatalf("FirstIndex = %d, %v; want %d", first, err, goldenFirst)
	}
	if got, err := s.LastIndex(); err != nil || got != last {
		t.Fatalf("LastIndex = %d, %v; want %d", got, err, last)
	}
	for i := uint64(goldenFirst - 1); i <= last+1; i++ {
		var l raft.Log
		err := s.GetLog(i, &l)
		if i < goldenFirst || i > last {
			if err != raft.ErrLogNotFound {
				t.Fatalf("GetLog(%d) outside the log: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
		sameLog(t, &l, goldenLog(i))
	}
	if term, err := s.GetUint64([]byte("CurrentTerm")); err != nil || term != goldenTerm {
		t.Fatalf("CurrentTerm = %d, %v; want %d", term, err, goldenTerm)
	}
	if cand, err := s.Get([]byte("LastVoteCand")); err != nil || string(cand) != goldenCandidate {
		t.Fatalf("LastVoteCand = %q, %v; want %q", cand, err, goldenCandidate)
	}
}

// writeGoldenStore writes a new fixture, archived at path: entries 1 to
// goldenLast in three appends, truncated below goldenFirst, and the
// stable keys raft keeps (a term and the vote's candidate), in tables and
// in the WAL.
func writeGoldenStore(t *testing.T, path string) {
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists: fixtures are never rewritten; name a new one", path)
	}
	dir := filepath.Join(t.TempDir(), "raft")
	// A memtable of a few entries, so the fixture holds tables as well as
	// a WAL tail, as any long-running node's does.
	s, err := Open(dir, &kv.Options{MemTableSize: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for lo := uint64(1); lo <= goldenLast; lo += 40 {
		var logs []*raft.Log
		for i := lo; i < lo+40 && i <= goldenLast; i++ {
			logs = append(logs, goldenLog(i))
		}
		if err := s.StoreLogs(logs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRange(1, goldenFirst-1); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), goldenTerm); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte(goldenCandidate)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "LOCK")); err != nil {
		t.Fatal(err)
	}
	testutil.TarDir(t, dir, path)
}
