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

// tableCache keeps one open sstable.Reader per live table, opened on first
// use. Readers are safe for concurrent use, so one per table suffices.
// A table's reader is closed when the table's file is deleted.
type tableCache struct {
	fs      vfs.FS
	dirname string
	opts    sstable.ReaderOptions // Cache and Stats shared by every reader

	mu      sync.Mutex
	readers map[fileNum]*tableHandle
}

// tableHandle opens its reader once; concurrent getters wait on once.
type tableHandle struct {
	once sync.Once
	r    *sstable.Reader
	err  error
}

func newTableCache(fs vfs.FS, dirname string, cache *sstable.Cache, stats *sstable.Stats) *tableCache {
	return &tableCache{
		fs: fs, dirname: dirname,
		opts:    sstable.ReaderOptions{Cache: cache, Stats: stats},
		readers: map[fileNum]*tableHandle{},
	}
}

// get returns the reader of t, opening the file if needed.
func (c *tableCache) get(t *manifest.TableMetadata) (*sstable.Reader, error) {
	num := fileNum(t.FileNum)
	c.mu.Lock()
	h, ok := c.readers[num]
	if !ok {
		h = &tableHandle{}
		c.readers[num] = h
	}
	c.mu.Unlock()
	h.once.Do(func() { h.r, h.err = c.open(t) })
	if h.err != nil {
		// Let a later call retry (the failure may be transient), unless
		// another goroutine already replaced the handle.
		c.mu.Lock()
		if c.readers[num] == h {
			delete(c.readers, num)
		}
		c.mu.Unlock()
	}
	return h.r, h.err
}

func (c *tableCache) open(t *manifest.TableMetadata) (*sstable.Reader, error) {
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

// evict closes and forgets the reader of a deleted table.
func (c *tableCache) evict(num fileNum) {
	c.mu.Lock()
	h, ok := c.readers[num]
	delete(c.readers, num)
	c.mu.Unlock()
	if ok {
		h.once.Do(func() {})
		if h.r != nil {
			h.r.Close()
		}
	}
}

// closeAll closes every reader (DB.Close).
func (c *tableCache) closeAll() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	for num, h := range c.readers {
		h.once.Do(func() {})
		if h.r != nil {
			if err := h.r.Close(); err != nil && first == nil {
				first = err
			}
		}
		delete(c.readers, num)
	}
	return first
}
