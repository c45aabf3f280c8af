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
	logBenches := []struct {
		name string
		fn   func(*testing.B, raft.LogStore)
	}{
		{"FirstIndex", raftbench.FirstIndex},
		{"LastIndex", raftbench.LastIndex},
		{"GetLog", raftbench.GetLog},
		{"StoreLog", raftbench.StoreLog},
		{"StoreLogs", raftbench.StoreLogs},
		{"DeleteRange", raftbench.DeleteRange},
	}
	stableBenches := []struct {
		name string
		fn   func(*testing.B, raft.StableStore)
	}{
		{"Set", raftbench.Set},
		{"Get", raftbench.Get},
		{"SetUint64", raftbench.SetUint64},
		{"GetUint64", raftbench.GetUint64},
	}
	run := func(name string, fn func(*testing.B, benchStore)) {
		b.Run(name, func(b *testing.B) {
			for _, st := range benchStores {
				b.Run(st.name, func(b *testing.B) {
					s := st.open(b)
					defer s.Close()
					fn(b, s)
				})
			}
		})
	}
	for _, bench := range logBenches {
		run(bench.name, func(b *testing.B, s benchStore) { bench.fn(b, s) })
	}
	for _, bench := range stableBenches {
		run(bench.name, func(b *testing.B, s benchStore) { bench.fn(b, s) })
	}
}
