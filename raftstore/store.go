package raftstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// ErrNotFound is returned by Get and GetUint64 for a key never set. Its
// text is exactly "not found": raft recognises a fresh node's empty stable
// store by comparing err.Error() with that string (keeps R5).
var ErrNotFound = errors.New("not found")

// Store is a raft log store and stable store on one sievekv DB.
type Store struct {
	db  *kv.DB
	dir string

	// writeMu orders log writes with the updates of first and last they
	// make (R2). Readers load first and last without it.
	writeMu     sync.Mutex
	first, last atomic.Uint64
	// nonEmpty tells an empty log from one holding only index 0 (which
	// raft never writes, but a LogStore must not lose).
	nonEmpty atomic.Bool
	// boundsLost is set when a committed DeleteRange could not seek the
	// bound it moved (a failed table read): first and last are then not
	// known, and the next FirstIndex, LastIndex or DeleteRange seeks both
	// ends again, as Open does, before it answers (R2).
	boundsLost atomic.Bool

	reclaim reclaimer
	// closed is set by Close: FirstIndex and LastIndex, which read only
	// the cached bounds, then fail as the methods that reach the DB do.
	closed atomic.Bool
}

var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// Open opens (creating if needed) the store in dir with the DB options opts
// (nil for defaults). opts.DisableWAL is refused (kv.ErrInvalidOptions):
// without the WAL no write is durable on return, which R3 promises raft.
func Open(dir string, opts *kv.Options) (*Store, error) {
	if opts != nil && opts.DisableWAL {
		return nil, fmt.Errorf("raftstore: open %s: %w: DisableWAL would make no log write durable on return", dir, kv.ErrInvalidOptions)
	}
	db, err := kv.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("raftstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir}
	s.reclaim.db = db
	if err := s.recoverBounds(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// recoverBounds sets first and last from the two ends of the log range:
// one bounded seek each, however long the log (R2).
func (s *Store) recoverBounds() error {
	first, found, err := s.seekLogIndex(logRangeStart, logRangeEnd, false)
	if err != nil {
		return err
	}
	last, _, err := s.seekLogIndex(logRangeStart, logRangeEnd, true)
	if err != nil {
		return err
	}
	s.first.Store(first)
	s.last.Store(last)
	s.nonEmpty.Store(found)
	return nil
}

// seekLogIndex returns the first (or, with fromEnd, the last) index whose
// key is in [lower, upper); found is false (and index 0) when there is none.
func (s *Store) seekLogIndex(lower, upper []byte, fromEnd bool) (index uint64, found bool, err error) {
	it := s.db.NewIter(&kv.IterOptions{LowerBound: lower, UpperBound: upper})
	if fromEnd {
		found = it.Last()
	} else {
		found = it.First()
	}
	if found {
		var ok bool
		if index, ok = logKeyIndex(it.Key()); !ok {
			it.Close()
			return 0, false, fmt.Errorf("raftstore: %s: %w: malformed log key %x", s.dir, kv.ErrCorruption, it.Key())
		}
	}
	if err := it.Close(); err != nil {
		return 0, false, fmt.Errorf("raftstore: %s: seek the log: %w", s.dir, err)
	}
	return index, found, nil
}

// Close waits for a space reclamation in progress and closes the DB.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.reclaim.wait()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("raftstore: close %s: %w", s.dir, err)
	}
	return nil
}

// FirstIndex returns the smallest index stored, 0 for an empty log. It reads
// the cached bound (R2) and never touches the DB; after Close it returns
// kv.ErrClosed, as every other method does.
func (s *Store) FirstIndex() (uint64, error) { return s.cachedBound("first", &s.first) }

// LastIndex returns the largest index stored, 0 for an empty log (R2);
// kv.ErrClosed after Close.
func (s *Store) LastIndex() (uint64, error) { return s.cachedBound("last", &s.last) }

// cachedBound reads bound, or fails once the store is closed. Bounds a
// DeleteRange lost are sought first; if that seek fails too, its error is
// returned and the next call seeks again.
func (s *Store) cachedBound(name string, bound *atomic.Uint64) (uint64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("raftstore: %s index: %w", name, kv.ErrClosed)
	}
	if s.boundsLost.Load() {
		s.writeMu.Lock()
		err := s.findLostBoundsLocked()
		s.writeMu.Unlock()
		if err != nil {
			return 0, fmt.Errorf("raftstore: %s index: %w", name, err)
		}
	}
	return bound.Load(), nil
}

