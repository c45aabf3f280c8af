package memtable

import "testing"

// TestIterSnapshotSharedUntilAdd: iterators made between the same two Adds
// share one Clone (no allocation, and no copy-on-write path the next Add
// must pay for), and an iterator made after an Add sees it while the
// earlier ones keep the tree they were made with (MT5).
func TestIterSnapshotSharedUntilAdd(t *testing.T) {
	m := New()
	fillSeq(m, 0, 100)
	a, b := m.NewIter(nil, nil), m.NewIter(nil, nil)
	if a.tree != b.tree {
		t.Fatal("two iterators with no Add between them cloned the tree twice")
	}
	var it Iter
	if n := testing.AllocsPerRun(100, func() { m.InitIter(&it, nil, nil); it.Close() }); n != 0 {
		t.Fatalf("an iterator over an unchanged memtable allocates %v times, want 0", n)
	}
	m.Set([]byte("zz-new"), 1000, []byte("v"))
	c := m.NewIter(nil, nil)
	if c.tree == a.tree {
		t.Fatal("an iterator made after an Add got the snapshot from before it")
	}
	count := func(it *Iter) (n int, sawNew bool) {
		for ok := it.First(); ok; ok = it.Next() {
			n++
			sawNew = sawNew || string(it.Key().UserKey) == "zz-new"
		}
		return n, sawNew
	}
	if n, saw := count(a); n != 100 || saw {
		t.Fatalf("the earlier iterator saw %d entries (new key: %v), want its 100", n, saw)
	}
	if n, saw := count(c); n != 101 || !saw {
		t.Fatalf("the later iterator saw %d entries (new key: %v), want 101 with it", n, saw)
	}
	m.Freeze()
	if d := m.NewIter(nil, nil); d.tree != m.tree {
		t.Fatal("a frozen memtable's iterator does not read its own tree")
	}
}
