package kv

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/memtable"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
	"github.com/sievekv/sievekv/wal"
)

// DB is an open database. See the package documentation.
type DB struct {
	dirname    string
	opts       Options
	fs         vfs.FS
	lock       io.Closer
	cache      *sstable.Cache
	tableStats *sstable.Stats
	tables     *tableCache
	writerOpts sstable.WriterOptions
	// filterBudget accounts FilterAuto's filter memory (filter_budget.go).
	filterBudget filterBudget

	// visibleSeq is the sequence number reads see (K3).
	visibleSeq atomic.Uint64
	closedFlag atomic.Bool
	counters   counters

	// compactMu serialises compactions, manual and background.
	compactMu sync.Mutex
	// tombstones is the cuckoo-filter index of keys with tombstones in
	// tables (tombstone_index.go).
	tombstones tombstoneIndex
	// bg counts background goroutines (flushes), waited for by Close.
	bg sync.WaitGroup

	mu sync.Mutex
	// Guarded by mu:
	closed    bool
	mem       *memTable   // the mutable memtable; only the commit leader writes it
	imm       []*memTable // immutable memtables awaiting flush, oldest first
	current   *manifest.Version
	lastSeq   base.SeqNum // last sequence number assigned to a committed write
	writers   []*pendingWrite
	snapshots snapshotList
	bgErr     error // sticky background or WAL failure
	flushing  bool
	// flushDone is broadcast after each flush and compaction, and when
	// either goroutine stops: what stalled writers wait for.
	flushDone  sync.Cond
	compacting bool
	picker     compaction.Picker
	// flushedMemID is the id of the last memtable written to a table.
	flushedMemID uint64
	nextMemID    uint64
	// readOnlyLogs counts the WAL files a ReadOnly open replayed into the
	// memtable: it cannot flush them, so they stay live (Metrics reports
	// them) though no memtable's logNum names them.
	readOnlyLogs int
	// manifest state (see manifest.go)
	manifest manifestState
}

// counters are the DB's own cumulative metrics.
type counters struct {
	gets, walBytes, walSyncs, flushes, compactions atomic.Uint64
	writeStalls, writeSlowdowns, bgErrors          atomic.Uint64
	tombstonesElided, trivialMoves                 atomic.Uint64
	// userBytes counts key and value bytes applied; tableBytesWritten the
	// bytes of every table written (flush and compaction): their ratio is
	// the write amplification.
	userBytes, tableBytesWritten, compactionBytesIn atomic.Uint64
}

// memTable is a memtable with the WAL that holds its writes.
type memTable struct {
	*memtable.MemTable
	id      uint64
	logNum  fileNum  // 0 with DisableWAL or for recovered, already-logged data
	logFile vfs.File // nil unless this is the mutable memtable
	wal     *wal.Writer
}

func (d *DB) path(kind fileKind, num fileNum) string {
	return d.fs.PathJoin(d.dirname, fileName(kind, num))
}

func (d *DB) isClosed() bool { return d.closedFlag.Load() }

// syncDir makes the DB directory's entries durable (new and renamed files).
func (d *DB) syncDir() error {
	dir, err := d.fs.OpenDir(d.dirname)
	if err != nil {
		return fmt.Errorf("kv: open directory %s: %w", d.dirname, err)
	}
	err = dir.Sync()
	if cerr := dir.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("kv: sync directory %s: %w", d.dirname, err)
	}
	return nil
}

// allocFileNum returns a fresh file number.
func (d *DB) allocFileNum() fileNum {
	return fileNum(d.manifest.nextFileNum.Add(1) - 1)
}

// newMemTableLocked makes an empty memtable with a fresh WAL (unless the
// WAL is disabled). REQUIRES: d.mu held.
func (d *DB) newMemTableLocked() (*memTable, error) {
	d.nextMemID++
	m := &memTable{MemTable: memtable.New(), id: d.nextMemID}
	if d.opts.DisableWAL || d.opts.ReadOnly {
		return m, nil
	}
	num := d.allocFileNum()
	f, err := d.fs.Create(d.path(fileKindLog, num))
	if err != nil {
		return nil, fmt.Errorf("kv: create WAL %06d: %w", num, err)
	}
	// The log's directory entry must be durable before a synced write in
	// it is acknowledged (K1).
	if err := d.syncDir(); err != nil {
		f.Close()
		return nil, err
	}
	m.logNum, m.logFile = num, f
	m.wal = wal.NewWriter(f, f, uint64(num))
	return m, nil
}

// rotateMemTableLocked freezes the mutable memtable and starts a new one.
// REQUIRES: d.mu held by the commit leader.
func (d *DB) rotateMemTableLocked() error {
	next, err := d.newMemTableLocked()
	if err != nil {
		return err
	}
	old := d.mem
	if err := old.closeWAL(); err != nil {
		// The new log is not used; remove it. The old one's tail is
		// unknown: stop taking writes.
		next.closeWAL()
		d.fs.Remove(d.path(fileKindLog, next.logNum))
		return err
	}
	d.imm = append(d.imm, old)
	d.mem = next
	return nil
}

// closeWAL syncs and closes the memtable's WAL, if it has one open. Syncing
// here means an older WAL never has a torn tail, so recovery treats damage
// in any WAL but the newest as corruption.
func (m *memTable) closeWAL() error {
	if m.wal == nil {
		return nil
	}
	err := m.wal.Close()
	if cerr := m.logFile.Close(); err == nil {
		err = cerr
	}
	m.wal, m.logFile = nil, nil
	if err != nil {
		return fmt.Errorf("kv: close WAL %06d: %w", m.logNum, err)
	}
	return nil
}

// Close flushes what must be flushed, waits for background work, and
// releases the directory lock. Writes after Close return ErrClosed, as do
// iterators and snapshots still open (close them first).
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	d.mu.Unlock()

	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if d.opts.DisableWAL && !d.opts.ReadOnly {
		// Without a WAL the memtables exist nowhere else.
		keep(d.Flush())
	}
	// Become the last leader: no commit is in flight after this.
	keep(ignoreClosed(d.asLeader(func() error {
		d.closed = true
		d.closedFlag.Store(true)
		d.flushDone.Broadcast()
		return nil
	})))
	d.bg.Wait()
	// A manual Compact may still be running; hold its mutex so it ends
	// before the manifest and tables close under it.
	d.compactMu.Lock()
	defer d.compactMu.Unlock()

	d.mu.Lock()
	defer d.mu.Unlock()
	keep(d.mem.closeWAL())
	keep(d.manifest.close())
	if d.current != nil {
		d.current.Unref()
	}
	keep(d.tables.closeAll())
	keep(d.lock.Close())
	return firstErr
}

func ignoreClosed(err error) error {
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}
