package vfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return wrapOSFile(f), nil
}

func (osFS) Open(name string) (File, error) { return os.Open(name) }

func (osFS) OpenDir(name string) (File, error) { return os.Open(name) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) List(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

func (osFS) PathJoin(elem ...string) string { return filepath.Join(elem...) }

// Lock uses flock(2), which locks an open file description: a second Lock
// in the same process opens a new description and so conflicts too (V2).
func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return flock(f, syscall.LOCK_EX, "lock "+name)
}

// RLock takes flock(2)'s shared lock on a descriptor opened read-only, so
// it needs no write permission on the file or the directory (V2).
func (osFS) RLock(name string) (io.Closer, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return flock(f, syscall.LOCK_SH, "lock "+name+" shared")
}

// flock locks f without blocking; the descriptor is the lock, and closing
// it releases the flock.
func flock(f *os.File, how int, what string) (io.Closer, error) {
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, fmt.Errorf("vfs: %s: %w", what, ErrLocked)
		}
		return nil, fmt.Errorf("vfs: %s: %w", what, err)
	}
	return f, nil
}
