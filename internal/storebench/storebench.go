// Package storebench is the one list of what sievekv's raft store is
// measured with and against, shared by raftstore's go test benchmark and
// cmd/clusterbench: raft's own store benchmark functions
// (github.com/hashicorp/raft/bench), and the stores they run on,
// raftstore.Store and raft-boltdb v2, the store raft users most often
// pick. Benchmark code only: it is what brings raft-boltdb in.
package storebench

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	raftbench "github.com/hashicorp/raft/bench"
	"github.com/sievekv/sievekv/raftstore"
)

// Store is what raft asks of a store: its log and its stable state.
type Store interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// Stores are the stores compared, sievekv's first; open makes one in an
// empty directory.
var Stores = []struct {
	Name string
	Open func(dir string) (Store, error)
}{
	{"sievekv", func(dir string) (Store, error) { return raftstore.Open(dir, nil) }},
	{"boltdb", func(dir string) (Store, error) {
		return raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	}},
}

// Benches are raft's store benchmark functions, in the order reports list
// them.
var Benches = []struct {
	Name string
	Run  func(*testing.B, Store)
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

// onLog and onStable let one list hold raft's LogStore and StableStore
// benchmarks: a Store is both.
func onLog(fn func(*testing.B, raft.LogStore)) func(*testing.B, Store) {
	return func(b *testing.B, s Store) { fn(b, s) }
}

func onStable(fn func(*testing.B, raft.StableStore)) func(*testing.B, Store) {
	return func(b *testing.B, s Store) { fn(b, s) }
}
