package kv

import (
	"fmt"
	"sync"
	"time"

	"github.com/sievekv/sievekv/internal/base"
)

// pendingWrite is one Apply waiting in the commit queue.
type pendingWrite struct {
	batch *Batch
	sync  bool
	done  bool
	err   error
	cond  sync.Cond // on DB.mu; signalled when done or when it becomes leader
}

// maxGroupBytes bounds how much one leader commits for its followers, so a
// small synced write is not delayed behind an enormous group.
const maxGroupBytes = 1 << 20

// Set writes key = value. The DB copies both.
func (d *DB) Set(key, value []byte, opts *WriteOptions) error {
	b := getBatch()
	b.Set(key, value)
	err := d.Apply(b, opts)
	putBatch(b)
	return err
}

// Delete removes key. Deleting an absent key is not an error.
func (d *DB) Delete(key []byte, opts *WriteOptions) error {
	b := getBatch()
	b.Delete(key)
	err := d.Apply(b, opts)
	putBatch(b)
	return err
}

// pendingWrites recycles the commit queue's entries: once Apply returns no
// other goroutine refers to its pendingWrite (the leader marks and signals
// its group under d.mu, and a follower returns only after taking d.mu).
var pendingWrites = sync.Pool{New: func() any { return new(pendingWrite) }}

// Apply commits every write in b atomically (K2). With opts.Sync the writes
// are durable when Apply returns (K1). The batch must not be modified until
// Apply returns; it may be reused afterwards.
//
// Writers queue up; the one at the head (the leader) writes the WAL records
// of the whole queue it finds, with one fsync if any of them asked for Sync
// (group commit), applies them to the memtable, publishes their sequence
// numbers, and wakes the followers.
func (d *DB) Apply(b *Batch, opts *WriteOptions) error {
	if b == nil {
		return fmt.Errorf("%w: Apply of a nil batch", ErrInvalidArgument)
	}
	if opts == nil {
		opts = NoSync
	}
	if err := b.validate(); err != nil {
		return err
	}
	if !b.applying.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: Apply of a batch another Apply is committing (a Batch is for one goroutine at a time)", ErrInvalidArgument)
	}
	defer b.applying.Store(false)
	w := pendingWrites.Get().(*pendingWrite)
	w.batch, w.sync, w.done, w.err = b, opts.Sync, false, nil
	w.cond.L = &d.mu
	defer func() {
		w.batch, w.err = nil, nil
		pendingWrites.Put(w)
	}()

	d.mu.Lock()
	if err := d.writableLocked(); err != nil {
		d.mu.Unlock()
		return err
	}
	if b.Empty() {
		d.mu.Unlock()
		return nil
	}
	d.writers = append(d.writers, w)
	for !w.done && d.writers[0] != w {
		w.cond.Wait()
	}
	if w.done {
		d.mu.Unlock()
		return w.err
	}

	// This writer leads. REQUIRES: d.mu held from here until the group is
	// chosen, and re-taken to publish.
	err := d.makeRoomForWriteLocked()
	group := d.writers[:1]
	if err == nil {
		size := 0
		for i, pw := range d.writers {
			if pw.batch == nil {
				// A barrier (Flush, Close) waiting for its turn as leader.
				break
			}
			size += pw.batch.Len()
			if i > 0 && size > maxGroupBytes {
				break
			}
			group = d.writers[:i+1]
		}
	}
	// Err with an empty group still wakes the leader itself below.
	first := d.lastSeq + 1
	seq := first
	syncWAL := false
	for _, pw := range group {
		pw.batch.setSeq(seq)
		seq += base.SeqNum(pw.batch.n)
		syncWAL = syncWAL || pw.sync
	}
	last := seq - 1
	mem := d.mem
	olderLogs := d.lastLogSync
	d.mu.Unlock()

	if err == nil {
		err = d.writeGroup(mem, olderLogs, group, syncWAL)
	}

	d.mu.Lock()
	if err == nil {
		d.lastSeq = last
		d.visibleSeq.Store(uint64(last))
		d.lendToCacheLocked()
	} else if !isUserError(err) {
		// The WAL's state is unknown after a failed write or sync: accept
		// no more writes (LevelDB's sticky bg_error_).
		d.setBackgroundErrorLocked("kv: write-ahead log", err)
	}
	for _, pw := range group {
		pw.done = true
		pw.err = err
		if pw != w {
			pw.cond.Signal()
		}
	}
	d.popWritersLocked(len(group))
	if len(d.writers) > 0 {
		d.writers[0].cond.Signal()
	}
	d.mu.Unlock()
	return err
}

// popWritersLocked removes the first n writers of the queue, moving the
// rest to the front: re-slicing from the front instead would shrink the
// capacity to nothing and make every append allocate. REQUIRES: d.mu held,
// and nobody still ranges over the removed writers' slots.
func (d *DB) popWritersLocked(n int) {
	rest := copy(d.writers, d.writers[n:])
	clear(d.writers[rest:])
	d.writers = d.writers[:rest]
}