// findLostBoundsLocked seeks first and last again if a DeleteRange lost
// them. REQUIRES: s.writeMu.
func (s *Store) findLostBoundsLocked() error {
	if !s.boundsLost.Load() {
		return nil
	}
	if err := s.recoverBounds(); err != nil {
		return err
	}
	s.boundsLost.Store(false)
	return nil
}

// GetLog reads the entry at index into l, or returns raft.ErrLogNotFound.
func (s *Store) GetLog(index uint64, l *raft.Log) error {
	if l == nil {
		return fmt.Errorf("raftstore: get log %d: %w: nil *raft.Log", index, kv.ErrInvalidArgument)
	}
	v, err := s.db.Get(logKey(index))
	if errors.Is(err, kv.ErrNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return fmt.Errorf("raftstore: get log %d: %w", index, err)
	}
	return decodeLog(index, v, l)
}

// StoreLog stores one entry, durably when it returns (R3).
func (s *Store) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}

// StoreLogs stores entries in one synced batch (R3). Indexes need not be
// contiguous with those already stored: the cached bounds take the smallest
// and largest index present whatever the order.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	for i, l := range logs {
		if l == nil {
			// Checked before anything is written: the batch is all or none.
			return fmt.Errorf("raftstore: store logs: %w: entry %d of %d is nil", kv.ErrInvalidArgument, i, len(logs))
		}
	}
	b := s.db.NewBatch()
	var buf []byte
	lo, hi := logs[0].Index, logs[0].Index
	for _, l := range logs {
		buf = encodeLog(buf[:0], l)
		b.Set(logKey(l.Index), buf)
		lo, hi = min(lo, l.Index), max(hi, l.Index)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.db.Apply(b, kv.Sync); err != nil {
		return fmt.Errorf("raftstore: store logs %d-%d: %w", lo, hi, err)
	}
	if s.boundsLost.Load() {
		return nil // the seek that finds them will see these entries too
	}
	if !s.nonEmpty.Load() {
		s.first.Store(lo)
		s.last.Store(hi)
		s.nonEmpty.Store(true)
		return nil
	}
	s.first.Store(min(s.first.Load(), lo))
	s.last.Store(max(s.last.Load(), hi))
	return nil
}

// DeleteRange removes the entries with indexes in [lo, hi], durably when it
// returns (R3). It serves both raft's compaction of the log prefix after a
// snapshot and its truncation of a conflicting tail.
func (s *Store) DeleteRange(lo, hi uint64) error {
	if lo > hi {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.findLostBoundsLocked(); err != nil {
		return fmt.Errorf("raftstore: delete logs %d-%d: %w", lo, hi, err)
	}
	first, last := s.first.Load(), s.last.Load()
	if !s.nonEmpty.Load() || hi < first || lo > last {
		return nil
	}
	lo, hi = max(lo, first), min(hi, last)
	if err := deleteLogRange(s.db, lo, hi); err != nil {
		return fmt.Errorf("raftstore: delete logs %d-%d: %w", lo, hi, err)
	}
	// Keep R2: a bound inside the deleted range moves to the nearest entry
	// left outside it (the log may have gaps, so it is sought, not assumed).
	// This comes before the reclaimer's report, which may be an earlier
	// compaction's failure: the deletion is committed either way, and
	// bounds naming deleted entries would send raft to GetLog for them.
	// A seek that fails leaves the bounds lost, for the next bound read to
	// seek, and is not this call's failure: the deletion is committed,
	// and raft, told it failed, keeps the deleted entries as its last
	// ones and asks GetLog for them, which refuses every later append.
	var err error
	switch {
	case lo == first && hi == last:
		s.first.Store(0)
		s.last.Store(0)
		s.nonEmpty.Store(false)
	case lo == first:
		var next uint64
		if next, _, err = s.seekLogIndex(logKeyAfter(hi), logRangeEnd, false); err == nil {
			s.first.Store(next)
		}
	case hi == last:
		var prev uint64
		if prev, _, err = s.seekLogIndex(logRangeStart, logKey(lo), true); err == nil {
			s.last.Store(prev)
		}
	}
	if err != nil {
		s.boundsLost.Store(true)
	}
	if err := reclaimDeleted(&s.reclaim, lo, hi); err != nil {
		return fmt.Errorf("raftstore: delete logs %d-%d: %w", lo, hi, err)
	}
	return nil
}

// IsMonotonic tells raft to clear the whole log after installing or
// restoring a snapshot, rather than keep the entries below it and rely on
// the gap. The Store tolerates gaps either way; clearing costs one
// DeleteRange bounded by the cached first and last index, and leaves no
// stale entries below the snapshot to be reclaimed later.
func (s *Store) IsMonotonic() bool { return true }
