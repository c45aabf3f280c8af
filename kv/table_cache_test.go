package kv

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sievekv/sievekv/sstable"
)

// openTablesDB returns a DB with n tables in the bottom level, built by
// one manual compaction with tiny target files, and the keys it holds.
func openTablesDB(t testing.TB, dir string, n int, maxOpen int) (*DB, []string) {
	t.Helper()
	o := &Options{MaxOpenFiles: maxOpen, MemTableSize: 64 << 10, TargetFileSize: 1 << 10,
		DisableAutomaticCompactions: true, BlockCacheSize: -1}
	d, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; i < n*12; i++ {
		k := fmt.Sprintf("key%07d", i)
		keys = append(keys, k)
		if err := d.Set([]byte(k), []byte("value-"+k+"-0123456789012345678901234567890123456789"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	return d, keys
}

// A reader evicted from the bounded cache while in use stays open and
// usable until its holder releases it; then it closes. After closeAll
// nothing is open and acquire refuses.
func TestTableCacheEvictsButKeepsReadersInUse(t *testing.T) {
	d, _ := openTablesDB(t, t.TempDir(), 40, 16)
	defer d.Close()
	tables := d.current.Levels[NumLevels-1]
	if len(tables) < 3*d.tables.capacity {
		t.Fatalf("%d tables, want many more than the cache's %d", len(tables), d.tables.capacity)
	}
	held, err := d.tables.acquire(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range tables[1:] {
		if err := d.tables.withReader(tm, func(r *sstable.Reader) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n := d.tables.openCount(); n > d.tables.capacity+1 {
			t.Fatalf("%d readers open, want at most the capacity %d plus the one held", n, d.tables.capacity)
		}
	}
	// tables[0] is long evicted, but its holder can still read it.
	k := tables[0].Smallest.UserKey
	if _, _, found, err := held.reader().Get(k, 1<<50); err != nil || !found {
		t.Fatalf("Get from an evicted reader in use: found %v, %v", found, err)
	}
	before := d.tables.openCount()
	held.release()
	if after := d.tables.openCount(); after != before-1 {
		t.Fatalf("releasing an evicted reader: %d open before, %d after; want it closed", before, after)
	}
	if err := d.tables.closeAll(); err != nil {
		t.Fatal(err)
	}
	if n := d.tables.openCount(); n != 0 {
		t.Fatalf("%d readers open after closeAll", n)
	}
	if _, err := d.tables.acquire(tables[1]); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after closeAll = %v, want ErrClosed", err)
	}
}

// BenchmarkTableCacheAcquire is the table cache's share of every table a
// Get probes: an acquire that hits and its release, from many goroutines
// at once (-cpu 1,2,8 shows what concurrent readers pay for the locks).
func BenchmarkTableCacheAcquire(b *testing.B) {
	d, _ := openTablesDB(b, b.TempDir(), 64, 0)
	defer d.Close()
	tables := d.current.Levels[NumLevels-1]
	for _, tm := range tables { // open every reader first: measure hits
		if err := d.tables.withReader(tm, func(*sstable.Reader) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			h, err := d.tables.acquire(tables[(i*7919)%len(tables)])
			if err != nil {
				b.Error(err)
				return
			}
			h.release()
		}
	})
}

// TestWholeTreeCompactionKeepsToMaxOpenFiles: a compaction walks each
// level's input tables one at a time (compactionInputs), so a Compact
// that merges a whole 40-table level holds about one of them open, and
// the table cache's bound (MaxOpenFiles) holds. It held a reader per
// input table for the whole merge, every one of the level's 40 past the
// bound of 8, each with its read-ahead buffer.
func TestWholeTreeCompactionKeepsToMaxOpenFiles(t *testing.T) {
	d, keys := openTablesDB(t, t.TempDir(), 40, 16)
	defer d.Close()
	bottom := len(d.current.Levels[NumLevels-1])
	if bottom < 3*d.tables.capacity {
		t.Fatalf("%d tables, want many more than the cache's %d", bottom, d.tables.capacity)
	}
	for i := 0; i < len(keys); i += 20 {
		if err := d.Set([]byte(keys[i]), []byte("newer"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	var peak int
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			peak = max(peak, d.tables.openCount())
			select {
			case <-done:
				return
			default:
				time.Sleep(20 * time.Microsecond)
			}
		}
	}()
	err := d.Compact(nil, nil)
	close(done)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	// The cache's tables, the one L0 table, the level walk's current
	// table and an output being opened.
	if bound := d.tables.capacity + 3; peak > bound {
		t.Errorf("%d table readers open at once during the compaction of %d bottom tables; want at most %d", peak, bottom, bound)
	}
	for i, k := range keys {
		want := "value-" + k + "-0123456789012345678901234567890123456789"
		if i%20 == 0 {
			want = "newer"
		}
		if v, err := d.Get([]byte(k)); err != nil || string(v) != want {
			t.Fatalf("%s = %q, %v; want %q", k, v, err, want)
		}
	}
}
