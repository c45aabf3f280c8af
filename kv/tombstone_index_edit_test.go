package kv

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// TestTombstoneIndexUpdateDoesNotBlockWriters: a flush's inserts into the
// index used to run in its critical section on DB.mu, so every commit
// waited for them (1-2 ms for the first flush of deletes after a load).
// Held before it changes the index, a flush's update must let the flush
// return and later writes commit; a lookup meanwhile waits for it rather
// than miss the flushed tombstones (K7), and once let go the index holds
// exactly the tables' tombstones.
func TestTombstoneIndexUpdateDoesNotBlockWriters(t *testing.T) {
	key := func(i int) []byte { return fmt.Appendf(nil, "held%05d", i) }
	d := flushedKeysDB(t, key, 2000)
	defer d.Close()
	entered, letGo := holdFirstIndexEdit(t)
	defer letGo() // before Close, which waits for the held flush
	for i := 0; i < 1000; i++ {
		d.Delete(key(i), NoSync)
	}
	returnsWithin(t, 5*time.Second, "a flush or writes waited for the index's update", func() error {
		if err := d.Flush(); err != nil {
			return err
		}
		select {
		case <-entered:
		case <-time.After(4 * time.Second):
			return fmt.Errorf("the flush of 1000 tombstones did not update the index")
		}
		return deleteKeys(d, key, 1000, 1500)
	})
	looked := lookupWaits(t, d, key(0), "a lookup answered while the flush's tombstones were not yet in the index")
	letGo()
	if !<-looked {
		t.Fatal("the index misses a flushed tombstone")
	}
	mustFlush(t, d)
	checkTombstoneIndex(t, d, "after the held update")
}

// TestTombstoneIndexBeginDoesNotWaitForAnApply: an edit's begin runs
// under DB.mu, and used to take the index's mu there, so while one
// compaction applied the tombstones it dropped (tens of thousands at the
// bottom level), the next flush's install waited holding DB.mu, and every
// commit with it. With a compaction's update held before it changes the
// index, a flush of new tombstones must install and writes must commit;
// a lookup meanwhile waits for both edits; once let go the index holds
// exactly the tables' tombstones, the edits applied in install order.
func TestTombstoneIndexBeginDoesNotWaitForAnApply(t *testing.T) {
	key := func(i int) []byte { return fmt.Appendf(nil, "held%05d", i) }
	d := flushedKeysDB(t, key, 3000)
	defer d.Close()
	for i := range 1000 {
		d.Delete(key(i), NoSync)
	}
	mustFlush(t, d)
	d.tombstones.stats() // waits for the flush's update, which reads the hook
	entered, letGo := holdFirstIndexEdit(t)
	defer letGo() // before Close, which waits for the held compaction
	compacted := make(chan error, 1)
	go func() { compacted <- d.Compact(nil, nil) }() // drops the 1000 tombstones
	mustEnter(t, entered, "the compaction dropping 1000 tombstones did not update the index")
	returnsWithin(t, 5*time.Second, "a flush's install or writes waited for a compaction's index update", func() error {
		if err := deleteAndFlushKeys(d, key, 1000, 2000); err != nil {
			return err
		}
		return d.Set(key(0), []byte("again"), NoSync)
	})
	looked := lookupWaits(t, d, key(1500), "a lookup answered while queued edits were not yet applied")
	letGo()
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	if !<-looked {
		t.Fatal("the index misses a flushed tombstone")
	}
	checkTombstoneIndex(t, d, "after the held compaction")
}

// flushedKeysDB opens a DB on a MemFS, its compactions manual, and writes
// key(i) for i < n into one flushed table: where the tests that hold an
// update of the tombstone index start.
func flushedKeysDB(t *testing.T, key func(int) []byte, n int) *DB {
	t.Helper()
	return flushedKeysDBOn(t, vfs.NewMem(), &Options{MemTableSize: 1 << 20, DisableAutomaticCompactions: true}, key, n)
}

// flushedKeysDBOn is flushedKeysDB on fs, opened with o.
func flushedKeysDBOn(t *testing.T, fs vfs.FS, o *Options, key func(int) []byte, n int) *DB {
	t.Helper()
	d := openMem(t, fs, o)
	for i := range n {
		if err := d.Set(key(i), []byte("v"), NoSync); err != nil {
			t.Fatal(err)
		}
	}
	mustFlush(t, d)
	return d
}

// deleteKeys deletes key(i) for from <= i < to and returns the first
// failure.
func deleteKeys(d *DB, key func(int) []byte, from, to int) error {
	for i := from; i < to; i++ {
		if err := d.Delete(key(i), NoSync); err != nil {
			return err
		}
	}
	return nil
}

// deleteAndFlushKeys is deleteKeys, then a flush of the tombstones.
func deleteAndFlushKeys(d *DB, key func(int) []byte, from, to int) error {
	if err := deleteKeys(d, key, from, to); err != nil {
		return err
	}
	return d.Flush()
}

// lookupWaits asks the index about key in the background and fails t with
// answered if the answer comes within 50 ms, as it must not while an
// update is held (K7); the answer arrives on the returned channel once the
// update is let go.
func lookupWaits(t *testing.T, d *DB, key []byte, answered string) <-chan bool {
	t.Helper()
	looked := make(chan bool, 1)
	go func() { looked <- d.tombstones.mayHaveTombstone(key) }()
	select {
	case <-looked:
		t.Fatal(answered)
	case <-time.After(50 * time.Millisecond):
	}
	return looked
}

// mustEnter fails t with stuck unless entered, the signal of a held
// index update, arrives within 5 seconds.
func mustEnter(t *testing.T, entered <-chan struct{}, stuck string) {
	t.Helper()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal(stuck)
	}
}

// holdFirstIndexEdit makes the next tombstone-index edit's apply wait,
// before it changes the index, until letGo is called; entered receives
// once it waits. Later edits pass. The caller defers letGo before the DB's
// Close (which waits for the held edit); the hook is removed after the
// test, once every apply is done.
func holdFirstIndexEdit(t *testing.T) (entered <-chan struct{}, letGo func()) {
	hold, ent := make(chan struct{}), make(chan struct{}, 1)
	testIndexEditPause = func() {
		select {
		case ent <- struct{}{}:
			<-hold
		default: // only the first edit is held
		}
	}
	t.Cleanup(func() { testIndexEditPause = nil })
	return ent, sync.OnceFunc(func() { close(hold) })
}
