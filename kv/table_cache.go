package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// tableCache keeps the readers of recently used tables open, at most
// capacity of them (Options.MaxOpenFiles less the files the DB holds
// besides tables). Readers are safe for concurrent use, so one per table
// suffices.
//
// Every use of a reader holds a reference (acquire / release): the cache's
// own reference, while the reader is in its LRU list, is one more. A
// reader is closed when its last reference goes, so one evicted from the
// list (least recently used first) or whose table was deleted stays open
// exactly as long as a read or an iterator still uses it. The open readers
// are thus the capacity plus those in use by reads of evicted tables.
//
// After closeAll (DB.Close) every reader is closed, used or not, and
// acquire fails with ErrClosed: Close first waits for the operations in
// flight (readGate), so no read is inside a reader it closes, and an
// iterator left open fails with ErrClosed from then on.
type tableCache struct {
	fs       vfs.FS
	dirname  string
	opts     sstable.ReaderOptions // Cache and Stats shared by every reader
	capacity int

	mu sync.Mutex
	// Guarded by mu:
	closed bool
	byNum  map[fileNum]*cachedTable // the LRU list's entries
	lru    cachedTable              // sentinel: lru.next is the most recent
	// open holds every entry whose reader is not closed yet: those in
	// byNum and those evicted but still referenced.
	open map[*cachedTable]struct{}
}

// cachedTable is one table's reader and its reference count.
type cachedTable struct {
	cache *tableCache
	num   fileNum
	// once opens the reader; the goroutine that created the entry holds a
	// reference while it runs, so refs never reaches zero before it ends.
	once sync.Once
	r    *sstable.Reader
	err  error

	// Guarded by tableCache.mu:
	refs       int
	inList     bool
	prev, next *cachedTable
	closed     bool
}

// minTableCacheCapacity keeps a few table readers open whatever
// MaxOpenFiles says, so a level iterator and a Get can both make progress.
const minTableCacheCapacity = 4

