package memtable

import (
	"encoding/binary"
	"runtime"
	"sync"
	"testing"

	"github.com/sievekv/sievekv/internal/base"
)

// fillSeq adds n sequential 8-byte keys from start.
func fillSeq(m *MemTable, start, n int) {
	var k [8]byte
	for i := range n {
		binary.BigEndian.PutUint64(k[:], uint64(start+i))
		m.Set(k[:], base.SeqNum(start+i+1), k[:])
	}
}

// TestReleasedNodesAreReused checks MT10 on the engine's path: a memtable
// frozen, iterated once (as its flush does) and released gives its nodes
// to the next memtable of the pool, which then fills without allocating
// nodes. An iterator that cloned the tree would leave the nodes shared,
// and the second fill would allocate several objects per node.
func TestReleasedNodesAreReused(t *testing.T) {
	const n = 20000
	pool := NewNodePool(4 << 20)
	m := NewWithPool(pool)
	fillSeq(m, 0, n)
	m.Freeze()
	it := m.NewIter(nil, nil)
	seen := 0
	for ok := it.First(); ok; ok = it.Next() {
		seen++
	}
	it.Close()
	if seen != n {
		t.Fatalf("iterator saw %d entries, want %d", seen, n)
	}
	m.Release()

	next := NewWithPool(pool)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fillSeq(next, n, n)
	runtime.ReadMemStats(&after)
	// A fresh tree of n entries makes about n/31 nodes, each a node and
	// an items slice grown by appends: thousands of objects. The arena's
	// chunks are a dozen.
	if mallocs := after.Mallocs - before.Mallocs; mallocs > n/200 {
		t.Errorf("second fill from the pool made %d heap objects, want <= %d", mallocs, n/200)
	}
	if next.Len() != n {
		t.Fatalf("second memtable holds %d entries, want %d", next.Len(), n)
	}
}

// TestFrozenMemTableSharedByReaders runs iterators and Gets on a frozen
// memtable at once (run with -race): they share its tree, which google/btree
// allows for readers only.
func TestFrozenMemTableSharedByReaders(t *testing.T) {
	const n = 3000
	m := NewWithPool(NewNodePool(1 << 20))
	fillSeq(m, 0, n)
	m.Freeze()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it := m.NewIter(nil, nil)
			defer it.Close()
			seen := 0
			for ok := it.First(); ok; ok = it.Next() {
				seen++
			}
			if seen != n {
				t.Errorf("reader %d saw %d entries, want %d", g, seen, n)
			}
			var k [8]byte
			for i := g; i < n; i += 7 {
				binary.BigEndian.PutUint64(k[:], uint64(i))
				if v, _, ok := m.Get(k[:], base.SeqNumMax); !ok || string(v) != string(k[:]) {
					t.Errorf("Get(%d) = %q, %v", i, v, ok)
				}
			}
		}()
	}
	wg.Wait()
}