// isUserError reports errors that say nothing about the DB's health.
func isUserError(err error) bool { return err == ErrClosed || err == ErrReadOnly }

// writeGroup writes a commit group to the WAL and then the memtable. Only
// the leader calls it, so the WAL writer and the memtable have one writer.
// olderLogs is the background sync of the newest retired WAL: a synced
// group's fsync waits for it, so that no chunk of mem's log carries a
// synced mark (wal's W4) while an older log may still be torn (K11).
func (d *DB) writeGroup(mem *memTable, olderLogs *logSync, group []*pendingWrite, syncWAL bool) error {
	if mem.wal != nil {
		before := mem.wal.Size()
		for _, pw := range group {
			if _, err := mem.wal.WriteRecord(pw.batch.data); err != nil {
				return err
			}
		}
		var err error
		if syncWAL {
			if err = waitOlderLogs(olderLogs); err == nil {
				err = mem.wal.Sync()
			}
			d.counters.walSyncs.Add(1)
		} else {
			// Hand the bytes to the OS so a process crash loses nothing.
			err = mem.wal.Flush()
		}
		d.counters.walBytes.Add(uint64(mem.wal.Size() - before))
		if err != nil {
			return err
		}
	}
	for _, pw := range group {
		if err := d.applyToMemTable(mem, pw.batch.data); err != nil {
			return err
		}
		d.counters.userBytes.Add(uint64(len(pw.batch.data) - batchHeaderLen))
	}
	return nil
}

// applyToMemTable inserts every entry of an encoded batch. The memtable's
// refusals (an entry past memtable.MaxEntryBytes, a frozen memtable) are
// returned, not ignored: the engine's own bounds keep both unreachable,
// but an entry the memtable did not take must never be acknowledged.
// The memtable's first tombstone is dated here.
func (d *DB) applyToMemTable(mem *memTable, data []byte) error {
	keyBytes, tombstones := 0, false
	_, _, err := decodeBatch(data, func(seq base.SeqNum, e batchEntry) error {
		keyBytes += len(e.Key)
		var err error
		switch e.Kind {
		case base.KindSet:
			err = mem.Set(e.Key, seq, e.Value)
		case base.KindRangeDelete:
			mem.rangeDels.add(e.Key, e.Value, seq)
			keyBytes += len(e.Value)
			tombstones = true
		default:
			err = mem.Delete(e.Key, seq)
			tombstones = true
		}
		if err != nil {
			return fmt.Errorf("kv: memtable refused the entry at seq %d: %w", seq, err)
		}
		return nil
	})
	mem.keyBytes.Add(int64(keyBytes))
	if tombstones && mem.firstTombstone.Load() == 0 {
		mem.firstTombstone.CompareAndSwap(0, d.tombstoneClock())
	}
	return err
}

// full reports whether m is due for rotation: its size reached
// memTableSize, or its keys memTableKeyLimit.
func (m *memTable) full(memTableSize int) bool {
	return m.flushSize() >= int64(memTableSize) || m.keyBytes.Load() >= memTableKeyLimit
}

// writableLocked reports why the DB cannot take writes now, if it cannot.
// REQUIRES: d.mu held.
func (d *DB) writableLocked() error {
	switch {
	case d.closed:
		return ErrClosed
	case d.opts.ReadOnly:
		return ErrReadOnly
	case d.bgErr != nil:
		return d.bgErr
	}
	return nil
}

// maxImmutableMemTables bounds the memtables waiting for flush; past it
// writers wait (back-pressure) instead of growing memory without bound.
const maxImmutableMemTables = 2

// makeRoomForWriteLocked rotates a full memtable to the flush queue, waits
// while the flush queue is full, and applies L0 back-pressure: past the
// slowdown threshold each commit group is delayed once by 1 ms, at the stop
// threshold writers wait until compaction brings L0 down. It never waits
// for work that is not running, so it cannot deadlock.
// REQUIRES: d.mu held, caller is the leader.
func (d *DB) makeRoomForWriteLocked() error {
	delayed := false
	for {
		if err := d.writableLocked(); err != nil {
			return err
		}
		l0 := len(d.current.Levels[0])
		canCompact := !d.opts.DisableAutomaticCompactions
		switch {
		case canCompact && l0 >= d.opts.L0StopWritesThreshold:
			d.maybeScheduleCompactionLocked()
			if d.compacting {
				d.counters.writeStalls.Add(1)
				d.flushDone.Wait()
				continue
			}
		case canCompact && l0 >= d.opts.L0SlowdownWritesThreshold && !delayed:
			delayed = true
			d.counters.writeSlowdowns.Add(1)
			d.maybeScheduleCompactionLocked()
			d.mu.Unlock()
			time.Sleep(time.Millisecond)
			d.mu.Lock()
			continue
		}
		if !d.mem.full(d.opts.MemTableSize) {
			return nil
		}
		if len(d.imm) >= maxImmutableMemTables {
			d.counters.writeStalls.Add(1)
			d.flushDone.Wait()
			continue
		}
		if err := d.rotateMemTableLocked(); err != nil {
			return err
		}
		d.maybeScheduleFlushLocked()
	}
}
