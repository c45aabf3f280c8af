package vfs

import (
	"errors"
	"io"
	"os"
)

// ErrLocked is wrapped by Lock when another holder has the lock (V2).
var ErrLocked = errors.New("vfs: lock held by another user")

// File is an open file. ReadAt may be called concurrently; Write, Sync and
// Close are for the single owner.
type File interface {
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes everything written so far durable (V1). For a directory
	// opened with OpenDir, Sync makes the directory's entries durable.
	Sync() error
	// Stat describes the file; Size is what has been written so far.
	Stat() (os.FileInfo, error)
}

// FS is the small file-system interface the engine uses. Names are paths in
// the FS's own syntax; use PathJoin to build them.
type FS interface {
	// Create creates or truncates name for writing (and reading back).
	Create(name string) (File, error)
	// Open opens name read-only.
	Open(name string) (File, error)
	// OpenDir opens a directory so that its Sync persists entries (V1).
	OpenDir(name string) (File, error)
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// Rename atomically replaces newname by oldname.
	Rename(oldname, newname string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// Lock takes an exclusive lock on name, creating the file if needed
	// (V2). Closing the returned Closer releases it.
	Lock(name string) (io.Closer, error)
	// RLock takes a shared lock on the existing file name (V2): any
	// number of shared holders coexist, and none with an exclusive one.
	// It writes nothing (it works on a read-only directory) and fails
	// with an error wrapping fs.ErrNotExist if name does not exist.
	RLock(name string) (io.Closer, error)
	// Stat describes name.
	Stat(name string) (os.FileInfo, error)
	// PathJoin joins path elements.
	PathJoin(elem ...string) string
}
