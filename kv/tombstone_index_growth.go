package kv

import (
	"errors"
	"time"

	"github.com/sievekv/sievekv/internal/manifest"
)

// Growth of the tombstone index in the background (tombstone_index.go):
// the flush whose tombstones find the filter full starts
// rebuildInBackground from the version it installed; until finishGrowth
// installs the new filter, the index answers "may have" and logs every add
// and remove of later edits (K7 in kv/doc.go).

// pendingTombstone is one logged change of a rebuild in progress.
type pendingTombstone struct {
	h   uint64
	add bool
}

// testRebuildPause, when set (tests only), is called by a background
// rebuild before it reads the tables, so a test can hold it there.
var testRebuildPause func()

// finishGrowth installs a background rebuild's result: hs, the tombstones
// of the version it read, plus the adds and minus the removes logged
// since. A failed read leaves the index saturated (correct, K7) until the
// next Open. It reports the error for the caller to log.
func (ti *tombstoneIndex) finishGrowth(hs []uint64, readErr error, capacity int) error {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.rebuilds.Add(1)
	pending := ti.pending
	ti.rebuilding, ti.pending = false, nil
	if readErr != nil {
		ti.overflow, ti.overflowTotal, ti.saturated = nil, 0, true
		return readErr
	}
	// Every remove is of a member: a tombstone of the version read or a
	// later add. Multiset arithmetic on the hashes gives the tombstones of
	// the current version.
	removed := map[uint64]int{}
	for _, p := range pending {
		if p.add {
			hs = append(hs, p.h)
		} else {
			removed[p.h]++
		}
	}
	if len(removed) > 0 {
		kept := hs[:0]
		for _, h := range hs {
			if removed[h] > 0 {
				removed[h]--
				continue
			}
			kept = append(kept, h)
		}
		hs = kept
	}
	if len(hs) == 0 {
		// Compactions dropped every tombstone while it read: their
		// removes were logged, so shrinkIfEmptyLocked did not run, and no
		// remove is left to run it. The growth's capacity (four times
		// the full filter's slots) would stay, empty, until later
		// tombstones were added and all dropped again.
		capacity = tombstoneIndexMinCapacity
	}
	return ti.fillLocked(hs, capacity)
}

// openIndexInlineBytes is the most table bytes Open reads to build the
// tombstone index before it returns: a few milliseconds of reading, for
// an index that answers from the start. Larger trees build it in the
// background (startBuilding). Tests set it to 0 to build every index in
// the background.
var openIndexInlineBytes uint64 = 4 << 20

// tombstoneTableBytes is the size of v's tables that may hold point
// tombstones: what a rebuild of the index reads.
func tombstoneTableBytes(v *manifest.Version) uint64 {
	var n uint64
	for _, ts := range v.Levels {
		for _, t := range ts {
			if t.Props == nil || t.Props.NumDeletions > 0 {
				n += t.Size
			}
		}
	}
	return n
}

// startBuilding makes an index that answers "may have" for every key and
// logs the adds and removes of edits until the first background rebuild
// (Open's, started by the caller with rebuildInBackground) installs the
// tables' tombstones. Open once read them before returning, which made
// its time grow with the data.
func (ti *tombstoneIndex) startBuilding() error {
	f, err := newTombstoneIndex(tombstoneIndexMinCapacity)
	if err != nil {
		return err
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.f, ti.fBytes = f, f.EncodedLen()
	ti.rebuilding, ti.pending = true, nil
	return nil
}

// rebuildInBackground is the index's grow, and Open's build: it reads v's
// tombstones in a goroutine the DB's Close waits for (and stops: the read
// ends with ErrClosed once Close has begun). REQUIRES: d.tombstones.mu
// held, v the version of the edit being applied, referenced by the
// caller, or Open's version before Open returns. Only an
// edit that adds tombstones grows the index, and only a flush's edits add;
// the goroutine a flush applies its edit in is counted by d.bg and ends
// only once that edit is applied, by itself or by whichever goroutine
// applies the queue (a manual Compact's included), so d.bg is above zero
// here and Close has not passed its wait.
func (d *DB) rebuildInBackground(v *manifest.Version, capacity int) {
	v.Ref()
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		defer v.Unref()
		if testRebuildPause != nil {
			testRebuildPause()
		}
		began := time.Now()
		hs, err := d.tombstoneHashes(v)
		err = d.tombstones.finishGrowth(hs, err, capacity)
		d.tombstones.rebuildNanos.Add(int64(time.Since(began)))
		if err != nil && !errors.Is(err, ErrClosed) {
			d.opts.Logger("kv: tombstone index rebuild failed, answering \"may have\" until the next Open: %v", err)
		}
	}()
}

// isRebuilding reports whether a rebuild, a growth or the build Open
// started, is reading the tables: the index then answers "may have" for
// every key.
func (ti *tombstoneIndex) isRebuilding() bool {
	ti.lockApplied() // a queued edit may start one
	defer ti.mu.Unlock()
	return ti.rebuilding
}
