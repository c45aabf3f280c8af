package main

// The engines kvbench drives. Each is wrapped so that table-file I/O is
// counted by kvbench itself, the same way for every engine: ReadAt calls
// and bytes on table files (reads per op), and bytes written to table files
// (write amplification). The engines' own metrics are reported next to
// these where they exist, never instead of them.
//
// goleveldb, Pebble and the anchor filter libraries are dependencies of this
// benchmark program only (the project rule keeps them out of library code).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
	"github.com/syndtr/goleveldb/leveldb"
	ldbfilter "github.com/syndtr/goleveldb/leveldb/filter"
	ldbiter "github.com/syndtr/goleveldb/leveldb/iterator"
	ldbopt "github.com/syndtr/goleveldb/leveldb/opt"
	ldbstorage "github.com/syndtr/goleveldb/leveldb/storage"
	ldbutil "github.com/syndtr/goleveldb/leveldb/util"

	"github.com/sievekv/sievekv/kv"
	"github.com/sievekv/sievekv/vfs"
)

// appendGetter is an engine whose Get can copy the value into a buffer
// the caller reuses (sievekv's GetAppend). The read workloads use it where
// an engine has it, each reader with a buffer of its own; Pebble's Get
// lends the value from its block, valid until the closer, without a copy.
type appendGetter interface {
	getAppend(dst, k []byte) (v []byte, found bool, err error)
}

// engine is what a workload drives.
type engine interface {
	name() string
	set(k, v []byte) error
	// syncSet writes with the engine's synchronous (fsync before
	// acknowledging) option.
	syncSet(k, v []byte) error
	del(k []byte) error
	// delRange deletes [start, end) with one range tombstone;
	// errNoDeleteRange where the engine has none.
	delRange(start, end []byte) error
	get(k []byte) (found bool, err error)
	// scan positions at the first key >= start and reads up to n entries,
	// returning how many it read.
	scan(start []byte, n int) (int, error)
	// concurrentReads reports whether get is safe from several goroutines
	// at once (readrandom-par runs only on engines where it is).
	concurrentReads() bool
	// flush writes the memtable to tables (so reads of what was just
	// written are served from tables, as in a DB that has moved on).
	flush() error
	// compactAll flushes and compacts everything into the bottom level.
	compactAll() error
	// busy reports background flushes or compactions in progress (false
	// where the engine does not say; settle then watches table writes).
	busy() bool
	// filterBytes is the memory of the live tables' filters (-1: the
	// engine does not report it).
	filterBytes() int64
	close() error
}

// ioCounters is kvbench's own count of table-file I/O, shared by an
// engine's file-system wrapper.
type ioCounters struct {
	reads, readBytes, writeBytes atomic.Int64
	// readerThreads, while set, are the OS threads the readers of a
	// while-writing phase are locked to (while_writing.go); the reads made
	// on them are counted in readerReads and readerReadBytes as well, apart
	// from those of the flushes and compactions running beside them.
	readerThreads                atomic.Pointer[[]int]
	readerReads, readerReadBytes atomic.Int64
	threadsMu                    sync.Mutex
}

type ioSnapshot struct{ reads, readBytes, writeBytes, readerReads, readerReadBytes int64 }

func (c *ioCounters) snapshot() ioSnapshot {
	return ioSnapshot{c.reads.Load(), c.readBytes.Load(), c.writeBytes.Load(), c.readerReads.Load(), c.readerReadBytes.Load()}
}

// read counts one read call that returned n bytes and passes its results
// on, so each engine's counting file is one line per method.
func (c *ioCounters) read(n int, err error) (int, error) {
	c.reads.Add(1)
	c.readBytes.Add(int64(n))
	if ts := c.readerThreads.Load(); ts != nil {
		if tid, ok := threadID(); ok && slices.Contains(*ts, tid) {
			c.readerReads.Add(1)
			c.readerReadBytes.Add(int64(n))
		}
	}
	return n, err
}

