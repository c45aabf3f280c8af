package kv

import (
	"slices"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
)

// maybeScheduleFlushLocked starts the flush goroutine if memtables wait.
// REQUIRES: d.mu held.
func (d *DB) maybeScheduleFlushLocked() {
	if d.flushing || len(d.imm) == 0 || d.bgErr != nil || d.opts.ReadOnly {
		return
	}
	d.flushing = true
	d.bg.Add(1)
	go d.flushLoop()
}

// flushLoop writes immutable memtables, oldest first, as L0 tables until
// none is left, then exits. One runs at a time (d.flushing). Every
// memtable waiting when a flush starts (up to flushPrefixLocked's bound
// on their keys) goes into the same table (or tables, when long keys fill
// one's metadata: writeTables; K6 holds: they are consecutive and the
// oldest of the queue), as Pebble's flush
// does: when flushes fall behind the writers, L0 receives fewer, larger
// tables instead of more small ones, and each compaction of L0 into the
// base level then rewrites the base level for more new data
// (docs/design.md, "Flushes the size Pebble's are").
func (d *DB) flushLoop() {
	defer d.bg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.imm) > 0 && d.bgErr == nil {
		ms := slices.Clone(d.imm[:flushPrefixLocked(d.imm)])
		snaps := d.snapshots.seqs()
		v := d.current
		v.Ref()
		d.mu.Unlock()
		// Start once the newest log of ms is synced (and with it every
		// older one, wal_sync.go), as when the rotation synced it: the
		// flush's table writes and fsyncs then do not compete with that
		// log's writeback, and the logs' files are closed before they are
		// removed below (docs/design.md, "Old logs sync in the
		// background"). A failed sync is the DB's sticky error already;
		// the memtables are still worth flushing.
		ms[len(ms)-1].logSync.wait()
		// The index's hashes come from the table writers, outside d.mu
		// (commits wait on it), so its critical section only inserts.
		tombstones := newTombstoneCollector(d.tombstones.on, d.tombstones.takeHashes())
		tables, elided, err := d.flushMemTables(ms, v, snaps, tombstones)
		if err == nil {
			// Before the edit publishes them (manifest's V1).
			d.noteTombstones(v, 0, tables, tombstones, firstTombstoneTime(ms))
		}
		v.Unref()
		d.mu.Lock()
		last := ms[len(ms)-1]
		if err == nil {
			// Every entry of ms is now in a table: the WAL needed next is
			// the one of the following memtable (K6).
			edit := &manifest.VersionEdit{}
			if next := d.logNumAfterLocked(last); next != 0 {
				edit.LogNumber, edit.HasLogNumber = uint64(next), true
			}
			for _, t := range tables {
				edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: 0, Meta: t})
			}
			err = d.logAndApplyLocked(edit)
			if err != nil {
				d.removeFiles(tables)
			}
		}
		if err != nil {
			d.setBackgroundErrorLocked("kv: background flush", err)
			break
		}
		// Applied once d.mu is released (in the background, below).
		indexEdit := d.beginTombstoneEditLocked(tombstones.hashes, nil, tombstones.fullMemTable(d.opts.MemTableSize))
		tombstones.release()
		d.counters.tombstonesElided.Add(elided)
		// Memtables rotated meanwhile stay queued behind the flushed ones.
		d.imm = d.imm[len(ms):]
		d.publishReadStateLocked()
		d.lendToCacheLocked()
		for _, m := range ms {
			m.unref() // the DB's hold; pinned reads keep theirs (K12)
		}
		d.flushedMemID = last.id
		d.counters.flushes.Add(uint64(len(ms)))
		d.counters.compaction.levelBytesWritten[0].Add(manifest.TotalSize(tables))
		for _, m := range ms {
			if m.logNum == 0 {
				continue
			}
			// Its writes are in a table the manifest names (K6), and its
			// background sync has closed the file (waited for above).
			if err := d.fs.Remove(d.path(fileKindLog, m.logNum)); err != nil {
				d.opts.Logger("kv: remove flushed WAL %06d: %v", m.logNum, err)
			}
		}
		d.flushDone.Broadcast()
		d.maybeScheduleCompactionLocked()
		// Off this loop, so the next memtable's flush (which a writer
		// may be waiting for) never waits for the index.
		d.applyTombstoneEditInBackground(indexEdit)
	}
	d.flushing = false
	d.flushDone.Broadcast()
}

// firstTombstoneTime is the oldest first-tombstone time of ms (0 if none
// holds a tombstone; dateTombstones then dates a table that has one, from
// a replayed WAL, at the flush).
func firstTombstoneTime(ms []*memTable) int64 {
	var oldest int64
	for _, m := range ms {
		if t := m.firstTombstone.Load(); t != 0 && (oldest == 0 || t < oldest) {
			oldest = t
		}
	}
	return oldest
}

