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
//	go test ./raftstore -run '^$' -bench . -benchtime 2000x
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

func runStoreBench(b *testing.B, fn func(*testing.B, benchStore)) {
	for _, st := range benchStores {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			defer s.Close()
			fn(b, s)
		})
	}
}

func BenchmarkFirstIndex(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.FirstIndex(b, s) })
}

func BenchmarkLastIndex(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.LastIndex(b, s) })
}

func BenchmarkGetLog(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.GetLog(b, s) })
}

func BenchmarkStoreLog(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.StoreLog(b, s) })
}

func BenchmarkStoreLogs(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.StoreLogs(b, s) })
}

func BenchmarkDeleteRange(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.DeleteRange(b, s) })
}

func BenchmarkSet(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.Set(b, s) })
}

func BenchmarkGet(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.Get(b, s) })
}

func BenchmarkSetUint64(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.SetUint64(b, s) })
}

func BenchmarkGetUint64(b *testing.B) {
	runStoreBench(b, func(b *testing.B, s benchStore) { raftbench.GetUint64(b, s) })
}
