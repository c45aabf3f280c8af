package kv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sievekv/sievekv/memtable"
)

// TestOpenCloseCyclesLeaveNothingBehind: a program that opens and closes
// DBs for as long as it runs (a test suite, a server opening one per
// tenant) must get back every goroutine, descriptor and mapping a DB
// took. Each cycle writes and deletes (so the tombstone index is built in
// the background on the next Open, and the age ticker runs), flushes,
// checkpoints, and leaves an iterator and a snapshot open across Close,
// as a careless caller would.
func TestOpenCloseCyclesLeaveNothingBehind(t *testing.T) {
	defer buildIndexesInBackground()()
	dir := t.TempDir()
	settle := func() (goroutines, fds, maps int, arenas int64) {
		runtime.GC()
		runtime.GC() // a second cycle runs the finalizers the first queued
		return runtime.NumGoroutine(), countEntries(t, "/proc/self/fd"), countLines(t, "/proc/self/maps"), memtable.MappedBytes()
	}
	g0, fd0, m0, a0 := settle()
	const cycles = 12
	for i := 0; i < cycles; i++ {
		db, err := Open(filepath.Join(dir, "db"), &Options{MemTableSize: 64 << 10, TombstoneMaxAge: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 2000; j++ {
			k := []byte(fmt.Sprintf("k%05d", (i*2000+j)%9000))
			if j%3 == 0 {
				err = db.Delete(k, NoSync)
			} else {
				err = db.Set(k, make([]byte, 64), NoSync)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if err := db.Checkpoint(filepath.Join(dir, fmt.Sprintf("cp%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		it := db.NewIter(nil)
		it.First()
		snap := db.NewSnapshot()
		if _, err := snap.Get([]byte("k00001")); err != nil && err != ErrNotFound {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		_ = it.Close()   // ErrClosed is the answer here; the handles are released
		_ = snap.Close() // either way
	}
	// Goroutines end a little after Close returns (the runtime's own
	// bookkeeping); wait for them rather than for a fixed time.
	var g, fd, m int
	var a int64
	// The race detector maps shadow memory as the heap grows, so under it
	// only the arenas' own count says whether a memtable stayed mapped.
	mapsOK := func() bool { return raceEnabled || m <= m0+8 }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if g, fd, m, a = settle(); g <= g0 && fd <= fd0 && a <= a0 && mapsOK() || time.Now().After(deadline) {
			break
		}
	}
	if g > g0 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after %d cycles, %d before:\n%s", g, cycles, g0, buf[:runtime.Stack(buf, true)])
	}
	if fd > fd0 {
		t.Errorf("%d open descriptors after %d cycles, %d before", fd, cycles, fd0)
	}
	if a > a0 {
		t.Errorf("memtable arenas hold %d bytes mapped after %d cycles, %d before", a, cycles, a0)
	}
	// The Go runtime maps heap arenas as it grows, a few mappings at most;
	// a WAL or arena mapping left behind per cycle would be twelve or more.
	if !mapsOK() {
		t.Errorf("%d mappings after %d cycles, %d before", m, cycles, m0)
	}
}

func countEntries(t *testing.T, dir string) int {
	t.Helper()
	e, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no %s here: %v", dir, err)
	}
	return len(e)
}

func countLines(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Skipf("no %s here: %v", file, err)
	}
	return strings.Count(string(b), "\n")
}
