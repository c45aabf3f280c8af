//go:build linux

package vfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// osFile is an OS file with the Mapper capability (V4).
type osFile struct{ *os.File }

func wrapOSFile(f *os.File) File { return osFile{f} }

// Map implements Mapper: fallocate, so that a full disk fails here rather
// than as SIGBUS on a store into a hole, then mmap MAP_SHARED.
func (f osFile) Map(off, n int64) (Mapping, error) {
	if off%int64(os.Getpagesize()) != 0 {
		return nil, fmt.Errorf("vfs: map %s at offset %d: not page aligned", f.Name(), off)
	}
	fd := int(f.Fd())
	if err := syscall.Fallocate(fd, 0, off, n); err != nil {
		if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
			return nil, fmt.Errorf("vfs: fallocate %s: %w: %w", f.Name(), ErrMapUnsupported, err)
		}
		return nil, fmt.Errorf("vfs: fallocate %d bytes at offset %d of %s: %w", n, off, f.Name(), err)
	}
	b, err := syscall.Mmap(fd, off, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		if errors.Is(err, syscall.ENODEV) {
			return nil, fmt.Errorf("vfs: mmap %s: %w: %w", f.Name(), ErrMapUnsupported, err)
		}
		return nil, fmt.Errorf("vfs: mmap %d bytes at offset %d of %s: %w", n, off, f.Name(), err)
	}
	return &osMapping{f: f.File, b: b}, nil
}

type osMapping struct {
	f *os.File
	b []byte
}

func (m *osMapping) Bytes() []byte { return m.b }

// Sync is fdatasync: on Linux it writes back the dirty pages of every
// shared mapping of the file, as msync(MS_SYNC) would for one range, and
// the extent metadata needed to read them (the preallocated extents are
// "unwritten" until then).
func (m *osMapping) Sync() error {
	for {
		err := syscall.Fdatasync(int(m.f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return fmt.Errorf("vfs: fdatasync %s: %w", m.f.Name(), err)
			}
			return nil
		}
	}
}

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (since 5.14), which
// the syscall package does not name.
const madvPopulateWrite = 23

// Prefault implements Prefaulter with madvise(MADV_POPULATE_WRITE): the
// pages are faulted in writable as a store would, and keep their bytes.
func (m *osMapping) Prefault(off, n int) error {
	if err := syscall.Madvise(m.b[off:off+n], madvPopulateWrite); err != nil {
		return fmt.Errorf("vfs: prefault %d bytes at offset %d of a mapping of %s: %w", n, off, m.f.Name(), err)
	}
	return nil
}

func (m *osMapping) Unmap() error {
	if m.b == nil {
		return nil
	}
	err := syscall.Munmap(m.b)
	m.b = nil
	return err
}
