package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// MemFS is an in-memory FS for tests. It keeps, besides the current state,
// the state a power loss would leave behind (V1): per file the length that
// was last synced, and per name the binding that was current when its
// directory was last synced. CrashClone materialises that durable state.
//
// Files are append-only between Creates (the File interface has no WriteAt),
// so a file's durable content is always a prefix of its current content.
// Simplifications, stated so tests do not rely on more: directories exist
// durably as soon as MkdirAll returns, and a Create that truncates an
// existing file loses its old content at once, synced or not.
type MemFS struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	dirs    map[string]bool     // clean path -> exists; "." and "/" always
	files   map[string]*memNode // current namespace
	durable map[string]*memNode // namespace as of the last directory Syncs
	locks   map[string]int      // name -> exclusiveLock, or the shared holders

	// afterCloneNode, if set, runs inside CrashClone after each file's
	// content is copied: a test seam for interleavings.
	afterCloneNode func(name string)
}

// memNode is one file's content. Handles keep a node alive after Remove,
// as an unlinked-but-open file on Unix.
type memNode struct {
	mu sync.RWMutex
	// The fields below are guarded by mu.
	data    []byte
	synced  int // len(data) at the last Sync (V1); set with MemFS.mu held too
	modTime time.Time
}

// NewMem returns an empty in-memory FS whose root ("/" and ".") exists.
func NewMem() *MemFS {
	return &MemFS{
		dirs:    map[string]bool{".": true, "/": true},
		files:   map[string]*memNode{},
		durable: map[string]*memNode{},
		locks:   map[string]int{},
	}
}

// clean is path.Clean except that the empty name stays empty: the OS
// names no file "" (ENOENT), where path.Clean would make it ".".
func clean(name string) string {
	if name == "" {
		return ""
	}
	return path.Clean(name)
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// parentExists reports whether name's directory exists. REQUIRES: m.mu held.
func (m *MemFS) parentExists(name string) bool {
	return name != "" && m.dirs[path.Dir(name)]
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs[name] {
		return nil, pathErr("create", name, fs.ErrExist)
	}
	if !m.parentExists(name) {
		return nil, pathErr("create", name, fs.ErrNotExist)
	}
	n := m.files[name]
	if n == nil {
		n = &memNode{}
		m.files[name] = n
	}
	n.mu.Lock()
	n.data, n.synced, n.modTime = nil, 0, time.Now()
	n.mu.Unlock()
	return &memFile{fs: m, node: n, name: name, writable: true}, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.files[name]
	if n == nil {
		if m.dirs[name] {
			return &memDir{fs: m, name: name}, nil
		}
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	return &memFile{fs: m, node: n, name: name}, nil
}

// OpenDir implements FS.
func (m *MemFS) OpenDir(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[name] {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	return &memDir{fs: m, name: name}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files[name] != nil {
		delete(m.files, name)
		return nil
	}
	if m.dirs[name] && name != "." && name != "/" {
		for p := range m.files {
			if path.Dir(p) == name {
				return pathErr("remove", name, errors.New("directory not empty"))
			}
		}
		for d := range m.dirs {
			if d != name && path.Dir(d) == name {
				return pathErr("remove", name, errors.New("directory not empty"))
			}
		}
		delete(m.dirs, name)
		return nil
	}
	return pathErr("remove", name, fs.ErrNotExist)
}

// Rename implements FS. Like rename(2) it replaces newname atomically; the
// new binding is durable once newname's directory is synced (V1).
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.files[oldname]
	if n == nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	if !m.parentExists(newname) || m.dirs[newname] {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrInvalid}
	}
	delete(m.files, oldname)
	m.files[newname] = n
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		if _, isFile := m.files[dir]; isFile {
			// As the OS answers: a file is there, so the name exists.
			return nil, pathErr("list", dir, syscall.ENOTDIR)
		}
		return nil, pathErr("list", dir, fs.ErrNotExist)
	}
	var names []string
	for p := range m.files {
		if path.Dir(p) == dir {
			names = append(names, path.Base(p))
		}
	}
	for d := range m.dirs {
		if d != dir && d != "/" && path.Dir(d) == dir {
			names = append(names, path.Base(d))
		}
	}
	slices.Sort(names)
	return names, nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	dir = clean(dir)
	if dir == "" {
		return pathErr("mkdir", dir, fs.ErrNotExist)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; !m.dirs[d]; d = path.Dir(d) {
		if m.files[d] != nil {
			return pathErr("mkdir", d, fs.ErrExist)
		}
	}
	for d := dir; !m.dirs[d]; d = path.Dir(d) {
		m.dirs[d] = true
	}
	return nil
}

// Lock implements FS (V2).
func (m *MemFS) Lock(name string) (io.Closer, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[name] != 0 {
		return nil, fmt.Errorf("vfs: lock %s: %w", name, ErrLocked)
	}
	if m.dirs[name] {
		// As the OS answers (the lock file is opened for writing): a
		// directory is no lock file, and must not gain a file's binding.
		return nil, pathErr("lock", name, syscall.EISDIR)
	}
	if m.files[name] == nil {
		if !m.parentExists(name) {
			return nil, pathErr("lock", name, fs.ErrNotExist)
		}
		m.files[name] = &memNode{modTime: time.Now()}
	}
	m.locks[name] = exclusiveLock
	return &memLock{fs: m, name: name}, nil
}

// exclusiveLock marks a name Locked (not RLocked) in MemFS.locks.
const exclusiveLock = -1

// RLock implements FS (V2).
func (m *MemFS) RLock(name string) (io.Closer, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files[name] == nil {
		return nil, pathErr("lock", name, fs.ErrNotExist)
	}
	if m.locks[name] == exclusiveLock {
		return nil, fmt.Errorf("vfs: lock %s shared: %w", name, ErrLocked)
	}
	m.locks[name]++
	return &memLock{fs: m, name: name, shared: true}, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.files[name]; n != nil {
		return n.stat(name), nil
	}
	if m.dirs[name] {
		return memInfo{name: path.Base(name), dir: true}, nil
	}
	return nil, pathErr("stat", name, fs.ErrNotExist)
}

// PathJoin implements FS with slash-separated paths.
func (m *MemFS) PathJoin(elem ...string) string { return path.Join(elem...) }

// syncDir makes the current bindings of every name directly in dir durable
// (V1).
func (m *MemFS) syncDir(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.durable {
		if path.Dir(p) == dir && m.files[p] == nil {
			delete(m.durable, p)
		}
	}
	for p, n := range m.files {
		if path.Dir(p) == dir {
			m.durable[p] = n
		}
	}
}

// CrashClone returns a new MemFS holding only what a power loss at this
// instant would leave (V1): the names bound at their directory's last Sync,
// each with the content of its file's last Sync. It is one instant: file
// and directory Syncs take m.mu too, so none runs while the files are
// copied. Locks are not carried over. The receiver is unchanged and stays
// usable.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.dirs {
		c.dirs[d] = true
	}
	clones := map[*memNode]*memNode{} // one node bound under two names stays one
	for p, n := range m.durable {
		cn := clones[n]
		if cn == nil {
			n.mu.RLock()
			data := slices.Clone(n.data[:n.synced])
			cn = &memNode{data: data, synced: len(data), modTime: n.modTime}
			n.mu.RUnlock()
			clones[n] = cn
			if m.afterCloneNode != nil {
				m.afterCloneNode(p)
			}
		}
		c.files[p] = cn
		c.durable[p] = cn
	}
	return c
}

