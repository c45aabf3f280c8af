package kv

import "github.com/sievekv/sievekv/internal/manifest"

// tombstoneEdit is one installed edit's changes to the tombstone index:
// the tombstones a flush added or a compaction dropped. Every commit takes
// DB.mu, so the index's work must not run under it: a flush's first batch
// of deletes after a load fills a new filter (62-80 CPU-ns per tombstone,
// 1-2 ms for one -quick flush), which held every writer for that long.
// The edit is begun under DB.mu, right after the version is installed,
// and applied once DB.mu is released:
//
//   - begin takes the index's mu while DB.mu is held, so edits reach the
//     index in the order they were installed (a growth's log replays
//     later edits onto an earlier version, and a remove must follow the
//     add of its tombstone), and a lookup, which takes mu, waits for the
//     edit's changes once begin has run (K7); a lock-free reader may load
//     the new version in the moment between its install and begin, both
//     under DB.mu, and the index's one reader there is ExplainGet's
//     diagnostic answer, which the delete-aware compaction does not use;
//   - apply runs the inserts and removes holding mu only, then releases
//     it. mu is never held while DB.mu is taken, so a later edit's begin,
//     which waits for mu holding DB.mu, cannot deadlock with it: it waits
//     only when two edits overlap.
type tombstoneEdit struct {
	ti             *tombstoneIndex
	v              *manifest.Version // the version the edit installed, referenced
	added, dropped []uint64
}

// testIndexEditPause, when set (tests only), is called by apply before
// it changes the index, so a test can hold an edit there.
var testIndexEditPause func()

// beginTombstoneEditLocked begins recording the tombstones an edit just
// installed added and dropped (key hashes), or returns nil when there is
// nothing to record. The caller must call apply on a non-nil edit, after
// releasing d.mu and before taking it again, and must not use the index
// meanwhile. REQUIRES: d.mu held, the edit installed (d.current is its
// version).
func (d *DB) beginTombstoneEditLocked(added, dropped []uint64) *tombstoneEdit {
	ti := &d.tombstones
	if !ti.on || len(added)+len(dropped) == 0 {
		return nil
	}
	v := d.current
	v.Ref()
	ti.mu.Lock()
	return &tombstoneEdit{ti: ti, v: v, added: added, dropped: dropped}
}

// apply records the edit in the index and releases its mu. A nil edit
// records nothing. REQUIRES: d.mu not held by this goroutine.
func (e *tombstoneEdit) apply() error {
	if e == nil {
		return nil
	}
	defer e.v.Unref()
	defer e.ti.mu.Unlock()
	if testIndexEditPause != nil {
		testIndexEditPause()
	}
	e.ti.removeAllLocked(e.dropped)
	return e.ti.addAllLocked(e.added, e.v)
}
