package kv

import (
	"bytes"
	"fmt"

	"github.com/sievekv/sievekv/compaction"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/sstable"
)

// entrySource is the forward-only stream a table is written from.
type entrySource interface {
	Next() bool
	Key() base.InternalKey
	Value() []byte
	Error() error
}

// writeTables writes the entries of src into new tables, starting a new
// table once the current one reaches targetSize (0 = never) at a user-key
// boundary, so no user key spans two tables (level invariant for L1+).
// Created files that do not make it into a version are removed on error;
// orphans left by a crash are removed by the next Open.
func (d *DB) writeTables(src entrySource, targetSize uint64) ([]*tableMeta, error) {
	var (
		out     []*tableMeta
		w       *sstable.Writer
		num     fileNum
		lastKey []byte
		created []fileNum
	)
	fail := func(err error) ([]*tableMeta, error) {
		if w != nil {
			w.Abort()
		}
		for _, n := range created {
			d.fs.Remove(d.path(fileKindTable, n))
		}
		return nil, err
	}
	finish := func() error {
		md, err := w.Finish()
		w = nil
		if err != nil {
			return fmt.Errorf("kv: write table %06d: %w", num, err)
		}
		out = append(out, metaFromSSTable(num, md))
		return nil
	}
	for src.Next() {
		k := src.Key()
		if w != nil && targetSize > 0 && w.EstimatedSize() >= targetSize && !bytes.Equal(k.UserKey, lastKey) {
			if err := finish(); err != nil {
				return fail(err)
			}
		}
		if w == nil {
			num = d.allocFileNum()
			f, err := d.fs.Create(d.path(fileKindTable, num))
			if err != nil {
				return fail(fmt.Errorf("kv: create table %06d: %w", num, err))
			}
			created = append(created, num)
			w = sstable.NewWriter(f, d.writerOpts)
		}
		if err := w.Add(k, src.Value()); err != nil {
			return fail(fmt.Errorf("kv: write table %06d: %w", num, err))
		}
		lastKey = append(lastKey[:0], k.UserKey...)
	}
	if err := src.Error(); err != nil {
		return fail(err)
	}
	if w != nil {
		if err := finish(); err != nil {
			return fail(err)
		}
	}
	if len(out) > 0 {
		// The new files' directory entries must be durable before a
		// manifest edit names them.
		if err := d.syncDir(); err != nil {
			return fail(err)
		}
	}
	return out, nil
}

func metaFromSSTable(num fileNum, md sstable.Metadata) *tableMeta {
	p := md.Properties
	return &tableMeta{
		fileNum:     num,
		size:        md.Size,
		smallest:    p.SmallestKey.Clone(),
		largest:     p.LargestKey.Clone(),
		smallestSeq: p.SmallestSeqNum,
		largestSeq:  p.LargestSeqNum,
		entries:     p.NumEntries,
		filterType:  p.FilterType,
		filterBytes: p.FilterSize,
	}
}

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
// none is left, then exits. One runs at a time (d.flushing).
func (d *DB) flushLoop() {
	defer d.bg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.imm) > 0 && d.bgErr == nil {
		m := d.imm[0]
		snaps := d.snapshots.seqs()
		d.mu.Unlock()
		tables, err := d.flushMemTable(m, snaps)
		d.mu.Lock()
		if err == nil {
			// Every entry of m is now in a table: the WAL needed next is
			// the one of the following memtable (K6).
			edit := &versionEdit{logNum: d.logNumAfterLocked(m)}
			for _, t := range tables {
				edit.added = append(edit.added, newTable{level: 0, meta: t})
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
		d.imm = d.imm[1:]
		d.flushedMemID = m.id
		d.counters.flushes.Add(1)
		if m.logNum != 0 {
			// Its writes are in a table the manifest names (K6).
			if err := d.fs.Remove(d.path(fileKindLog, m.logNum)); err != nil {
				d.opts.Logger("kv: remove flushed WAL %06d: %v", m.logNum, err)
			}
		}
		d.flushDone.Broadcast()
	}
	d.flushing = false
	d.flushDone.Broadcast()
}

// flushMemTable writes m as one L0 table (none if it is empty).
func (d *DB) flushMemTable(m *memTable, snapshots []base.SeqNum) ([]*tableMeta, error) {
	it := m.NewIter(nil, nil)
	defer it.Close()
	src := compaction.NewIter(it, snapshots, nil)
	return d.writeTables(src, 0)
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

// removeFiles deletes the new tables of an edit that failed. If the
// MANIFEST update itself failed, its record may still be read back by the
// next Open, so the tables are kept: Open deletes them if the MANIFEST
// does not name them (K5). REQUIRES: d.mu held.
func (d *DB) removeFiles(tables []*tableMeta) {
	if d.manifest.failed {
		return
	}
	for _, t := range tables {
		d.fs.Remove(d.path(fileKindTable, t.fileNum))
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
// commit is writing the mutable memtable or its WAL meanwhile.
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
	err := fn()
	d.writers = d.writers[1:]
	if len(d.writers) > 0 {
		d.writers[0].cond.Signal()
	}
	return err
}
