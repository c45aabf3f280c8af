package raftstore

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	raftbench "github.com/hashicorp/raft/bench"
)

// The benchmarks run raft's own store benchmark functions on a Store and,
// beside it, on raft-boltdb v2, the store raft users most often pick:
//
//	go test ./raftstore -run '^$' -bench . -benchtime 1000x -count 5
//
// compares each pair (docs/benchmarks.md, "raftstore").

type benchStore interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

var benchStores = []struct {
	name string
	open func(b *testing.B) benchStore
}{
	{"sievekv", func(b *testing.B) benchStore {
		s, err := Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"boltdb", func(b *testing.B) benchStore {
		s, err := raftboltdb.NewBoltStore(filepath.Join(b.TempDir(), "raft.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
}

// BenchmarkRaftBench runs each of raft's benchmark functions on each store:
// BenchmarkRaftBench/<function>/<store>.
func BenchmarkRaftBench(b *testing.B) {
	benches := []struct {
		name string
		fn   func(*testing.B, benchStore)
	}{
		{"FirstIndex", onLog(raftbench.FirstIndex)},
		{"LastIndex", onLog(raftbench.LastIndex)},
		{"GetLog", onLog(raftbench.GetLog)},
		{"StoreLog", onLog(raftbench.StoreLog)},
		{"StoreLogs", onLog(raftbench.StoreLogs)},
		{"DeleteRange", onLog(raftbench.DeleteRange)},
		{"Set", onStable(raftbench.Set)},
		{"Get", onStable(raftbench.Get)},
		{"SetUint64", onStable(raftbench.SetUint64)},
		{"GetUint64", onStable(raftbench.GetUint64)},
	}
	for _, bench := range benches {
		b.Run(bench.name, func(b *testing.B) {
			for _, st := range benchStores {
				b.Run(st.name, func(b *testing.B) {
					s := st.open(b)
					defer s.Close()
					bench.fn(b, s)
				})
			}
		})
	}
}

// onLog and onStable let one table hold raft's LogStore and StableStore
// benchmarks: a benchStore is both.
func onLog(fn func(*testing.B, raft.LogStore)) func(*testing.B, benchStore) {
	return func(b *testing.B, s benchStore) { fn(b, s) }
}

func onStable(fn func(*testing.B, raft.StableStore)) func(*testing.B, benchStore) {
	return func(b *testing.B, s benchStore) { fn(b, s) }
}
