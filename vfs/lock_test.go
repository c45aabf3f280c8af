package vfs

import (
	"errors"
	"io"
	"io/fs"
	"testing"
)

// V2 on both file systems: an exclusive holder excludes every other,
// shared holders coexist and exclude an exclusive one, RLock never creates
// the file, and releases hand the name back.
func TestSharedAndExclusiveLocks(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys FS, root string) {
		lock := fsys.PathJoin(root, "LOCK")
		if _, err := fsys.RLock(lock); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("RLock of a missing file = %v, want ErrNotExist", err)
		}
		if _, err := fsys.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("RLock created the file: %v", err)
		}
		ex, err := fsys.Lock(lock)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.Lock(lock); !errors.Is(err, ErrLocked) {
			t.Fatalf("second Lock = %v, want ErrLocked", err)
		}
		if _, err := fsys.RLock(lock); !errors.Is(err, ErrLocked) {
			t.Fatalf("RLock under Lock = %v, want ErrLocked", err)
		}
		if err := ex.Close(); err != nil {
			t.Fatal(err)
		}
		var shared []io.Closer
		for i := 0; i < 2; i++ {
			s, err := fsys.RLock(lock)
			if err != nil {
				t.Fatalf("RLock %d: %v", i, err)
			}
			shared = append(shared, s)
		}
		if _, err := fsys.Lock(lock); !errors.Is(err, ErrLocked) {
			t.Fatalf("Lock under two RLocks = %v, want ErrLocked", err)
		}
		shared[0].Close()
		if _, err := fsys.Lock(lock); !errors.Is(err, ErrLocked) {
			t.Fatalf("Lock under one RLock = %v, want ErrLocked", err)
		}
		shared[1].Close()
		ex, err = fsys.Lock(lock)
		if err != nil {
			t.Fatalf("Lock after every RLock was released: %v", err)
		}
		ex.Close()
	})
}
