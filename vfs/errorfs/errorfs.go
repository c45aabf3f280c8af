package errorfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/sievekv/sievekv/vfs"
)

// ErrInjected is wrapped by every error the wrapper injects.
var ErrInjected = errors.New("errorfs: injected error")

// Op is a kind of file-system operation; Ops is a set of them.
type Op uint16

// The operation kinds that can be counted and failed.
const (
	OpRead Op = 1 << iota
	OpWrite
	OpSync
	OpCreate
	OpOpen // Open and OpenDir
	OpRename
	OpRemove
	OpList
	OpStat
)

// OpAll is every kind of operation.
const OpAll = OpRead | OpWrite | OpSync | OpCreate | OpOpen | OpRename | OpRemove | OpList | OpStat

// OpMutating is every kind of operation that changes the file system.
const OpMutating = OpWrite | OpSync | OpCreate | OpRename | OpRemove

func (o Op) String() string {
	names := []string{"read", "write", "sync", "create", "open", "rename", "remove", "list", "stat"}
	for i, n := range names {
		if o == 1<<i {
			return n
		}
	}
	return fmt.Sprintf("Op(%#x)", uint16(o))
}

// FS is a vfs.FS that counts the operations of the kinds in its set and
// fails the chosen one (E1, E2). The zero trigger (FailAt(0)) fails
// nothing, so a workload can first be run to count its operations.
type FS struct {
	inner  vfs.FS
	ops    Op
	count  atomic.Int64
	failAt atomic.Int64 // 0 = never
	sticky atomic.Bool
	// injected counts failures returned, so a test can tell that its
	// trigger was reached.
	injected atomic.Int64
	// last describes the last injected failure, for test messages.
	last atomic.Value // string
	// match, if set, narrows the counted operations further by file name.
	match atomic.Value // func(Op, string) bool
}

// Wrap returns an FS over inner counting the operations in ops.
func Wrap(inner vfs.FS, ops Op) *FS {
	return &FS{inner: inner, ops: ops}
}

// FailAt makes operation number n (counted from the next Reset, or from
// the start) fail; n = 0 disables injection. With sticky, every operation
// from n on fails.
func (fs *FS) FailAt(n int64, sticky bool) {
	fs.failAt.Store(n)
	fs.sticky.Store(sticky)
}

// SetMatch narrows the counted operations to those for which match returns
// true (nil: all operations of the kinds in the FS's set), e.g. only syncs
// of table files.
func (fs *FS) SetMatch(match func(op Op, name string) bool) {
	fs.match.Store(match)
}

// Reset zeroes the operation counter and the injected count.
func (fs *FS) Reset() {
	fs.count.Store(0)
	fs.injected.Store(0)
}

// Count returns how many counted operations have run.
func (fs *FS) Count() int64 { return fs.count.Load() }

// Injected returns how many errors have been injected.
func (fs *FS) Injected() int64 { return fs.injected.Load() }

// LastInjected describes the last injected failure ("" if none).
func (fs *FS) LastInjected() string {
	s, _ := fs.last.Load().(string)
	return s
}

// maybeFail numbers one operation and returns the injected error if it is
// the chosen one (E2).
func (fs *FS) maybeFail(op Op, name string) error {
	if fs.ops&op == 0 {
		return nil
	}
	if m, _ := fs.match.Load().(func(Op, string) bool); m != nil && !m(op, name) {
		return nil
	}
	n := fs.count.Add(1)
	at := fs.failAt.Load()
	if at == 0 || n < at || (n > at && !fs.sticky.Load()) {
		return nil
	}
	fs.injected.Add(1)
	desc := fmt.Sprintf("%s %s (operation %d)", op, name, n)
	fs.last.Store(desc)
	return fmt.Errorf("%w: %s", ErrInjected, desc)
}

// openFile is Create, Open and OpenDir: op on name may be failed (E2);
// otherwise open, the inner FS's method, opens the file, whose operations
// may then be failed in turn.
func (fs *FS) openFile(op Op, name string, open func(string) (vfs.File, error)) (vfs.File, error) {
	if err := fs.maybeFail(op, name); err != nil {
		return nil, err
	}
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs, name: name}, nil
}

// Create implements vfs.FS.
func (fs *FS) Create(name string) (vfs.File, error) {
	return fs.openFile(OpCreate, name, fs.inner.Create)
}

// Open implements vfs.FS.
func (fs *FS) Open(name string) (vfs.File, error) {
	return fs.openFile(OpOpen, name, fs.inner.Open)
}

// OpenDir implements vfs.FS.
func (fs *FS) OpenDir(name string) (vfs.File, error) {
	return fs.openFile(OpOpen, name, fs.inner.OpenDir)
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	if err := fs.maybeFail(OpRemove, name); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

// Rename implements vfs.FS.
func (fs *FS) Rename(oldname, newname string) error {
	if err := fs.maybeFail(OpRename, oldname); err != nil {
		return err
	}
	return fs.inner.Rename(oldname, newname)
}

// List implements vfs.FS.
func (fs *FS) List(dir string) ([]string, error) {
	if err := fs.maybeFail(OpList, dir); err != nil {
		return nil, err
	}
	return fs.inner.List(dir)
}

// MkdirAll implements vfs.FS; it is never failed (it runs once, before
// anything else, and its failure is plain Open error handling).
func (fs *FS) MkdirAll(dir string, perm os.FileMode) error {
	return fs.inner.MkdirAll(dir, perm)
}

// Lock implements vfs.FS; it is never failed (see MkdirAll).
func (fs *FS) Lock(name string) (io.Closer, error) { return fs.inner.Lock(name) }

// RLock implements vfs.FS; it is never failed (see MkdirAll).
func (fs *FS) RLock(name string) (io.Closer, error) { return fs.inner.RLock(name) }

// Stat implements vfs.FS.
func (fs *FS) Stat(name string) (os.FileInfo, error) {
	if err := fs.maybeFail(OpStat, name); err != nil {
		return nil, err
	}
	return fs.inner.Stat(name)
}

// PathJoin implements vfs.FS.
func (fs *FS) PathJoin(elem ...string) string { return fs.inner.PathJoin(elem...) }

// file counts and fails the reads, writes and syncs of one handle. Close
// and Stat pass through: a failed Close would leak the handle, and the
// engine treats both as bookkeeping.
type file struct {
	vfs.File
	fs   *FS
	name string
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybeFail(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.fs.maybeFail(OpWrite, f.name); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *file) Sync() error {
	if err := f.fs.maybeFail(OpSync, f.name); err != nil {
		return err
	}
	return f.File.Sync()
}

// Map forwards vfs.Mapper when the wrapped file has it, so a log written
// through a mapping meets the same injected faults as one written with
// Write: preallocating and mapping a segment counts as an OpWrite (where a
// real disk reports ENOSPC) and the mapping's Sync as an OpSync. Stores
// into the mapping are memory and cannot fail. A file without the
// capability says so, and the caller writes it instead.
func (f *file) Map(off, n int64) (vfs.Mapping, error) {
	m, ok := f.File.(vfs.Mapper)
	if !ok {
		return nil, vfs.ErrMapUnsupported
	}
	if err := f.fs.maybeFail(OpWrite, f.name); err != nil {
		return nil, err
	}
	mp, err := m.Map(off, n)
	if err != nil {
		return nil, err
	}
	return &mapping{Mapping: mp, f: f}, nil
}

type mapping struct {
	vfs.Mapping
	f *file
}

func (m *mapping) Sync() error {
	if err := m.f.fs.maybeFail(OpSync, m.f.name); err != nil {
		return err
	}
	return m.Mapping.Sync()
}
