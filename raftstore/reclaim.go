package raftstore

import (
	"fmt"
	"sync"

	"github.com/sievekv/sievekv/kv"
)

// deleteLogRange deletes the log entries in [lo, hi] with one synced range
// tombstone, O(1) however long the range. The tombstone hides the entries
// at once; the compaction reclaimDeleted later starts drops them from the
// tables.
func deleteLogRange(db *kv.DB, lo, hi uint64) error {
	return db.DeleteRange(logKey(lo), logKeyAfter(hi), kv.Sync)
}

// reclaimDeleted has r reclaim the space of the entries in [lo, hi], which
// deleteLogRange deleted.
func reclaimDeleted(r *reclaimer, lo, hi uint64) error {
	return r.deleted(int(min(hi-lo+1, reclaimDeletedEntries)), hi)
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
	closed  bool   // wait has begun: start no more compactions (mu)
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
	if r.pending < reclaimDeletedEntries || r.running || r.closed {
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

// wait returns once no compaction is in flight, and stops deleted from
// starting another: a DeleteRange racing Store.Close must not Add to the
// WaitGroup while Close waits on it (nor compact a DB about to close).
func (r *reclaimer) wait() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.done.Wait()
}
