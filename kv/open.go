package kv

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
	"github.com/sievekv/sievekv/vfs"
)

// Open opens the database in dirname, creating it if it does not exist
// (unless opts.ReadOnly or opts.ErrorIfNotExists: ErrDBDoesNotExist). A nil
// opts means all defaults. Open takes an exclusive lock on the directory, or
// a shared one with ReadOnly (ErrLocked if another DB's lock excludes it),
// replays the manifest and the WALs, and removes files a crash orphaned.
func Open(dirname string, opts *Options) (*DB, error) {
	if dirname == "" {
		// Left alone, the empty name surfaces as a bare "mkdir : no such
		// file or directory" that names nothing.
		return nil, fmt.Errorf("%w: Open: the directory name is empty", ErrInvalidArgument)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &DB{dirname: dirname, opts: o, fs: o.FS}
	d.flushDone.L = &d.mu
	// File number 0 means "none" (a memtable without a WAL, a manifest
	// without a log number): the first file gets 1.
	d.manifest.nextFileNum.Store(1)
	d.picker.Opts = compaction.Options{
		L0Trigger:             o.L0CompactionThreshold,
		BaseBytes:             uint64(o.LBaseMaxBytes),
		LevelMultiplier:       10,
		TargetFileSize:        uint64(o.TargetFileSize),
		MaxGrandparentOverlap: 10 * uint64(o.TargetFileSize),
		PurgeRatio:            compaction.DefaultOptions().PurgeRatio,
		TombstoneMaxAge:       o.TombstoneMaxAge,
		IdleRatio:             o.IdlePurgeMinShare,
	}
	d.openTime = time.Now()
	d.picker.Now = d.tombstoneClock
	// The picker runs under d.mu (pickLocked, CompactDue), which guards
	// the snapshot list.
	d.picker.OldestSnapshot = func() (base.SeqNum, bool) {
		if s := d.snapshots.head; s != nil {
			return s.seq, true
		}
		return 0, false
	}
	d.cacheLoan = newCacheLoan(o)
	d.cache = sstable.NewResizableCache(o.BlockCacheSize, o.BlockCacheSize+d.cacheLoan.allowance)
	d.tableStats = &sstable.Stats{}
	d.tables = newTableCache(d.fs, dirname, d.cache, d.tableStats, o.MaxOpenFiles-nonTableFiles)
	policy, err := o.filterPolicy()
	if err != nil {
		return nil, err
	}
	d.writerOpts = sstable.WriterOptions{BlockSize: o.BlockSize, Filter: o.Filter, FilterPolicy: policy,
		RangeFilterBitsPerKey: o.RangeFilterBitsPerKey}

	if o.ErrorIfNotExists && !o.ReadOnly {
		// Before anything is created: not the directory, not its LOCK
		// (recover checks again under the lock).
		names, err := d.fs.List(dirname)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kv: list %s: %w", dirname, err)
		}
		if !slices.Contains(names, fileName(fileKindCurrent, 0)) {
			return nil, d.errNoDB()
		}
	}
	if !o.ReadOnly {
		// Durably: a new DB directory not yet an entry of its parent on
		// disk would take every synced write in it with it on a power loss.
		if err := vfs.MkdirAllDurable(d.fs, dirname, 0o755); err != nil {
			return nil, fmt.Errorf("kv: create %s: %w", dirname, err)
		}
	}
	lock, err := d.lockDir()
	if err != nil {
		return nil, err
	}
	d.lock = lock
	if err := d.recover(); err != nil {
		if d.mem != nil {
			// The WAL recover opened for the new memtable, if it got that
			// far: a failed Open must not keep its descriptor (the empty
			// log left behind is read as empty by the next Open).
			d.mem.closeWAL()
		}
		d.tables.closeAll()
		d.manifest.close()
		lock.Close()
		return nil, err
	}
	// recover set the memtables and version without readers around;
	// publish the final state before the first read (K9).
	d.mu.Lock()
	d.publishReadStateLocked()
	d.mu.Unlock()
	return d, nil
}

// lockDir takes the directory's lock: exclusive for a read-write DB
// (creating LOCK), shared for a ReadOnly one, so read-only opens coexist
// with each other and exclude, and are excluded by, a writer. A read-only
// open creates nothing: without LOCK there is no DB unless CURRENT exists
// (a copied directory), which is then read without a lock.
func (d *DB) lockDir() (io.Closer, error) {
	name := d.fs.PathJoin(d.dirname, fileName(fileKindLock, 0))
	var lock io.Closer
	var err error
	if d.opts.ReadOnly {
		lock, err = d.fs.RLock(name)
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := d.fs.Stat(d.path(fileKindCurrent, 0)); serr != nil {
				return nil, d.errNoDB()
			}
			d.opts.Logger("kv: %s has no LOCK file; reading it without a lock", d.dirname)
			return nopCloser{}, nil
		}
	} else {
		lock, err = d.fs.Lock(name)
	}
	if err != nil {
		if errors.Is(err, vfs.ErrLocked) {
			// The cause stays wrapped: vfs.ErrLocked matches too.
			return nil, fmt.Errorf("%w: %s: %w", ErrLocked, d.dirname, err)
		}
		return nil, fmt.Errorf("kv: lock %s: %w", d.dirname, err)
	}
	return lock, nil
}