// String lists the files and their current/synced sizes, for test failures.
func (m *MemFS) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var lines []string
	for p, n := range m.files {
		n.mu.RLock()
		lines = append(lines, fmt.Sprintf("%s %d bytes (%d synced)", p, len(n.data), n.synced))
		n.mu.RUnlock()
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func (n *memNode) stat(name string) memInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return memInfo{name: path.Base(name), size: int64(len(n.data)), mod: n.modTime}
}

// memFile is a handle on a memNode.
type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	writable bool
	// closed is atomic: Close is the owner's, but ReadAt and Stat, which
	// may run on other goroutines, check it too, as the OS's do.
	closed atomic.Bool
}

var errClosed = errors.New("file already closed")

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, pathErr("read", f.name, errClosed)
	}
	if off < 0 {
		return 0, pathErr("read", f.name, fs.ErrInvalid)
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.closed.Load() {
		return 0, pathErr("write", f.name, errClosed)
	}
	if !f.writable {
		return 0, pathErr("write", f.name, fs.ErrPermission)
	}
	f.node.mu.Lock()
	f.node.data = append(f.node.data, p...)
	f.node.modTime = time.Now()
	f.node.mu.Unlock()
	return len(p), nil
}

func (f *memFile) Sync() error {
	if f.closed.Load() {
		return pathErr("sync", f.name, errClosed)
	}
	// Under the FS lock, so that CrashClone, which holds it throughout,
	// sees every Sync wholly before or wholly after it (V1): copying the
	// files one at a time while Syncs run would let the clone keep a write
	// synced after another file's unseen Sync, which no power loss can do.
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.node.mu.Lock()
	f.node.synced = len(f.node.data)
	f.node.mu.Unlock()
	return nil
}

func (f *memFile) Close() error {
	if f.closed.Swap(true) {
		return pathErr("close", f.name, errClosed)
	}
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	if f.closed.Load() {
		return nil, pathErr("stat", f.name, errClosed)
	}
	return f.node.stat(f.name), nil
}

// memDir is a directory handle; its Sync persists the directory's entries.
type memDir struct {
	fs   *MemFS
	name string
}

func (d *memDir) ReadAt([]byte, int64) (int, error) {
	return 0, pathErr("read", d.name, errors.New("is a directory"))
}
func (d *memDir) Write([]byte) (int, error) {
	return 0, pathErr("write", d.name, errors.New("is a directory"))
}
func (d *memDir) Sync() error                { d.fs.syncDir(d.name); return nil }
func (d *memDir) Close() error               { return nil }
func (d *memDir) Stat() (os.FileInfo, error) { return memInfo{name: path.Base(d.name), dir: true}, nil }

type memLock struct {
	fs     *MemFS
	name   string
	shared bool
	once   sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		if l.shared && l.fs.locks[l.name] > 1 {
			l.fs.locks[l.name]--
		} else {
			delete(l.fs.locks, l.name)
		}
		l.fs.mu.Unlock()
	})
	return nil
}

// memInfo implements os.FileInfo.
type memInfo struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