func newTableCache(fs vfs.FS, dirname string, cache *sstable.Cache, stats *sstable.Stats, capacity int) *tableCache {
	c := &tableCache{
		fs: fs, dirname: dirname,
		opts:     sstable.ReaderOptions{Cache: cache, Stats: stats},
		capacity: max(capacity, minTableCacheCapacity),
		byNum:    map[fileNum]*cachedTable{},
		open:     map[*cachedTable]struct{}{},
	}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// acquire returns t's reader, opening the file if needed, with a reference
// the caller must release.
func (c *tableCache) acquire(t *manifest.TableMetadata) (*cachedTable, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	num := fileNum(t.FileNum)
	e := c.byNum[num]
	var evicted []*cachedTable
	if e == nil {
		e = &cachedTable{cache: c, num: num, refs: 1} // the list's reference
		c.byNum[num] = e
		c.open[e] = struct{}{}
		c.pushFrontLocked(e)
		evicted = c.shrinkLocked()
	} else {
		c.unlinkLocked(e)
		c.pushFrontLocked(e)
	}
	e.refs++
	c.mu.Unlock()
	closeReaders(evicted)

	e.once.Do(func() { e.r, e.err = c.openReader(t) })
	if e.err != nil {
		// Forget the failed entry so a later call retries (the failure
		// may be transient).
		c.mu.Lock()
		if e.inList {
			c.removeLocked(e)
		}
		c.mu.Unlock()
		err := e.err
		e.release()
		return nil, err
	}
	return e, nil
}

// reader is the open reader of an acquired table.
func (e *cachedTable) reader() *sstable.Reader { return e.r }

// release drops a reference from acquire; the last one closes the reader.
func (e *cachedTable) release() {
	c := e.cache
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	c.mu.Unlock()
	if last {
		closeReaders([]*cachedTable{e})
	}
}

// withReader runs fn on t's reader and releases it.
func (c *tableCache) withReader(t *manifest.TableMetadata, fn func(r *sstable.Reader) error) error {
	e, err := c.acquire(t)
	if err != nil {
		return err
	}
	defer e.release()
	return fn(e.r)
}

// newIter returns an iterator over t that holds t's reader until Close.
func (c *tableCache) newIter(t *manifest.TableMetadata, lower, upper []byte) (base.InternalIterator, error) {
	e, err := c.acquire(t)
	if err != nil {
		return nil, err
	}
	return &tableIter{Iter: e.r.NewIter(lower, upper), table: e}, nil
}

// tableIter is a table iterator that releases its table on Close.
type tableIter struct {
	*sstable.Iter
	table *cachedTable // nil once closed
}

func (it *tableIter) Close() error {
	err := it.Iter.Close()
	if it.table != nil {
		it.table.release()
		it.table = nil
	}
	return err
}

func (c *tableCache) openReader(t *manifest.TableMetadata) (*sstable.Reader, error) {
	name := fileName(fileKindTable, fileNum(t.FileNum))
	f, err := c.fs.Open(c.fs.PathJoin(c.dirname, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Only tables a version names are opened, and their files
			// are deleted only once no version names them (K5): a
			// missing one means the directory was damaged.
			return nil, base.CorruptionErrorf("kv: table %s named by the manifest is missing: %w", name, err)
		}
		return nil, fmt.Errorf("kv: open table %s: %w", name, err)
	}
	opts := c.opts
	opts.FileNum = t.FileNum
	opts.Name = name
	r, err := sstable.Open(f, int64(t.Size), opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("kv: open table %s: %w", name, err)
	}
	return r, nil
}

// evict drops the list's reference to a deleted table's reader.
func (c *tableCache) evict(num fileNum) {
	c.mu.Lock()
	e := c.byNum[num]
	var done []*cachedTable
	if e != nil && c.removeLocked(e) {
		done = append(done, e)
	}
	c.mu.Unlock()
	closeReaders(done)
}

// openCount returns how many readers are open (in the list or in use).
func (c *tableCache) openCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// closeAll closes every reader, in use or not, and makes acquire fail from
// now on (DB.Close, after the reads in flight drained).
func (c *tableCache) closeAll() error {
	c.mu.Lock()
	c.closed = true
	all := make([]*cachedTable, 0, len(c.open))
	for e := range c.open {
		all = append(all, e)
	}
	for _, e := range all {
		if e.inList {
			c.removeLocked(e)
		}
	}
	c.mu.Unlock()
	var first error
	for _, e := range all {
		// An entry being opened has a holder inside once: wait for it.
		e.once.Do(func() {})
		if err := e.closeReader(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// closeReaders closes the readers of entries whose last reference went.
func closeReaders(entries []*cachedTable) {
	for _, e := range entries {
		e.closeReader()
	}
}

// closeReader closes e's reader, once, and takes e off the open set. The
// file is closed under the cache's mutex: an iterator's Close can release
// the last reference while DB.Close runs closeAll, and closeAll must not
// return while that descriptor is still being closed. Closing a file is
// cheap (no sync). REQUIRES: e's open has finished (its once has run).
func (e *cachedTable) closeReader() error {
	c := e.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	delete(c.open, e)
	if e.r == nil {
		return nil
	}
	return e.r.Close()
}

// pushFrontLocked makes e the most recently used entry of the list.
// REQUIRES: c.mu held.
func (c *tableCache) pushFrontLocked(e *cachedTable) {
	e.prev, e.next = &c.lru, c.lru.next
	c.lru.next.prev = e
	c.lru.next = e
	e.inList = true
}

// unlinkLocked takes e out of the list, keeping its references.
// REQUIRES: c.mu held.
func (c *tableCache) unlinkLocked(e *cachedTable) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
	e.inList = false
}

// removeLocked takes e out of the list and the index and drops the list's
// reference; it reports whether that was the last one (the caller then
// closes the reader, outside the lock). REQUIRES: c.mu held, e.inList.
func (c *tableCache) removeLocked(e *cachedTable) bool {
	c.unlinkLocked(e)
	if c.byNum[e.num] == e {
		delete(c.byNum, e.num)
	}
	e.refs--
	return e.refs == 0
}

// shrinkLocked evicts least recently used entries down to the capacity
// and returns those whose readers are now unreferenced. REQUIRES: c.mu
// held.
func (c *tableCache) shrinkLocked() []*cachedTable {
	var done []*cachedTable
	for len(c.byNum) > c.capacity {
		if tail := c.lru.prev; c.removeLocked(tail) {
			done = append(done, tail)
		}
	}
	return done
}