// setReaderThread adds (on) or removes OS thread tid from readerThreads.
func (c *ioCounters) setReaderThread(tid int, on bool) {
	c.threadsMu.Lock()
	defer c.threadsMu.Unlock()
	var ts []int
	if old := c.readerThreads.Load(); old != nil {
		ts = slices.Clone(*old)
	}
	if on {
		ts = append(ts, tid)
	} else {
		ts = slices.DeleteFunc(ts, func(t int) bool { return t == tid })
	}
	if len(ts) == 0 {
		c.readerThreads.Store(nil)
		return
	}
	c.readerThreads.Store(&ts)
}

// countTable passes on what an Open or Create returned, the file wrapped
// to count its I/O when it opened and name is a table file: kvbench counts
// table I/O only, the same way for every engine.
func countTable[F any](name string, f F, err error, wrap func(F) F) (F, error) {
	if err != nil || !isTableFile(name) {
		return f, err
	}
	return wrap(f), nil
}

// wrote counts the n bytes a write call wrote and passes its results on.
func (c *ioCounters) wrote(n int, err error) (int, error) {
	c.writeBytes.Add(int64(n))
	return n, err
}

// config is what every engine is configured alike with.
type config struct {
	dir          string
	memTableSize int
	blockSize    int
	cacheSize    int64
	filter       kv.FilterType
	bloomBits    int
	noTombIndex  bool
	// wal keeps every engine's write-ahead log on (writes still NoSync
	// unless the workload syncs).
	wal bool
	// rangeFilterBits is sievekv's RangeFilterBitsPerKey (0: none).
	rangeFilterBits float64
	// filterBits and allocation are sievekv's FilterBitsPerKey and
	// FilterAllocation (kv.FilterAuto's budget); filterBits also sizes
	// Pebble's Bloom filters when set (10 otherwise).
	filterBits float64
	allocation kv.FilterAllocation
	// scripted opens sievekv for scriptedFill: automatic compactions off,
	// and a memtable twice memTableSize, so that only the script's
	// flushes (at memTableSize's worth of keys) write L0 tables. Tables
	// split and levels are sized as memTableSize sets them.
	scripted bool
}

// lbaseBytes and targetFileSize are sievekv's defaults derived from the
// memtable size (kv.Options docs: LBase 16 x memtable, tables split at
// memtable/2); Pebble and goleveldb get the same numbers so the three trees
// have the same shape.
func (c config) lbaseBytes() int64     { return 16 * int64(c.memTableSize) }
func (c config) targetFileSize() int64 { return max(int64(c.memTableSize)/2, 16<<10) }

