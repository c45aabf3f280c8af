package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"
)

// V2 on both file systems: an exclusive holder excludes every other,
// shared holders coexist and exclude an exclusive one, RLock never creates
// the file, and releases hand the name back.
func TestSharedAndExclusiveLocks(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, root string) {
		expect := func(what string, err, want error) {
			t.Helper()
			if !errors.Is(err, want) {
				t.Fatalf("%s: %v, want %v", what, err, want)
			}
		}
		lock := fsys.PathJoin(root, "LOCK")
		_, err := fsys.RLock(lock)
		expect("RLock of a missing file", err, fs.ErrNotExist)
		_, err = fsys.Stat(lock)
		expect("Stat after it (RLock must not create the file)", err, fs.ErrNotExist)

		ex, err := fsys.Lock(lock)
		expect("Lock", err, nil)
		_, err = fsys.Lock(lock)
		expect("second Lock", err, ErrLocked)
		_, err = fsys.RLock(lock)
		expect("RLock under Lock", err, ErrLocked)
		expect("release of Lock", ex.Close(), nil)

		var shared [2]io.Closer
		for i := range shared {
			shared[i], err = fsys.RLock(lock)
			expect(fmt.Sprintf("RLock %d", i), err, nil)
		}
		_, err = fsys.Lock(lock)
		expect("Lock under two RLocks", err, ErrLocked)
		shared[0].Close()
		_, err = fsys.Lock(lock)
		expect("Lock under one RLock", err, ErrLocked)
		shared[1].Close()
		ex, err = fsys.Lock(lock)
		expect("Lock after every RLock was released", err, nil)
		ex.Close()
	})
}

// Lock of a directory's name fails on both file systems, and the name
// stays a directory: MemFS once bound a lock file under it, so the name
// was a file and a directory at once (Stat said file, Rename moved it).
func TestLockOfDirectoryFails(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, root string) {
		d := fsys.PathJoin(root, "d")
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if l, err := fsys.Lock(d); err == nil {
			l.Close()
			t.Fatal("Lock of a directory succeeded")
		}
		st, err := fsys.Stat(d)
		if err != nil || !st.IsDir() {
			t.Fatalf("after Lock, Stat(%s) = %v, %v; want a directory", d, st, err)
		}
	})
}