// errNoDB is Open's error for a directory without a DB that it must not
// create one in: ReadOnly or Options.ErrorIfNotExists.
func (d *DB) errNoDB() error {
	why := "Options.ErrorIfNotExists"
	if d.opts.ReadOnly {
		why = "read-only"
	}
	return fmt.Errorf("%w: %s (%s): %w", ErrDBDoesNotExist, d.dirname, why, fs.ErrNotExist)
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// recover rebuilds the DB's state from the directory: the manifest names
// the live tables and the oldest WAL still needed; every WAL from there on
// is replayed into memtables and written out as L0 tables; a fresh
// manifest is written and made current; files no version needs are
// removed.
func (d *DB) recover() error {
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return fmt.Errorf("kv: list %s: %w", d.dirname, err)
	}
	hasCurrent := slices.Contains(names, fileName(fileKindCurrent, 0))
	if !hasCurrent {
		if err := d.checkNoCurrent(names); err != nil {
			return err
		}
		if d.opts.ReadOnly || d.opts.ErrorIfNotExists {
			return d.errNoDB()
		}
	} else if d.opts.ErrorIfExists {
		return fmt.Errorf("%w: %s (Options.ErrorIfExists)", ErrDBExists, d.dirname)
	}

	v := &manifest.Version{}
	if hasCurrent {
		if v, err = d.replayManifest(); err != nil {
			return err
		}
	}
	// Open every live table now: a missing or damaged table is reported
	// by Open rather than by some later read, and each table's property
	// block, which the manifest does not repeat, joins its metadata before
	// the version is published (manifest's V1). Each goes through the
	// bounded table cache and is released at once, so Open needs no more
	// descriptors than MaxOpenFiles however many tables there are.
	for _, l := range v.Levels {
		for _, t := range l {
			err := d.tables.withReader(t, func(r *sstable.Reader) error {
				p := r.Properties()
				t.Props = &p
				return nil
			})
			if err != nil {
				// The table or the MANIFEST naming it may be the damaged
				// file: name both.
				return fmt.Errorf("%w (named by %s)", err, fileName(fileKindManifest, d.manifest.num))
			}
			d.dateTombstones(t)
		}
	}
	d.installVersionLocked(v)

	// Every file number in the directory is taken, even those the manifest
	// does not know (orphans), so new files never reuse one. Only the
	// engine's own names count (parseFileName): a stray file cannot move
	// the counter, let alone to its end.
	var logs []fileNum
	for _, n := range names {
		k, num, ok := parseFileName(n)
		if !ok || k == fileKindCurrent || k == fileKindLock {
			continue
		}
		d.manifest.bumpNextFileNum(num + 1)
		if k == fileKindLog && num >= d.manifest.logNum {
			logs = append(logs, num)
		}
	}
	slices.Sort(logs)

	d.mu.Lock()
	defer d.mu.Unlock()
	d.mem = d.newMemTableStruct(0)
	if err := d.replayWALsLocked(logs); err != nil {
		return err
	}
	d.visibleSeq.Store(uint64(d.lastSeq))
	if d.opts.ReadOnly {
		// Keep the replayed writes in memory; nothing is written.
		d.readOnlyLogs = len(logs)
		d.lendToCacheLocked()
		return nil
	}
	if err := d.flushRecoveredLocked(); err != nil {
		return err
	}
	mem, err := d.newMemTableLocked()
	if err != nil {
		return err
	}
	d.mem = mem
	d.lendToCacheLocked()
	var buildLater bool
	if !d.opts.DisableTombstoneIndex {
		// Rebuilt from the tables rather than persisted: it is derived
		// state, and the tables' properties let the scan skip every table
		// without tombstones. Past openIndexInlineBytes of them the
		// rebuild starts once the DB is set up (below), in the background.
		d.tombstones.on = true
		d.tombstones.rebuild = func() ([]uint64, error) { return d.tombstoneHashes(d.current) }
		d.tombstones.grow = d.rebuildInBackground
		if buildLater = tombstoneTableBytes(d.current) > openIndexInlineBytes; buildLater {
			err = d.tombstones.startBuilding()
		} else {
			d.tombstones.mu.Lock()
			err = d.tombstones.rebuildLocked(tombstoneIndexMinCapacity)
			d.tombstones.mu.Unlock()
		}
		if err != nil {
			return err
		}
	}
	// The new manifest records the whole state and the new WAL as the
	// oldest needed; once it is current, older WALs are obsolete.
	if err := d.createManifestLocked(mem.logNum); err != nil {
		return err
	}
	if mem.logNum == 0 {
		if err := d.retireReplayedLogsLocked(logs); err != nil {
			return err
		}
	}
	d.deleteObsoleteFilesLocked()
	if buildLater {
		// Reading every table that holds tombstones made Open's time grow
		// with the data (a cold 242 MB DB with 3.5k tombstones opened in
		// 156-184 ms, against 51-53 ms without the index), so past a few MiB the
		// index is built while the DB serves, answering "may have" until
		// then.
		d.tombstones.mu.Lock()
		d.rebuildInBackground(d.current, tombstoneIndexMinCapacity)
		d.tombstones.mu.Unlock()
	}
	d.maybeScheduleCompactionLocked()
	d.startTickerLocked()
	d.maybePrepareLogLocked()
	return nil
}

