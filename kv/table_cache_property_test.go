package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/testutil"
)

// listed counts the entries in the shards' lists, checking each shard
// against its capacity and its index against its list.
func (c *tableCache) listedForTest(t *testing.T) int {
	t.Helper()
	n, capSum := 0, 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		inList, indexed, indexOK := 0, len(s.byNum), true
		for e := s.list.next; e != &s.list; e = e.next {
			inList++
			indexOK = indexOK && s.byNum[e.num] == e
		}
		s.mu.RUnlock() // before any Fatalf: the deferred Close takes the lock
		switch {
		case !indexOK:
			t.Fatalf("shard %d: a listed table is not indexed", i)
		case inList != indexed:
			t.Fatalf("shard %d: %d entries listed, %d indexed", i, inList, indexed)
		case inList > s.capacity:
			t.Fatalf("shard %d holds %d readers, capacity %d", i, inList, s.capacity)
		}
		n += inList
		capSum += s.capacity
	}
	if capSum != c.capacity {
		t.Fatalf("shard capacities sum to %d, cache capacity %d", capSum, c.capacity)
	}
	return n
}

// The table cache's accounting under random acquires (some held across
// later steps), releases and evictions: no shard lists more readers than
// its capacity, the open readers are exactly the listed ones plus those
// held after eviction, each entry counts the list's reference and each
// holder's, a held reader keeps working after its eviction, and once every
// handle is released nothing but the listed readers stays open.
func TestTableCacheAccountingProperty(t *testing.T) {
	d, _ := openTablesDB(t, t.TempDir(), 40, 16)
	defer d.Close()
	c := d.tables
	tables := d.current.Levels[NumLevels-1]
	if len(c.shards) < 2 {
		t.Fatalf("%d shards for capacity %d: the test wants several", len(c.shards), c.capacity)
	}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 0x7ab1e))
		type hold struct {
			e  *cachedTable
			tm *manifest.TableMetadata
		}
		var held []hold
		for step := range 1500 {
			switch op := rng.IntN(10); {
			case op < 6:
				tm := tables[rng.IntN(len(tables))]
				e, err := c.acquire(tm)
				if err != nil {
					t.Fatalf("seed %d step %d: acquire: %v", seed, step, err)
				}
				if rng.IntN(2) == 0 {
					held = append(held, hold{e, tm})
				} else {
					e.release()
				}
			case op < 9 && len(held) > 0:
				i := rng.IntN(len(held))
				h := held[i]
				if _, _, found, err := h.e.reader().Get(h.tm.Smallest.UserKey, 1<<50); err != nil || !found {
					t.Fatalf("seed %d step %d: held reader of table %d: found %v, %v", seed, step, h.tm.FileNum, found, err)
				}
				h.e.release()
				held = append(held[:i], held[i+1:]...)
			case op == 9:
				c.evict(fileNum(tables[rng.IntN(len(tables))].FileNum))
			}

			listed := c.listedForTest(t)
			holders := map[*cachedTable]int32{}
			for _, h := range held {
				holders[h.e]++
			}
			evictedHeld := 0
			for e, n := range holders {
				want := n
				e.shard.mu.RLock()
				inList := e.inList
				e.shard.mu.RUnlock()
				if inList {
					want++
				} else {
					evictedHeld++
				}
				if got := e.refs.Load(); got != want {
					t.Fatalf("seed %d step %d: table %d has %d references, want %d", seed, step, e.num, got, want)
				}
			}
			if open := c.openCount(); open != listed+evictedHeld {
				t.Fatalf("seed %d step %d: %d readers open, want %d listed + %d evicted but held", seed, step, open, listed, evictedHeld)
			}
		}
		for _, h := range held {
			h.e.release()
		}
		if open, listed := c.openCount(), c.listedForTest(t); open != listed {
			t.Fatalf("seed %d: every handle released, yet %d readers open and %d listed", seed, open, listed)
		}
	}
}

// Concurrent readers, with evictions beside them and a cache far smaller
// than the table count, each read through the reader they hold; run under
// -race this checks the read-locked hit path against eviction and insert.
// Afterwards only listed readers are open, and closeAll closes them all.
func TestTableCacheConcurrentEviction(t *testing.T) {
	d, _ := openTablesDB(t, t.TempDir(), 40, 16)
	defer d.Close()
	c := d.tables
	tables := d.current.Levels[NumLevels-1]
	var load testutil.Group
	load.GoRandom(8, 3, func(rng *rand.Rand) error {
		for range 400 {
			tm := tables[rng.IntN(len(tables))]
			e, err := c.acquire(tm)
			if err != nil {
				return err
			}
			_, _, found, err := e.reader().Get(tm.Smallest.UserKey, 1<<50)
			e.release()
			if err != nil || !found {
				return fmt.Errorf("Get(%q) in table %d: found %v, %v", tm.Smallest.UserKey, tm.FileNum, found, err)
			}
		}
		return nil
	})
	load.Go(func() error {
		rng := rand.New(rand.NewPCG(99, 3))
		for range 400 {
			c.evict(fileNum(tables[rng.IntN(len(tables))].FileNum))
		}
		return nil
	})
	for _, err := range load.Wait() {
		t.Fatalf("concurrent read: %v", err)
	}
	if open, listed := c.openCount(), c.listedForTest(t); open != listed {
		t.Fatalf("all reads done, yet %d readers open and %d listed", open, listed)
	}
	if err := c.closeAll(); err != nil {
		t.Fatal(err)
	}
	if n := c.openCount(); n != 0 {
		t.Fatalf("%d readers open after closeAll", n)
	}
}
