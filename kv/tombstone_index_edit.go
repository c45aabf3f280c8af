package kv

import (
	"sync"

	"github.com/sievekv/sievekv/internal/manifest"
)

// tombstoneEdit is one installed edit's changes to the tombstone index:
// the tombstones a flush added or a compaction dropped. Every commit takes
// DB.mu, so none of the index's work may run under it, nor any wait for
// that work: a flush's first batch of deletes after a load fills a new
// filter (1-2 ms for one -quick flush), and a compaction at the bottom
// level may drop tens of thousands of tombstones. The edit is begun under
// DB.mu, right after the version is installed, and applied once DB.mu is
// released:
//
//   - begin appends the edit to the index's queue, under queueMu, a leaf
//     lock held only for the append or a pop, so begin never waits for an
//     edit being applied; the queue holds the edits in the order they were
//     installed (a growth's log replays later edits onto an earlier
//     version, and a remove must follow the add of its tombstone);
//   - apply takes the index's mu and applies queued edits from the head, in
//     order, until its own is done (an earlier edit whose goroutine has not
//     reached apply yet is applied here, and that goroutine then finds its
//     edit done);
//   - a lookup takes mu and waits (on applied) until the queue is empty, so
//     once begin has run no lookup misses the edit's changes (K7); a
//     lock-free reader may load the new version in the moment between its
//     install and begin, both under DB.mu, and the index's one reader
//     there is ExplainGet's diagnostic answer, which the delete-aware
//     compaction does not use.
//
// mu is never held while DB.mu is taken, and a goroutine holding mu takes
// only queueMu, so no lock order can deadlock: a lookup's wait ends when
// the goroutines of the queued edits, which need neither lock held by the
// lookup's caller, apply them.
type tombstoneEdit struct {
	ti             *tombstoneIndex
	v              *manifest.Version // the version the edit installed, referenced until applied
	added, dropped []uint64
	// flushRoom is, for a flush's edit, how many tombstones like the ones
	// it added a full memtable holds (addAllLocked); 0 for a compaction's.
	flushRoom int
	// done and err are set, under ti.mu, by the apply that applied the
	// edit (its own or a later edit's).
	done bool
	err  error
}

// testIndexEditPause, when set (tests only), is called by apply before
// it changes the index, so a test can hold an edit there.
var testIndexEditPause func()

// beginTombstoneEditLocked queues the index's changes from an edit just
// installed: the tombstones it added and dropped (key hashes), and for a
// flush, flushRoom (tombstoneEdit). It returns
// nil when there is nothing to record. The caller must call apply on a
// non-nil edit, after releasing d.mu and before taking it again, and must
// not use the index meanwhile. REQUIRES: d.mu held, the edit installed
// (d.current is its version).
func (d *DB) beginTombstoneEditLocked(added, dropped []uint64, flushRoom int) *tombstoneEdit {
	ti := &d.tombstones
	if !ti.on || len(added)+len(dropped) == 0 {
		ti.recycleHashes(added)
		ti.recycleHashes(dropped)
		return nil
	}
	v := d.current
	v.Ref()
	e := &tombstoneEdit{ti: ti, v: v, added: added, dropped: dropped, flushRoom: flushRoom}
	ti.queueMu.Lock()
	ti.queue = append(ti.queue, e)
	ti.queueMu.Unlock()
	return e
}

// apply records the edit in the index, with every edit queued before it,
// and reports the edit's error. A nil edit records nothing. REQUIRES: d.mu
// not held by this goroutine.
func (e *tombstoneEdit) apply() error {
	if e == nil {
		return nil
	}
	ti := e.ti
	ti.mu.Lock()
	defer ti.mu.Unlock()
	for !e.done {
		ti.applyHeadLocked()
	}
	return e.err
}

// applyHeadLocked applies the edit at the head of the queue and wakes the
// lookups waiting for the queue to drain. REQUIRES: ti.mu held, the queue
// not empty.
func (ti *tombstoneIndex) applyHeadLocked() {
	ti.queueMu.Lock()
	head := ti.queue[0]
	ti.queue[0] = nil
	ti.queue = ti.queue[1:]
	ti.queueMu.Unlock()
	if testIndexEditPause != nil {
		testIndexEditPause()
	}
	ti.removeAllLocked(head.dropped)
	head.err = ti.addAllLocked(head.added, head.v, head.flushRoom)
	head.done = true
	head.v.Unref()
	ti.recycleHashes(head.added)
	ti.recycleHashes(head.dropped)
	ti.appliedCond().Broadcast()
}

// queuedLocked reports whether an edit is begun but not yet applied.
// REQUIRES: ti.mu held.
func (ti *tombstoneIndex) queuedLocked() bool {
	ti.queueMu.Lock()
	defer ti.queueMu.Unlock()
	return len(ti.queue) > 0
}

// lockApplied takes mu once every begun edit is applied (K7: a lookup sees
// every installed edit's changes). The caller unlocks mu.
func (ti *tombstoneIndex) lockApplied() {
	ti.mu.Lock()
	for ti.queuedLocked() {
		ti.appliedCond().Wait()
	}
}

// appliedCond is the condition variable on mu that applyHeadLocked
// broadcasts, made on first use. REQUIRES: ti.mu held.
func (ti *tombstoneIndex) appliedCond() *sync.Cond {
	if ti.applied == nil {
		ti.applied = sync.NewCond(&ti.mu)
	}
	return ti.applied
}

// applyTombstoneEditInBackground applies e (if not nil) in a goroutine
// Close waits for, and makes a failure the DB's background error. The
// flush loop uses it so that its next memtable never waits for the index.
// REQUIRES: called from a goroutine d.bg counts (so Close has not passed
// its wait), the edit begun and not applied.
func (d *DB) applyTombstoneEditInBackground(e *tombstoneEdit) {
	if e == nil {
		return
	}
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		if err := e.apply(); err != nil {
			d.mu.Lock()
			d.setBackgroundErrorLocked("kv: background flush: tombstone index", err)
			d.mu.Unlock()
		}
	}()
}
