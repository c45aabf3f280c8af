package vfs

import (
	"io/fs"
	"os"
)

// Linker is implemented by file systems that can give a file a second name
// sharing its content (a hard link). It is optional: a caller that wants a
// link falls back to copying when the FS is not a Linker or when Link
// fails (a link across devices fails with EXDEV, and wrapping file systems
// such as errorfs do not forward it).
type Linker interface {
	// Link makes newname another name of the file oldname. newname must
	// not exist. Like Create and Rename, the new name is durable only
	// after its directory is synced (V1).
	Link(oldname, newname string) error
}

// Link implements Linker with os.Link.
func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Link implements Linker: newname shares oldname's content, as a hard link
// shares an inode.
func (m *MemFS) Link(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.files[oldname]
	if n == nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	if m.files[newname] != nil || m.dirs[newname] {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrExist}
	}
	if !m.parentExists(newname) {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	m.files[newname] = n
	return nil
}
