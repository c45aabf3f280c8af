package kv

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sievekv/sievekv/vfs"
)

// deletedKeysFS returns a file system holding a closed DB of n keys, the
// first deleted of them deleted and flushed above the rest, so its tables
// hold that many tombstones.
func deletedKeysFS(t *testing.T, key func(int) []byte, n, deleted int) (vfs.FS, *Options) {
	t.Helper()
	fs := vfs.NewMem()
	o := &Options{MemTableSize: 1 << 20, DisableAutomaticCompactions: true}
	d := flushedKeysDBOn(t, fs, o, key, n)
	if err := deleteAndFlushKeys(d, key, 0, deleted); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, o
}

// buildIndexesInBackground makes every Open build its tombstone index in
// the background, however small the tree, until the returned func.
func buildIndexesInBackground() (restore func()) {
	old := openIndexInlineBytes
	openIndexInlineBytes = 0
	return func() { openIndexInlineBytes = old }
}

// holdRebuilds makes every background rebuild of the tombstone index wait,
// before it reads a table, until the returned letGo is called; entered
// receives once per rebuild that waits. The caller defers letGo.
func holdRebuilds(t *testing.T) (entered <-chan struct{}, letGo func()) {
	hold, in := make(chan struct{}), make(chan struct{}, 4)
	testRebuildPause = func() {
		in <- struct{}{}
		<-hold
	}
	var once sync.Once
	return in, func() {
		once.Do(func() {
			close(hold)
			testRebuildPause = nil
		})
	}
}

// TestOpenDoesNotWaitForTheTombstoneIndex: Open used to read every table
// holding tombstones, whole, to rebuild the index before returning, so its
// time grew with the data (a cold 242 MB DB with 3.5k tombstones opened
// in 156-184 ms, against 51-53 ms with the index off). Past a few MiB of such tables
// (here: any) the index is now built in the background: Open reads no data
// block, and until the build ends the DB
// serves right answers while the index answers "may have" for every key and
// logs the changes of flushes and compactions, which the build replays (K7).
func TestOpenDoesNotWaitForTheTombstoneIndex(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%05d", i)) }
	fs, o := deletedKeysFS(t, key, 4000, 2000)
	defer buildIndexesInBackground()()
	entered, letGo := holdRebuilds(t)
	defer letGo()
	d := openMem(t, fs, o)
	defer d.Close()
	mustEnter(t, entered, "Open started no build of the tombstone index")
	m := d.Metrics()
	if m.DiskReads.DataBlocks != 0 {
		t.Fatalf("Open read %d data blocks: it waited for the tables' tombstones", m.DiskReads.DataBlocks)
	}
	if !m.TombstoneIndex.Building || !strings.Contains(m.String(), "building") {
		t.Fatalf("the index's build is not reported: %+v", m.TombstoneIndex)
	}
	if !d.tombstones.mayHaveTombstone([]byte("never deleted")) {
		t.Fatal("an index being built must answer \"may have\" for every key")
	}
	tr, err := d.ExplainGet(key(3999))
	if err != nil || !tr.TombstoneIndexBuilding || !strings.Contains(tr.String(), "being built") {
		t.Fatalf("explain get during the build does not say the index is being built (%v):\n%s", err, tr)
	}
	// Reads and writes while the build waits: deletes, a flush (logged
	// adds) and a compaction to the bottom (logged removes).
	returnsWithin(t, 5*time.Second, "writes, a flush and a compaction waited for the index's build", func() error {
		if err := deleteAndFlushKeys(d, key, 2000, 3000); err != nil {
			return err
		}
		if err := d.Compact(nil, nil); err != nil {
			return err
		}
		return deleteAndFlushKeys(d, key, 3000, 3500)
	})
	for _, i := range []int{0, 1999, 2500, 3499, 3500, 3999} {
		_, err := d.Get(key(i))
		if deleted := i < 3500; deleted != errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(%s) during the build: %v", key(i), err)
		}
	}
	letGo()
	checkTombstoneIndex(t, d, "after Open's build")
	if m := d.Metrics(); m.TombstoneIndex.Building || m.TombstoneIndex.Entries != 500 {
		t.Fatalf("after Open's build: %+v (want the last flush's 500 tombstones)", m.TombstoneIndex)
	}
}

// TestCloseStopsTheTombstoneIndexBuild: Close waits for background work,
// and the build Open starts reads every table holding tombstones, so a
// Close soon after Open would have waited for the whole read. The build
// stops once Close has begun, reading nothing more, and says nothing of it
// in the log: nothing failed.
func TestCloseStopsTheTombstoneIndexBuild(t *testing.T) {
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%05d", i)) }
	fs, o := deletedKeysFS(t, key, 12000, 9000)
	var logMu sync.Mutex
	var logged []string
	o.Logger = func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	defer buildIndexesInBackground()()
	entered, letGo := holdRebuilds(t)
	defer letGo()
	d := openMem(t, fs, o)
	mustEnter(t, entered, "Open started no build of the tombstone index")
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	waitFor(t, "Close to begin", d.isClosed)
	letGo()
	returnedWithin(t, closed, 5*time.Second, "Close waited for the index's build")
	if reads := d.Metrics().DiskReads.DataBlocks; reads != 0 {
		t.Fatalf("the build read %d data blocks after Close began", reads)
	}
	logMu.Lock()
	defer logMu.Unlock()
	for _, l := range logged {
		if strings.Contains(l, "tombstone index") {
			t.Fatalf("a build stopped by Close was logged as a failure: %q", l)
		}
	}
}