// tableBytesOnDisk sums the sizes of the table files in dir (suffixes .sst
// for sievekv and Pebble, .ldb for goleveldb): the numerator of space
// amplification.
func tableBytesOnDisk(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	var n int64
	for _, e := range ents {
		if !isTableFile(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

func isTableFile(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".ldb")
}

// ---- sievekv ----

type sieveEngine struct {
	label string
	db    *kv.DB
}

func openSieve(label string, c config, io *ioCounters) (*sieveEngine, error) {
	o := &kv.Options{
		FS: &countingFS{FS: vfs.Default, io: io}, MemTableSize: c.memTableSize, BlockSize: c.blockSize,
		BlockCacheSize: c.cacheSize, Filter: c.filter, BloomBitsPerKey: c.bloomBits,
		DisableWAL: !c.wal, DisableTombstoneIndex: c.noTombIndex, RangeFilterBitsPerKey: c.rangeFilterBits,
		FilterBitsPerKey: c.filterBits, FilterAllocation: c.allocation,
		LBaseMaxBytes: c.lbaseBytes(), TargetFileSize: c.targetFileSize(),
	}
	if c.scripted {
		o.DisableAutomaticCompactions = true
		o.MemTableSize = 2 * c.memTableSize
	}
	// Open starts the DB's ticker, whose goroutine and the flushes and
	// compactions it starts keep the label, so -cpuprofile tells the
	// sievekv engines' background work apart (pprof -tagfocus engine=...).
	var db *kv.DB
	var err error
	pprof.Do(context.Background(), pprof.Labels("engine", label), func(context.Context) { db, err = kv.Open(c.dir, o) })
	if err != nil {
		return nil, err
	}
	return &sieveEngine{label: label, db: db}, nil
}

func (e *sieveEngine) name() string              { return e.label }
func (e *sieveEngine) set(k, v []byte) error     { return e.db.Set(k, v, kv.NoSync) }
func (e *sieveEngine) syncSet(k, v []byte) error { return e.db.Set(k, v, kv.Sync) }
func (e *sieveEngine) del(k []byte) error        { return e.db.Delete(k, kv.NoSync) }
func (e *sieveEngine) delRange(start, end []byte) error {
	return e.db.DeleteRange(start, end, kv.NoSync)
}
func (e *sieveEngine) flush() error      { return e.db.Flush() }
func (e *sieveEngine) compactAll() error { return e.db.Compact(nil, nil) }
func (e *sieveEngine) get(k []byte) (bool, error) {
	_, err := e.db.Get(k)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// getAppend is get through DB.GetAppend, which copies the value into dst
// (a buffer the reading goroutine keeps) and so allocates nothing: the
// read workloads use it, as a server reading into its own buffers would.
func (e *sieveEngine) getAppend(dst, k []byte) ([]byte, bool, error) {
	v, err := e.db.GetAppend(dst, k)
	if errors.Is(err, kv.ErrNotFound) {
		return v, false, nil
	}
	return v, err == nil, err
}
func (e *sieveEngine) scan(start []byte, n int) (int, error) {
	it := e.db.NewIter(nil)
	got := 0
	for ok := it.SeekGE(start); ok && got < n; ok = it.Next() {
		got++
	}
	return got, it.Close()
}

func (e *sieveEngine) busy() bool {
	m := e.db.Metrics()
	return m.Compaction.InProgress || m.MemTable.Immutable > 0
}

// idleWorkDue reports an idle purge due: sievekv starts it itself once
// the DB is idle, so a settled tree is one after it.
func (e *sieveEngine) idleWorkDue() bool { return e.db.Metrics().Compaction.IdlePurgePending }

// idleWorkDue reports whether eng has work it starts on its own once idle
// (false for an engine that has none, or does not say).
func idleWorkDue(eng engine) bool {
	iw, ok := eng.(interface{ idleWorkDue() bool })
	return ok && iw.idleWorkDue()
}
func (e *sieveEngine) filterBytes() int64    { return int64(e.db.Metrics().Filter.Bytes) }
func (e *sieveEngine) concurrentReads() bool { return true }
func (e *sieveEngine) close() error          { return e.db.Close() }

// countingFS counts table-file I/O for sievekv.
type countingFS struct {
	vfs.FS
	io *ioCounters
}

func (fs *countingFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	return countTable(name, f, err, fs.wrap)
}

func (fs *countingFS) Open(name string) (vfs.File, error) {
	f, err := fs.FS.Open(name)
	return countTable(name, f, err, fs.wrap)
}

func (fs *countingFS) wrap(f vfs.File) vfs.File { return &countingFile{File: f, io: fs.io} }

type countingFile struct {
	vfs.File
	io *ioCounters
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	return f.io.read(f.File.ReadAt(p, off))
}

func (f *countingFile) Write(p []byte) (int, error) {
	return f.io.wrote(f.File.Write(p))
}

// ---- pebble ----

// pebbleEngine is Pebble v2 configured like sievekv: the same memtable,
// block size, level sizes and table size, snappy, FormatNewest, its Bloom
// filter (pebbleBloomBits) on every level, and an explicit block cache (see
// pebbleCacheSize).
type pebbleEngine struct {
	db *pebble.DB
	// l6iter serves pebbleL6View's Gets; any write closes it so the next
	// Get sees the write.
	l6iter *pebble.Iterator
}

// pebbleBloomBits is Pebble's Bloom bits per key: -filterbits rounded, 10
// by default (the figure kvbench compares against).
func pebbleBloomBits(c config) int {
	if c.filterBits > 0 {
		return max(1, int(c.filterBits+0.5))
	}
	return 10
}

func openPebble(c config, io *ioCounters) (*pebbleEngine, error) {
	cache := pebble.NewCache(pebbleCacheSize(c))
	defer cache.Unref()
	opts := &pebble.Options{
		FS:                 &countingPebbleFS{FS: pebblevfs.Default, io: io},
		Cache:              cache,
		MemTableSize:       uint64(c.memTableSize),
		FormatMajorVersion: pebble.FormatNewest,
		DisableWAL:         !c.wal,
		LBaseMaxBytes:      c.lbaseBytes(),
		Logger:             quietLogger{},
	}
	opts.TargetFileSizes[0] = c.targetFileSize()
	for i := range opts.Levels {
		l := &opts.Levels[i]
		l.BlockSize = c.blockSize
		l.FilterPolicy = bloom.FilterPolicy(pebbleBloomBits(c))
		l.FilterType = pebble.TableFilter
		l.Compression = func() *sstable.CompressionProfile { return sstable.SnappyCompression }
	}
	db, err := pebble.Open(c.dir, opts)
	if err != nil {
		return nil, err
	}
	return &pebbleEngine{db: db}, nil
}

func (e *pebbleEngine) name() string { return "pebble" }
func (e *pebbleEngine) dropIter() {
	if e.l6iter != nil {
		e.l6iter.Close()
		e.l6iter = nil
	}
}
func (e *pebbleEngine) set(k, v []byte) error { e.dropIter(); return e.db.Set(k, v, pebble.NoSync) }
func (e *pebbleEngine) syncSet(k, v []byte) error {
	e.dropIter()
	return e.db.Set(k, v, pebble.Sync)
}
func (e *pebbleEngine) del(k []byte) error { e.dropIter(); return e.db.Delete(k, pebble.NoSync) }
func (e *pebbleEngine) delRange(start, end []byte) error {
	e.dropIter()
	return e.db.DeleteRange(start, end, pebble.NoSync)
}
func (e *pebbleEngine) flush() error { e.dropIter(); return e.db.Flush() }
func (e *pebbleEngine) compactAll() error {
	if err := e.flush(); err != nil {
		return err
	}
	return e.db.Compact(context.Background(), []byte{}, bytes.Repeat([]byte{0xff}, 64), true)
}
func (e *pebbleEngine) get(k []byte) (bool, error) {
	_, closer, err := e.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}
func (e *pebbleEngine) scan(start []byte, n int) (int, error) {
	it, err := e.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	got := 0
	for ok := it.SeekGE(start); ok && got < n; ok = it.Next() {
		got++
	}
	return got, it.Close()
}
func (e *pebbleEngine) busy() bool {
	m := e.db.Metrics()
	return m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0
}
func (e *pebbleEngine) concurrentReads() bool { return true }
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
func (e *pebbleEngine) close() error { e.dropIter(); return e.db.Close() }

// pebbleL6View reads the same Pebble DB as its pebbleEngine, with Get
// emulated by SeekPrefixGE on an iterator with IterOptions.UseL6Filters:
// Pebble's plain Get skips the filters of L6 tables, where a compacted DB
// keeps nearly all its data. The iterator is reused across Gets (as a
// server emulating Get this way would) and reopened after any write.
type pebbleL6View struct{ *pebbleEngine }

func (v pebbleL6View) name() string { return "pebble-l6filters" }

// concurrentReads is false: the view's get reuses one iterator.
func (v pebbleL6View) concurrentReads() bool { return false }
func (v pebbleL6View) get(k []byte) (bool, error) {
	e := v.pebbleEngine
	if e.l6iter == nil {
		it, err := e.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
		if err != nil {
			return false, err
		}
		e.l6iter = it
	}
	return e.l6iter.SeekPrefixGE(k) && bytes.Equal(e.l6iter.Key(), k), e.l6iter.Error()
}

// liveGet is get on an iterator of its own, closed after the Get: it
// reads the tree as it is at the Get, which the reused iterator, opened
// before a concurrent writer's writes, does not (while_writing.go).
func (v pebbleL6View) liveGet(k []byte) (bool, error) {
	it, err := v.db.NewIter(&pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return false, err
	}
	found := it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k)
	return found, it.Close()
}

// pebbleCacheSize is the cache Pebble gets so that its block-cache share
// equals sievekv's: Pebble charges memtable memory (the mutable memtable
// and one being flushed) against its block cache, which left a cache of
// the same nominal size with no room for blocks at all (measured: 0 entries,
// every Get a miss).
func pebbleCacheSize(c config) int64 {
	return c.cacheSize + 2*int64(c.memTableSize)
}

// countingPebbleFS counts I/O on Pebble's table files.
type countingPebbleFS struct {
	pebblevfs.FS
	io *ioCounters
}

func (fs *countingPebbleFS) Open(name string, opts ...pebblevfs.OpenOption) (pebblevfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	return countTable(name, f, err, fs.wrap)
}

func (fs *countingPebbleFS) Create(name string, cat pebblevfs.DiskWriteCategory) (pebblevfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	return countTable(name, f, err, fs.wrap)
}

func (fs *countingPebbleFS) wrap(f pebblevfs.File) pebblevfs.File {
	return &countingPebbleFile{File: f, io: fs.io}
}

type countingPebbleFile struct {
	pebblevfs.File
	io *ioCounters
}

func (f *countingPebbleFile) ReadAt(p []byte, off int64) (int, error) {
	return f.io.read(f.File.ReadAt(p, off))
}

func (f *countingPebbleFile) Write(p []byte) (int, error) {
	return f.io.wrote(f.File.Write(p))
}

func (f *countingPebbleFile) WriteAt(p []byte, off int64) (int, error) {
	return f.io.wrote(f.File.WriteAt(p, off))
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

// ---- goleveldb ----

// levelEngine is goleveldb configured like the others: the same write
// buffer (memtable), block size, table size, level-1 size, a block cache of
// the same size, snappy, and its 10-bit Bloom filter. goleveldb has no
// switch for its journal (WAL), so the storage wrapper discards journal
// writes: the same "WAL off during load" as the others, valid because
// kvbench never reopens a DB.
type levelEngine struct {
	db *leveldb.DB
	// last is the last key written, for flush; mu guards it against the
	// concurrent writers of fillsync8.
	mu   sync.Mutex
	last []byte
}

func openLevel(c config, io *ioCounters) (*levelEngine, error) {
	stor, err := ldbstorage.OpenFile(c.dir, false)
	if err != nil {
		return nil, err
	}
	db, err := leveldb.Open(&countingStorage{Storage: stor, io: io, keepJournal: c.wal}, &ldbopt.Options{
		BlockSize:           c.blockSize,
		BlockCacheCapacity:  int(c.cacheSize),
		WriteBuffer:         c.memTableSize,
		CompactionTableSize: int(c.targetFileSize()),
		CompactionTotalSize: int(c.lbaseBytes()),
		Compression:         ldbopt.SnappyCompression,
		Filter:              ldbfilter.NewBloomFilter(10),
		NoSync:              true,
	})
	if err != nil {
		stor.Close()
		return nil, err
	}
	return &levelEngine{db: db}, nil
}

func (e *levelEngine) name() string { return "goleveldb" }
func (e *levelEngine) set(k, v []byte) error {
	e.last = append(e.last[:0], k...)
	return e.db.Put(k, v, nil)
}
func (e *levelEngine) syncSet(k, v []byte) error {
	e.mu.Lock()
	e.last = append(e.last[:0], k...)
	e.mu.Unlock()
	return e.db.Put(k, v, &ldbopt.WriteOptions{Sync: true})
}

// delRange: goleveldb has no range deletion (deleterangelarge skips it).
func (e *levelEngine) delRange(start, end []byte) error { return errNoDeleteRange }
func (e *levelEngine) del(k []byte) error {
	e.last = append(e.last[:0], k...)
	return e.db.Delete(k, nil)
}
func (e *levelEngine) flush() error {
	if e.last == nil {
		return nil
	}
	// goleveldb has no Flush. CompactRange of a range that meets the
	// memtable first flushes it; the range is the last written key alone,
	// so the table compactions that follow touch at most one table per
	// level.
	return e.db.CompactRange(ldbutil.Range{Start: e.last, Limit: append(slices.Clone(e.last), 0)})
}
func (e *levelEngine) compactAll() error { return e.db.CompactRange(ldbutil.Range{}) }
func (e *levelEngine) get(k []byte) (bool, error) {
	_, err := e.db.Get(k, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
func (e *levelEngine) scan(start []byte, n int) (int, error) {
	var it ldbiter.Iterator = e.db.NewIterator(nil, nil)
	got := 0
	for ok := it.Seek(start); ok && got < n; ok = it.Next() {
		got++
	}
	it.Release()
	return got, it.Error()
}
func (e *levelEngine) busy() bool            { return false }
func (e *levelEngine) filterBytes() int64    { return -1 }
func (e *levelEngine) concurrentReads() bool { return true }
func (e *levelEngine) close() error          { return e.db.Close() }

// countingStorage counts goleveldb's table-file I/O and discards its
// journal writes (see levelEngine).
type countingStorage struct {
	ldbstorage.Storage
	io *ioCounters
	// keepJournal: -wal, so goleveldb's journal is really written.
	keepJournal bool
}

func (s *countingStorage) Open(fd ldbstorage.FileDesc) (ldbstorage.Reader, error) {
	r, err := s.Storage.Open(fd)
	if err != nil || fd.Type != ldbstorage.TypeTable {
		return r, err
	}
	return &countingReader{Reader: r, io: s.io}, nil
}

func (s *countingStorage) Create(fd ldbstorage.FileDesc) (ldbstorage.Writer, error) {
	w, err := s.Storage.Create(fd)
	if err != nil {
		return w, err
	}
	switch fd.Type {
	case ldbstorage.TypeTable:
		return &countingWriter{Writer: w, io: s.io}, nil
	case ldbstorage.TypeJournal:
		if !s.keepJournal {
			return discardWriter{w}, nil
		}
	}
	return w, nil
}

type countingReader struct {
	ldbstorage.Reader
	io *ioCounters
}

func (r *countingReader) ReadAt(p []byte, off int64) (int, error) {
	return r.io.read(r.Reader.ReadAt(p, off))
}

func (r *countingReader) Read(p []byte) (int, error) {
	return r.io.read(r.Reader.Read(p))
}

type countingWriter struct {
	ldbstorage.Writer
	io *ioCounters
}

func (w *countingWriter) Write(p []byte) (int, error) {
	return w.io.wrote(w.Writer.Write(p))
}

// discardWriter keeps the journal file (goleveldb expects it) empty.
type discardWriter struct{ f ldbstorage.Writer }

func (d discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d discardWriter) Sync() error                 { return nil }
func (d discardWriter) Close() error                { return d.f.Close() }

var _ io.WriteCloser = discardWriter{}

// dirOf is where an engine's DB lives under the run's root.
func dirOf(root, engine, phase string) string { return filepath.Join(root, engine+"-"+phase) }
