package kv

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

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
	dirname string
	opts    Options
	fs      vfs.FS
	lock    io.Closer
	cache   *sstable.Cache
	// cacheLoan is the memtables' idle allowance lent to cache
	// (cache_loan.go). Guarded by mu.
	cacheLoan  cacheLoan
	tableStats *sstable.Stats
	tables     *tableCache
	writerOpts sstable.WriterOptions
	// nodes recycles released memtables' B-tree nodes (memtable_release.go).
	nodes *memtable.NodePool
	// filterBudget accounts FilterAuto's filter memory (filter_budget.go).
	filterBudget filterBudget

	// visibleSeq is the sequence number reads see (K3).
	visibleSeq atomic.Uint64
	// readState is what reads pin without taking mu (read_state.go, K9);
	// stored only under mu.
	readState  atomic.Pointer[readState]
	closedFlag atomic.Bool
	// reads is what Close waits on before closing the table files.
	reads readGate
	// final is Metrics as of Close, set once Close no longer changes it.
	final    metricsAtClose
	counters counters

	// compactMu serialises compactions, manual and background.
	compactMu sync.Mutex
	// checkpointMu serialises Checkpoint calls (checkpoint.go).
	checkpointMu sync.Mutex
	// tombstones is the cuckoo-filter index of keys with tombstones in
	// tables (tombstone_index.go).
	tombstones tombstoneIndex
	// rangeDelVersion caches whether a version has tables with range
	// tombstones, so a Get on a DB without any pays one load (rangedel_read.go).
	rangeDelVersion atomic.Pointer[versionRangeDels]
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
	// nextLogs are the next memtables' WALs, being created or created
	// ahead by prepareLog (wal_prepare.go), oldest (the next) first.
	nextLogs []*logPrep
	// lastLogSync is the background sync of the newest retired WAL;
	// waiting on it waits for every older one too (wal_sync.go, K11).
	lastLogSync *logSync
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
	// ticker lets an idle DB reclaim deleted space (delete_aware.go).
	ticker tickerState
	// openTime anchors tombstoneClock, which dates the tombstones of
	// tables Open finds without a time (dateTombstones).
	openTime time.Time
	// noShadowDrop, set by tests and benchmarks right after Open, turns
	// early drop off (kv/shadow_drop.go) with the index still on, so a
	// measurement can tell the two apart.
	noShadowDrop bool
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
	compaction                                      compactionCounters
	shadowDrop                                      shadowDropCounters
}

