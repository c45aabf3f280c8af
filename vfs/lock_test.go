package vfs

import (
	"errors"
	"io"
	"io/fs"
	"testing"
)

// V2 with shared locks, on both file systems: shared holders coexist, an
// exclusive one excludes and is excluded by them, RLock never creates the
// file, and releases hand the name back.
func TestSharedAndExclusiveLocks(t *testing.T) {
	for name, fsys := range map[string]FS{"mem": NewMem(), "os": Default} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if name == "mem" {
				dir = "d"
				if err := fsys.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			lock := fsys.PathJoin(dir, "LOCK")
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
			if _, err := fsys.RLock(lock); !errors.Is(err, ErrLocked) {
				t.Fatalf("RLock under Lock = %v, want ErrLocked", err)
			}
			ex.Close()
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
}
