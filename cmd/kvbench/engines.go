package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// engine is what a workload drives. Each engine counts the ReadAt calls on
// its table files through a wrapper around its file system, so "reads per
// op" means the same thing for every engine.
type engine interface {
	name() string
	set(k, v []byte) error
	flushAndCompact() error
	get(k []byte) (found bool, err error)
	tableReads() (calls, bytes int64)
	filterBytes() int64
	close() error
}

// config is what every engine is configured alike with.
type config struct {
	dir          string
	memTableSize int
	blockSize    int
	cacheSize    int64
	filter       kv.FilterType
}

// ---- sievekv ----

type sieveEngine struct {
	db *kv.DB
	fs *vfs.Counting
}

func openSieve(c config) (engine, error) {
	fs := vfs.NewCounting(vfs.Default)
	db, err := kv.Open(c.dir, &kv.Options{
		FS: fs, MemTableSize: c.memTableSize, BlockSize: c.blockSize,
		BlockCacheSize: c.cacheSize, Filter: c.filter, DisableWAL: true,
	})
	if err != nil {
		return nil, err
	}
	return &sieveEngine{db: db, fs: fs}, nil
}

func (e *sieveEngine) name() string           { return "sievekv" }
func (e *sieveEngine) set(k, v []byte) error  { return e.db.Set(k, v, kv.NoSync) }
func (e *sieveEngine) flushAndCompact() error { return e.db.Compact(nil, nil) }
func (e *sieveEngine) get(k []byte) (bool, error) {
	_, err := e.db.Get(k)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
func (e *sieveEngine) tableReads() (int64, int64) {
	s := e.fs.Total(func(name string) bool { return strings.HasSuffix(name, ".sst") })
	return s.Calls, s.Bytes
}
func (e *sieveEngine) filterBytes() int64 { return int64(e.db.Metrics().Filter.Bytes) }
func (e *sieveEngine) close() error       { return e.db.Close() }

// ---- pebble ----

// pebbleEngine is Pebble v2 configured like sievekv: the same memtable,
// block size and an explicit block cache of the same size (Pebble's default
// 8 MB cache is mostly consumed by memtable reservations), snappy, the
// newest format, and its 10-bit Bloom filter on every level. With
// useL6Filters, Get is emulated by SeekPrefixGE on an iterator with
// IterOptions.UseL6Filters: Pebble's plain Get skips the filters of L6
// tables, where a fully compacted DB keeps nearly all its data.
type pebbleEngine struct {
	db           *pebble.DB
	reads, bytes *atomic.Int64
	useL6Filters bool
	iter         *pebble.Iterator
}

func openPebble(c config, useL6Filters bool) (engine, error) {
	reads, nbytes := &atomic.Int64{}, &atomic.Int64{}
	cache := pebble.NewCache(pebbleCacheSize(c))
	defer cache.Unref()
	opts := &pebble.Options{
		FS:                 &countingPebbleFS{FS: pebblevfs.Default, reads: reads, bytes: nbytes},
		Cache:              cache,
		MemTableSize:       uint64(c.memTableSize),
		FormatMajorVersion: pebble.FormatNewest,
		DisableWAL:         true,
		Logger:             quietLogger{},
	}
	for i := range opts.Levels {
		l := &opts.Levels[i]
		l.BlockSize = c.blockSize
		l.FilterPolicy = bloom.FilterPolicy(10)
		l.FilterType = pebble.TableFilter
	}
	db, err := pebble.Open(c.dir, opts)
	if err != nil {
		return nil, err
	}
	return &pebbleEngine{db: db, reads: reads, bytes: nbytes, useL6Filters: useL6Filters}, nil
}

func (e *pebbleEngine) name() string {
	if e.useL6Filters {
		return "pebble-l6filters"
	}
	return "pebble"
}
func (e *pebbleEngine) set(k, v []byte) error { return e.db.Set(k, v, pebble.NoSync) }
func (e *pebbleEngine) flushAndCompact() error {
	if err := e.db.Flush(); err != nil {
		return err
	}
	return e.db.Compact(context.Background(), []byte{}, bytes.Repeat([]byte{0xff}, 64), true)
}
func (e *pebbleEngine) get(k []byte) (bool, error) {
	if !e.useL6Filters {
		_, closer, err := e.db.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return true, closer.Close()
	}
	if e.iter == nil {
		it, err := e.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return false, err
		}
		e.iter = it
	}
	return e.iter.SeekPrefixGE(k) && bytes.Equal(e.iter.Key(), k), e.iter.Error()
}
func (e *pebbleEngine) tableReads() (int64, int64) { return e.reads.Load(), e.bytes.Load() }
func (e *pebbleEngine) filterBytes() int64 {
	levels, err := e.db.SSTables(pebble.WithProperties())
	if err != nil {
		return -1
	}
	var n int64
	for _, l := range levels {
		for _, t := range l {
			if t.Properties != nil {
				n += int64(t.Properties.FilterSize)
			}
		}
	}
	return n
}
func (e *pebbleEngine) close() error {
	if e.iter != nil {
		e.iter.Close()
	}
	return e.db.Close()
}

// pebbleCacheSize is the cache Pebble gets so that its block-cache share
// equals sievekv's: Pebble charges memtable memory (the mutable memtable
// and one being flushed) against its block cache, which left a cache of
// the same nominal size with no room for blocks at all (measured: 0 entries,
// every Get a miss).
func pebbleCacheSize(c config) int64 {
	return c.cacheSize + 2*int64(c.memTableSize)
}

// countingPebbleFS counts ReadAt calls on Pebble's table files.
type countingPebbleFS struct {
	pebblevfs.FS
	reads, bytes *atomic.Int64
}

func (fs *countingPebbleFS) Open(name string, opts ...pebblevfs.OpenOption) (pebblevfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") {
		return f, err
	}
	return &countingPebbleFile{File: f, fs: fs}, nil
}

type countingPebbleFile struct {
	pebblevfs.File
	fs *countingPebbleFS
}

func (f *countingPebbleFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.reads.Add(1)
	f.fs.bytes.Add(int64(n))
	return n, err
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