// memTable is a memtable with the WAL that holds its writes.
type memTable struct {
	*memtable.MemTable
	id      uint64
	logNum  fileNum  // 0 with DisableWAL or for recovered, already-logged data
	logFile vfs.File // nil unless this is the mutable memtable
	// logOut carries the WAL's bytes into logFile: through a mapping where
	// the file allows, so a NoSync commit makes no syscall yet keeps
	// NoSync's promise (its bytes are in the page cache when Apply
	// returns; vfs V4), and a Sync is one fdatasync for the group (K1).
	logOut *vfs.Appender
	wal    *wal.Writer
	// logSync is the background sync of this memtable's WAL once the
	// rotation retired it (wal_sync.go); nil while it is mutable.
	logSync *logSync
	// rangeDels are its range tombstones, kept out of the point entries
	// (kv/rangedel.go).
	rangeDels memRangeDels
	// keyBytes is the bytes of the keys and range deletions' ends applied
	// to it, what its flush's index and range deletions grow with
	// (memTableKeyLimit).
	keyBytes atomic.Int64
	// firstTombstone is when its first point or range tombstone was
	// applied (tombstoneClock; 0: none yet): what its flush dates its
	// tables' tombstones by, since a memtable can live long before it
	// fills (TombstoneMaxAge counts from the delete, not the flush).
	firstTombstone atomic.Int64
	// refs counts its holders: the DB until a flush drops it from the
	// queue, and each read state listing it; the last releases its arena
	// (K12, kv/memtable_release.go).
	refs atomic.Int32
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

// allocFileNum returns a fresh file number, or ErrFileNumbersExhausted
// once the counter has passed maxFileNum: a wrapped counter would reuse
// the numbers of live files.
func (d *DB) allocFileNum() (fileNum, error) {
	for {
		cur := d.manifest.nextFileNum.Load()
		if cur > uint64(maxFileNum) {
			return 0, fmt.Errorf("%w: next file number %d is past %d", ErrFileNumbersExhausted, cur, maxFileNum)
		}
		if d.manifest.nextFileNum.CompareAndSwap(cur, cur+1) {
			return fileNum(cur), nil
		}
	}
}

// newMemTableLocked makes an empty memtable with a fresh WAL (unless the
// WAL is disabled): the one prepared ahead if it is ready, else one it
// creates. REQUIRES: d.mu held.
func (d *DB) newMemTableLocked() (*memTable, error) {
	d.nextMemID++
	m := d.newMemTableStruct(d.nextMemID)
	if d.opts.DisableWAL || d.opts.ReadOnly {
		return m, nil
	}
	p := d.takePreparedLog()
	if p == nil {
		var err error
		if p, err = d.createLog(); err != nil {
			return nil, err
		}
	}
	m.logNum, m.logFile = p.num, p.f
	m.logOut = p.out
	m.wal = wal.NewWriter(m.logOut, m.logOut, uint64(p.num))
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
	// The commit leader rotates between groups, so nothing writes old
	// again: its flush and readers share its tree instead of cloning it,
	// which lets its release recycle the nodes.
	old.Freeze()
	// The old log syncs in the background; a Sync commit in the new one
	// waits for it (K11).
	if err := d.retireWALLocked(old); err != nil {
		// The new log is not used; remove it. The old one's tail is
		// unknown: stop taking writes.
		next.closeWAL()
		d.fs.Remove(d.path(fileKindLog, next.logNum))
		return err
	}
	d.imm = append(d.imm, old)
	d.mem = next
	d.publishReadStateLocked()
	d.maybePrepareLogLocked()
	return nil
}

// closeWAL syncs and closes the memtable's WAL, if it has one open, before
// returning: Close's way out for the mutable memtable (a rotation retires
// the log to a background sync instead, retireWALLocked).
func (m *memTable) closeWAL() error {
	if m.wal == nil {
		return nil
	}
	err := closeLogFiles(m.logNum, m.wal, m.logOut, m.logFile)
	m.wal, m.logOut, m.logFile = nil, nil, nil
	return err
}

// Close stops new writes, waits for the commits in flight, flushes what
// exists nowhere else (the memtables, with DisableWAL), waits for
// background work, and releases the directory lock. Every write
// acknowledged before Close is kept; writes that lose the race with Close
// return ErrClosed, as do iterators and snapshots still open (close them
// first).
func (d *DB) Close() error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	// The barrier: as the head of the commit queue, no commit is in flight,
	// and every write acknowledged so far is in a memtable. From here on
	// writes return ErrClosed (writableLocked), so the memtables hold the
	// final state.
	var flushTarget uint64
	err := d.asLeader(func() error {
		d.closed = true
		d.closedFlag.Store(true)
		d.flushDone.Broadcast()
		if d.opts.DisableWAL && !d.opts.ReadOnly {
			// Without a WAL the memtables exist nowhere else.
			if d.bgErr != nil {
				// No flush can run: unflushed writes are lost, and Close
				// must not say otherwise.
				if !d.mem.Empty() || len(d.imm) > 0 {
					keep(d.bgErr)
				}
				return nil
			}
			var err error
			flushTarget, err = d.scheduleFinalFlushLocked()
			keep(err)
		}
		return nil
	})
	if err != nil {
		return err // ErrClosed: closed already
	}
	d.stopTicker()
	d.mu.Lock()
	for flushTarget != 0 && d.flushedMemID < flushTarget && d.bgErr == nil {
		d.flushDone.Wait()
	}
	if flushTarget != 0 && d.flushedMemID < flushTarget {
		keep(d.bgErr)
	}
	d.mu.Unlock()
	d.bg.Wait()
	// No Get or iterator call is inside a table once this returns, and
	// none will enter one: the files can close.
	d.reads.close()
	// A manual Compact may still be running; hold its mutex so it ends
	// before the manifest and tables close under it.
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	// Nothing changes the figures any more, and the tables are still open
	// for their filters' description.
	d.final.set(d.collectMetrics())

	d.mu.Lock()
	defer d.mu.Unlock()
	for p := d.takePreparedLog(); p != nil; p = d.takePreparedLog() {
		d.discardLog(p)
	}
	// bg.Wait has let every retired log's sync finish; a failed one
	// means writes acknowledged NoSync may not survive a power loss.
	if s := d.lastLogSync; s != nil {
		keep(s.err)
	}
	keep(d.mem.closeWAL())
	keep(d.manifest.close())
	d.retireReadStateLocked()
	if d.current != nil {
		d.current.Unref()
	}
	keep(d.tables.closeAll())
	keep(d.lock.Close())
	return firstErr
}

// scheduleFinalFlushLocked freezes a non-empty mutable memtable and starts
// the flush of every immutable one; it returns the id of the last memtable
// to wait for (0: nothing to flush). REQUIRES: d.mu held by the leader.
func (d *DB) scheduleFinalFlushLocked() (uint64, error) {
	if !d.mem.Empty() {
		if err := d.rotateMemTableLocked(); err != nil {
			return 0, err
		}
	}
	if len(d.imm) == 0 {
		return 0, nil
	}
	d.maybeScheduleFlushLocked()
	return d.imm[len(d.imm)-1].id, nil
}