// retireReplayedLogsLocked removes the WALs a DisableWAL open replayed,
// once the manifest naming the tables they were flushed into is current,
// and syncs the directory before any write is taken. Such an open writes
// no WAL, so its manifest names no oldest needed log (one it named would
// be missing, which Open reads as lost edits, K6), and the logs would
// stay replayable: the next open replayed them again over every write
// made since (their entries at their old sequence numbers in the memtable,
// which a Get consults first: a deleted key back, an overwritten one at
// its old value). REQUIRES: d.mu held, the new manifest current.
func (d *DB) retireReplayedLogsLocked(logs []fileNum) error {
	if len(logs) == 0 {
		return nil
	}
	for _, num := range logs {
		if err := d.fs.Remove(d.path(fileKindLog, num)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("kv: remove replayed WAL %06d: %w", num, err)
		}
	}
	return d.syncDir()
}

// flushRecoveredLocked writes the memtable WAL replay filled as L0 tables.
// The edit is not logged: the fresh MANIFEST Open writes next records the
// whole version, and until then the WALs still hold the data.
// REQUIRES: d.mu held (during Open).
func (d *DB) flushRecoveredLocked() error {
	if d.mem.Empty() {
		return nil
	}
	tables, _, err := d.flushMemTables([]*memTable{d.mem}, nil, nil, nil)
	if err != nil {
		return err
	}
	edit := &manifest.VersionEdit{}
	for _, t := range tables {
		d.dateTombstones(t)
		edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: 0, Meta: t})
	}
	if err := d.applyEditLocked(edit); err != nil {
		return err
	}
	d.mem = d.newMemTableStruct(0)
	return nil
}

// replayWALsLocked applies every batch of the WALs (sorted, oldest first)
// to the mutable memtable, flushing it to L0 whenever it fills. The chain
// of logs is cut at the first break a crash or power loss can leave, with
// a warning (readLogChain, K11); any other damage is corruption.
// REQUIRES: d.mu held (during Open, no other goroutine exists).
func (d *DB) replayWALsLocked(logs []fileNum) error {
	note := func(msg string) { d.opts.Logger("%s", msg) }
	return d.readLogChain(logs, note, func(rec walRecord) error {
		if err := d.applyToMemTable(d.mem, rec.data); err != nil {
			return err
		}
		// The manifest's last sequence may already cover these writes (it
		// is recorded at every edit), so take the larger.
		if rec.count > 0 {
			d.lastSeq = max(d.lastSeq, rec.first+base.SeqNum(rec.count)-1)
		}
		if !d.opts.ReadOnly && d.mem.full(d.opts.MemTableSize) {
			return d.flushRecoveredLocked()
		}
		return nil
	})
}

// checkNoCurrent decides what a directory without CURRENT is. A first
// Open that failed or crashed after writing its MANIFEST but before
// CURRENT named it leaves a manifest and an empty WAL: no write was ever
// acknowledged there, so the DB may be created afresh (the leftovers are
// removed as obsolete). A table, or a WAL holding data, means the DB was
// in use and CURRENT was lost: corruption.
func (d *DB) checkNoCurrent(names []string) error {
	for _, n := range names {
		k, num, ok := parseFileName(n)
		if !ok {
			continue
		}
		inUse := k == fileKindTable
		if k == fileKindLog {
			st, err := d.fs.Stat(d.path(fileKindLog, num))
			inUse = err != nil || st.Size() > 0
		}
		if inUse {
			return base.CorruptionErrorf("kv: %s: CURRENT is missing but %s exists", d.dirname, n)
		}
	}
	return nil
}