// flushPrefixLocked is how many of the oldest memtables of imm the next
// flush takes: all, unless their keys pass four times memTableKeyLimit
// (at least one is taken). A flush's index and range deletions grow with
// its keys, and it cannot always end a table (maxBatchKeyBytes).
// REQUIRES: d.mu held.
func flushPrefixLocked(imm []*memTable) int {
	n, keys := 1, imm[0].keyBytes.Load()
	for ; n < len(imm); n++ {
		if keys += imm[n].keyBytes.Load(); keys > 4*memTableKeyLimit {
			break
		}
	}
	return n
}

// flushMemTables writes the memtables ms, consecutive and oldest first,
// as one L0 table (none if they are all empty; more, with disjoint key
// ranges, only when long keys fill a table's metadata: metadataCut). A tombstone in the oldest
// snapshot stripe whose key every older table's filter rules out hides
// nothing and is dropped (compaction's C2 with the filters as the proof);
// v is the version whose tables are older than ms. Versions of one key in
// different memtables meet in the merge and collapse by C1, as in a
// compaction. tombstones, if not nil, collects the tombstones written, for
// the delete-aware figures and the tombstone index.
func (d *DB) flushMemTables(ms []*memTable, v *manifest.Version, snapshots []base.SeqNum, tombstones *tombstoneCollector) ([]*manifest.TableMetadata, uint64, error) {
	var (
		src       base.InternalIterator
		rangeDels []rangedel.Tombstone
	)
	iters := make([]base.InternalIterator, len(ms))
	for i, m := range ms {
		if tombstones != nil {
			tombstones.reserve(m.Deletes())
		}
		it := m.NewIter(nil, nil)
		defer it.Close()
		iters[i] = it
		rangeDels = append(rangeDels, m.rangeDels.all()...)
	}
	if len(iters) == 1 {
		src = iters[0]
	} else {
		src = newMergingIter(iters)
	}
	var elide func([]byte) bool
	if v != nil {
		elide = tombstones.elider(d, v, 0)
	}
	filtered := compaction.NewIter(src, snapshots, elide)
	tables, err := d.writeTables(filtered, outputSpec{tombstones: tombstones, rangeDels: rangeDels})
	return tables, filtered.Elided, err
}

// logNumAfterLocked is the oldest WAL still needed once m is flushed.
// REQUIRES: d.mu held.
func (d *DB) logNumAfterLocked(m *memTable) fileNum {
	for i, im := range d.imm {
		if im == m && i+1 < len(d.imm) {
			return d.imm[i+1].logNum
		}
	}
	return d.mem.logNum
}

// removeFiles deletes the new tables of an edit that failed (and drops
// them from the filter budget's pending tables). If the
// MANIFEST update itself failed, its record may still be read back by the
// next Open, so the tables are kept: Open deletes them if the MANIFEST
// does not name them (K5). REQUIRES: d.mu held.
func (d *DB) removeFiles(tables []*manifest.TableMetadata) {
	for _, t := range tables {
		d.filterBudget.forget(t.FileNum)
	}
	if d.manifest.failed {
		return
	}
	for _, t := range tables {
		d.fs.Remove(d.path(fileKindTable, fileNum(t.FileNum)))
	}
}

// Flush writes the mutable memtable (and any waiting immutable ones) to
// L0 tables and returns when they are durable in the manifest.
func (d *DB) Flush() error {
	var target uint64
	err := d.asLeader(func() error {
		// Read-only, or a sticky failure: report it rather than claim a
		// flush that cannot happen.
		if err := d.writableLocked(); err != nil {
			return err
		}
		if !d.mem.Empty() {
			if err := d.rotateMemTableLocked(); err != nil {
				return err
			}
		}
		if len(d.imm) > 0 {
			target = d.imm[len(d.imm)-1].id
		}
		d.maybeScheduleFlushLocked()
		return nil
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.flushedMemID < target && d.bgErr == nil && !d.closed {
		d.flushDone.Wait()
	}
	if d.flushedMemID < target {
		if d.bgErr != nil {
			return d.bgErr
		}
		return ErrClosed
	}
	return nil
}

// asLeader runs fn under d.mu as the head of the commit queue, so no
// commit is writing the mutable memtable or its WAL meanwhile. It returns
// ErrClosed without running fn once Close's barrier has run, also when
// Close's turn came while this call waited in the queue: two Closes queued
// together both passed the first check, and the second ran the whole
// teardown again (closing closed channels, files and the lock).
func (d *DB) asLeader(fn func() error) error {
	w := &pendingWrite{}
	w.cond.L = &d.mu
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	d.writers = append(d.writers, w)
	for d.writers[0] != w {
		w.cond.Wait()
	}
	err := ErrClosed
	if !d.closed {
		err = fn()
	}
	d.writers = d.writers[1:]
	if len(d.writers) > 0 {
		d.writers[0].cond.Signal()
	}
	return err
}
