package raftstore

import (
	"fmt"
	"sync"

	"github.com/sievekv/sievekv/kv"
)

// deleteLogRange deletes the log entries in [lo, hi] in one synced batch of
// point deletes over an iterator of the range, then has r reclaim the space.
//
// kv has no range deletion yet; when it gains one (a range tombstone), this
// function becomes one such write and the reclaimer is no longer needed.
func deleteLogRange(db *kv.DB, lo, hi uint64, r *reclaimer) error {
	it := db.NewIter(&kv.IterOptions{LowerBound: logKey(lo), UpperBound: logKeyAfter(hi)})
	b := db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		b.Delete(it.Key())
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := db.Apply(b, kv.Sync); err != nil {
		return err
	}
	return r.deleted(b.Count(), hi)
}

// reclaimDeletedEntries is how many deleted log entries accumulate before a
// compaction of the log range below them drops their tombstones. raft
// deletes its log prefix after each snapshot (8192 entries apart with its
// default SnapshotThreshold), so this compacts about once per snapshot and
// never on the small tail truncations of a conflict.
const reclaimDeletedEntries = 4096

// reclaimer compacts the deleted part of the log in the background, one
// compaction at a time, so the tombstones of deleted entries do not slow
// the seeks of FirstIndex's recovery or take space forever. A compaction's
// failure is remembered and returned by the next DeleteRange (kv's own
// background-failure rule makes the DB read-only in that case anyway).
type reclaimer struct {
	db *kv.DB

	mu      sync.Mutex
	pending int    // entries deleted since the last compaction started (mu)
	upTo    uint64 // largest index deleted so far (mu)
	running bool   // a compaction is in flight (mu)
	err     error  // the last compaction's failure, reported once (mu)
	done    sync.WaitGroup
}

// deleted records n entries deleted at indexes <= hi and starts a
// compaction of the log range up to the largest deleted index once enough
// have accumulated.
func (r *reclaimer) deleted(n int, hi uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.err; err != nil {
		r.err = nil
		return fmt.Errorf("reclaiming deleted log space: %w", err)
	}
	r.pending += n
	r.upTo = max(r.upTo, hi)
	if r.pending < reclaimDeletedEntries || r.running {
		return nil
	}
	r.pending, r.running = 0, true
	end := logKey(r.upTo)
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		err := r.db.Compact(logRangeStart, end)
		r.mu.Lock()
		r.running = false
		if err != nil && r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}()
	return nil
}

// wait returns once no compaction is in flight.
func (r *reclaimer) wait() { r.done.Wait() }
