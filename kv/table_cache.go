package kv

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"

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
// The cache is split into shards by file number, each with its own lock,
// list and share of the capacity (the shares sum to capacity), so Gets
// probing different tables do not meet on one mutex. A hit takes only its
// shard's read lock (tableCacheShard), so Gets probing the same table do
// not wait for each other either.
//
// Every use of a reader holds a reference (acquire / release): the cache's
// own reference, while the reader is in its shard's list, is one more. A
// reader is closed when its last reference goes, so one evicted from the
// list or whose table was deleted stays open exactly as long as a read or
// an iterator still uses it. The open readers are thus at most the
// capacity plus those in use by reads of evicted tables.
//
// After closeAll (DB.Close) every reader is closed, used or not, and
// acquire fails with ErrClosed: Close first waits for the operations in
// flight (readGate), so no read is inside a reader it closes, and an
// iterator left open fails with ErrClosed from then on.
type tableCache struct {
	fs       vfs.FS
	dirname  string
	opts     sstable.ReaderOptions // Cache and Stats shared by every reader
	capacity int                   // the sum of the shards' capacities
	shards   []tableCacheShard
}

// cachedTable is one table's reader and its reference count.
type cachedTable struct {
	shard *tableCacheShard
	num   fileNum
	// once opens the reader; the goroutine that created the entry holds a
	// reference while it runs, so refs never reaches zero before it ends.
	once sync.Once
	r    *sstable.Reader
	err  error

	// refs counts the list's reference and every acquire's. It can reach
	// zero only after the entry left the list (the list's reference is
	// dropped under the shard's write lock, and acquire finds entries
	// only in the list, under the read lock), so no acquire revives a
	// closed entry.
	refs atomic.Int32
	// used is set by hits and cleared by the eviction sweep: the second
	// chance that makes the list approximate LRU without relinking on
	// every hit (tableCacheShard.shrinkLocked).
	used atomic.Bool

	// Guarded by shard.mu (written under the write lock):
	inList     bool
	prev, next *cachedTable
	closed     bool
}

// minTableCacheCapacity keeps a few table readers open whatever
// MaxOpenFiles says, so a level iterator and a Get can both make progress.
const minTableCacheCapacity = 4

// maxTableCacheShards caps the sharding: with two shards per core on the
// machines an embedded store runs on, concurrent Gets rarely pick the same
// shard, and the default capacity (992 readers) still gives each shard 62.
const maxTableCacheShards = 16

// minTableCacheShardCapacity keeps each shard's list long enough that
// its approximate LRU still has something to choose from, so a small
// MaxOpenFiles is split into few shards (the minimum, 8 readers, into 2).
const minTableCacheShardCapacity = 4

func newTableCache(fs vfs.FS, dirname string, cache *sstable.Cache, stats *sstable.Stats, capacity int) *tableCache {
	capacity = max(capacity, minTableCacheCapacity)
	n := min(maxTableCacheShards, max(1, capacity/minTableCacheShardCapacity))
	c := &tableCache{
		fs: fs, dirname: dirname,
		opts:     sstable.ReaderOptions{Cache: cache, Stats: stats},
		capacity: capacity,
		shards:   make([]tableCacheShard, n),
	}
	for i := range c.shards {
		share := capacity / n
		if i < capacity%n {
			share++
		}
		c.shards[i].init(share)
	}
	return c
}

// shardOf returns the shard holding table num. File numbers are handed
// out to WALs, manifests and tables alike, so tables often come at a
// stride (a WAL and a table per flush): the number is mixed before the
// modulo so a stride does not leave shards empty.
func (c *tableCache) shardOf(num fileNum) *tableCacheShard {
	h := uint64(num) * 0x9e3779b97f4a7c15 // 2^64 / golden ratio
	return &c.shards[(h>>32)%uint64(len(c.shards))]
}

// acquire returns t's reader, opening the file if needed, with a reference
// the caller must release.
func (c *tableCache) acquire(t *manifest.TableMetadata) (*cachedTable, error) {
	num := fileNum(t.FileNum)
	s := c.shardOf(num)
	e, err := s.lookup(num)
	if err != nil {
		return nil, err
	}
	if e == nil {
		if e, err = s.insert(num); err != nil {
			return nil, err
		}
	}
	e.once.Do(func() { e.r, e.err = c.openReader(t) })
	if e.err != nil {
		// Forget the failed entry so a later call retries (the failure
		// may be transient).
		s.forget(e)
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
	if e.refs.Add(-1) == 0 {
		e.closeReader()
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

// newCompactionIter returns an iterator over t that holds t's reader
// until Close, for a compaction's pass over t: the blocks it reads from
// the file stay out of the block cache (sstable.Iter.SkipCacheFill), which
// keeps the blocks Gets and scans come back to.
func (c *tableCache) newCompactionIter(t *manifest.TableMetadata, lower, upper []byte) (base.InternalIterator, error) {
	it := new(tableIter)
	if err := c.initIter(it, t, lower, upper); err != nil {
		return nil, err
	}
	it.SkipCacheFill()
	return it, nil
}

// initIter makes it an iterator over t, holding t's reader until Close,
// and reuses the memory of it's previous use (it must be new or closed).
func (c *tableCache) initIter(it *tableIter, t *manifest.TableMetadata, lower, upper []byte) error {
	e, err := c.acquire(t)
	if err != nil {
		return err
	}
	e.r.InitIter(&it.Iter, lower, upper)
	it.table = e
	return nil
}

// tableIter is a table iterator that releases its table on Close.
type tableIter struct {
	sstable.Iter
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
func (c *tableCache) evict(num fileNum) { c.shardOf(num).evict(num) }

// openCount returns how many readers are open (in a list or in use).
func (c *tableCache) openCount() int {
	n := 0
	for i := range c.shards {
		n += c.shards[i].openCount()
	}
	return n
}

// closeAll closes every reader, in use or not, and makes acquire fail from
// now on (DB.Close, after the reads in flight drained).
func (c *tableCache) closeAll() error {
	var first error
	for i := range c.shards {
		if err := c.shards[i].closeAll(); err != nil && first == nil {
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

// closeReader closes e's reader, once, and takes e off its shard's open
// set. The file is closed under the shard's lock: an iterator's Close can
// release the last reference while DB.Close runs closeAll, and closeAll
// must not return while that descriptor is still being closed. Closing a
// file is cheap (no sync). REQUIRES: e's open has finished (its once has
// run).
func (e *cachedTable) closeReader() error {
	s := e.shard
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	delete(s.open, e)
	if e.r == nil {
		return nil
	}
	return e.r.Close()
}
