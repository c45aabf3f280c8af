package kv

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/manifest"
)

// tombstoneIndex is the engine-wide cuckoo filter of the user keys whose
// tombstones live in tables. It is a multiset: a key deleted and re-created
// often has a tombstone in many tables (or several in one table, when
// snapshots keep them apart), and every one of them counts. A flush adds
// the tombstones it writes; a compaction removes the ones it drops (each a
// known member, so the cuckoo filter's removal hazard cannot strike). It is
// rebuilt from the tables on Open, and at a larger size when it fills.
//
// Duplicates. A bucket pair holds at most 8 copies of one fingerprint, so
// the filter cannot hold a key's every copy. It holds at most
// tombstoneIndexMaxCopies copies per alias class (the keys the filter
// cannot tell apart: same fingerprint, same bucket pair) and counts the
// rest in overflow. Adds fill the filter first and removes drain overflow
// first, so a class with n live tombstones has min(n, maxCopies) copies in
// the filter: at least one while n > 0, hence no false negative (keeps K7
// in kv/doc.go; docs/design.md, "The tombstone index").
//
// Growth never loops: a rebuild tries a bounded number of sizes and, if
// none fits, the index is saturated — it answers "may have" for every key,
// which is correct — until the next rebuild.
//
// Updates never make a writer wait. Commits take DB.mu, so the index's
// inserts and removes run after the flush or compaction has released it
// (tombstoneEdit): mu is taken while DB.mu still holds the installed
// edit, so the index sees the edits in the order they were installed and
// no lookup sees the new version without its tombstones, and mu is never
// held while DB.mu is taken. A rebuild reads every table holding
// tombstones (114 ms of a 1 s, 120k-delete phase, docs/design.md), so it
// runs in the background (rebuildInBackground). From the version of the
// edit whose add found the filter full until it installs its filter, the
// index answers "may have" for every key and logs the adds and removes of
// later edits, which it replays onto the filter built from that version:
// the result counts the tombstones of the version current at installation.
type tombstoneIndex struct {
	// on is set by Open before any flush or compaction runs and never
	// changes after, so it is read without mu.
	on bool
	mu sync.Mutex
	// applied is broadcast, on mu, when a queued edit has been applied
	// (tombstone_index_edit.go).
	applied *sync.Cond
	// queueMu guards queue, the edits begun and not yet applied, in the
	// order they were installed. A leaf lock: held for an append or a pop.
	queueMu sync.Mutex
	queue   []*tombstoneEdit
	// hashBufs holds spent *[]uint64 hash buffers of applied edits for the
	// next flush or compaction to fill (takeHashes), so collecting a
	// flush's tombstone hashes allocates nothing once warm.
	hashBufs sync.Pool
	f        *filters.Cuckoo // nil when disabled
	// overflow counts, per alias class of f, the tombstones beyond the
	// tombstoneIndexMaxCopies copies f holds; overflowTotal is their sum.
	overflow      map[uint64]uint32
	overflowTotal int
	// spill is AddHashes' scratch for the hashes bound for overflow.
	spill []uint64
	// saturated is set when no filter size fitted the tombstones; every
	// lookup then answers true.
	saturated bool
	// rebuild returns the key hash of every tombstone in the live tables,
	// one element per tombstone (Open's rebuild, which no writer can wait
	// on).
	rebuild func() ([]uint64, error)
	// grow starts a background rebuild of v's tombstones at a capacity;
	// REQUIRES: mu held, v the version of the edit being applied and
	// referenced by the caller. nil: grow in place with rebuild (an index
	// no DB drives, in tests).
	grow func(v *manifest.Version, capacity int)
	// rebuilding is set from a growth until its filter is installed;
	// pending holds, in order, the hashes of the tombstones edits added
	// (add) or dropped since the rebuild took its version.
	rebuilding bool
	pending    []pendingTombstone
	// fBytes is f's encoded size, computed when f is made (stats would
	// otherwise encode the whole filter on every Metrics call).
	fBytes int
	// peakEntries is the most tombstones the index has counted since
	// Open, and peakBytes its memory then: the filter shrinks only once
	// empty (shrinkIfEmptyLocked), so the peak is what its memory per
	// tombstone is judged by after compactions have dropped tombstones.
	peakEntries int
	peakBytes   uint64

	checks, negatives atomic.Uint64
	rebuilds          atomic.Uint64
	// growths counts the rebuilds a full filter started (Open's build is
	// not one).
	growths atomic.Uint64
	// rebuildNanos is the time rebuilds took, reading tables included.
	rebuildNanos atomic.Int64
	// updateNanos is the time flushes and compactions spent in
	// addAllLocked and removeAllLocked (fills from empty included,
	// background growths not), none of it under DB.mu: the
	// index's own cost on the delete path, which a whole-phase CPU ratio
	// on a shared machine cannot resolve (BenchmarkTombstoneIndexDeleteCPU).
	updateNanos atomic.Int64
}

const (
	// tombstoneIndexFPRate is the index's target false-positive rate: 0.4%
	// gives 12-bit fingerprints (ceil(log2(2*4/0.004)) = 11, rounded up).
	tombstoneIndexFPRate = 0.004
	// tombstoneIndexMaxCopies bounds the copies of one alias class in the
	// filter. Two leave six of a bucket pair's eight slots to other keys,
	// so repeated deletes of a key cost the filter no more load than a
	// second key would.
	tombstoneIndexMaxCopies = 2
	// tombstoneIndexMaxGrowths bounds the sizes a rebuild tries: each
	// doubles the last, so the final one has 64x room for the keys.
	tombstoneIndexMaxGrowths = 6
	// tombstoneIndexFirstFillRoom sizes the filter an empty index grows
	// to, in multiples of the flush's tombstones: a delete-heavy phase
	// brings as many with every flush, and each later growth reads every
	// table holding tombstones (at 1M keys in kvbench's deleterandom, the
	// growth left after a first fill of 5/4 the flush's tombstones cost
	// 160-200 B of garbage per delete, docs/design.md). Four flushes' room
	// skips it, for up to 4x the memory while fewer tombstones exist.
	tombstoneIndexFirstFillRoom = 4
	// tombstoneIndexPhaseShare is the share of a full memtable's worth of
	// tombstones (the edit's flushRoom) from which a first fill takes the
	// flush for the start of a delete phase and makes room for
	// tombstoneIndexFirstFillRoom full memtables of them rather than
	// multiples of the flush. A phase seldom starts with an empty
	// memtable: at 1M keys in kvbench, deleterandom's first flush held
	// 37,891 tombstones behind the previous workload's Sets and every
	// later one 74,899, so four times the first filled on the third
	// flush and the growth read the tree's tombstone tables (35-252 ms)
	// while the index answered "may have". A flush of a workload that
	// only mixes a few deletes into its writes stays below the share and
	// keeps the index sized by what it brings. The room is what four
	// times a flush already gave a full memtable of tombstones, so the
	// largest first fill is unchanged: 524k slots of 12 bits (768 KiB,
	// under a fifth of the memtable) at the default 4 MiB, whatever the
	// key length.
	tombstoneIndexPhaseShare = 4 // a quarter
	// overflowEntryBytes estimates the memory of one overflow entry: an
	// 8-byte key and 4-byte count in a Go map, with its bucket overhead.
	overflowEntryBytes = 24
)

// tombstoneIndexMinCapacity is the smallest filter the index makes: 1024
// tombstones cost 3 KiB. Tests lower it to make growths frequent.
var tombstoneIndexMinCapacity = 1024

func newTombstoneIndex(capacity int) (*filters.Cuckoo, error) {
	return filters.NewCuckoo(max(capacity, tombstoneIndexMinCapacity), tombstoneIndexFPRate)
}

// removeLocked forgets one tombstone of the key hashing to h, a member.
// REQUIRES: ti.mu.
func (ti *tombstoneIndex) removeLocked(h uint64) {
	a := ti.f.AliasHash(h)
	if n := ti.overflow[a]; n > 0 {
		if n == 1 {
			delete(ti.overflow, a)
		} else {
			ti.overflow[a] = n - 1
		}
		ti.overflowTotal--
		return
	}
	ti.f.RemoveHash(h)
}

// addAllLocked records the tombstones whose key hashes (filters.Hash) are
// hs. A full filter grows: in place when the index held no tombstone
// before hs (the version's tombstones are then exactly hs, so nothing
// needs reading: the first flush of deletes after a load), else in the
// background from v. flushRoom is how many tombstones like hs a full
// memtable holds (0 if unknown), for the first fill's size. REQUIRES: mu
// held, hs are the tombstones an edit added and v the version it
// installed (nil without a DB: grow is nil), every earlier edit applied
// (tombstoneEdit).
func (ti *tombstoneIndex) addAllLocked(hs []uint64, v *manifest.Version, flushRoom int) error {
	if ti.f == nil || ti.saturated || len(hs) == 0 {
		return nil
	}
	defer ti.noteUpdateTime(time.Now())
	if ti.rebuilding {
		for _, h := range hs {
			ti.pending = append(ti.pending, pendingTombstone{h: h, add: true})
		}
		return nil
	}
	defer ti.notePeakLocked()
	wasEmpty := ti.f.Len()+ti.overflowTotal == 0
	if wasEmpty && tombstoneIndexFirstFillRoom*firstFillBatch(len(hs), flushRoom) > ti.f.Cap() {
		// Less room than the next flushes will want: fill a filter of
		// that room now, from hs alone, before a later flush finds the
		// filter full when growing needs a read of the tables.
		return ti.firstFillLocked(hs, flushRoom)
	}
	spill, _, err := ti.f.AddHashes(hs, tombstoneIndexMaxCopies, ti.spill[:0])
	ti.spillLocked(spill)
	if err != nil {
		if !errors.Is(err, filters.ErrFull) {
			return err
		}
		// The failed add may have left part of hs in the filter and
		// counted spills in overflow: harmless, since both are
		// replaced by a larger filter holding every tombstone.
		if wasEmpty {
			return ti.firstFillLocked(hs, flushRoom)
		}
		// The rebuild reads every tombstone from the tables, which
		// the caller's edit has already made current, so hs are
		// among them. Twice the slots as the key count:
		// NewCuckoo's rounding to a power of two at 95% load makes
		// that four times the slots, so growths are rare (each reads
		// every tombstone table) at the price of a load of 24-95%
		// (docs/design.md, "The tombstone index").
		ti.growths.Add(1)
		if ti.grow == nil {
			return ti.rebuildLocked(2 * ti.f.Cap())
		}
		ti.rebuilding, ti.pending = true, nil
		ti.grow(v, 2*ti.f.Cap())
		return nil
	}
	return nil
}

// firstFillLocked replaces the filter of an index that held no tombstone
// with one holding hs, the version's every tombstone, with room for
// tombstoneIndexFirstFillRoom such batches, or as many full memtables of
// them (flushRoom tombstones each) when hs fill at least
// 1/tombstoneIndexPhaseShare of one. REQUIRES: ti.mu.
func (ti *tombstoneIndex) firstFillLocked(hs []uint64, flushRoom int) error {
	return ti.fillLocked(hs, max(2*ti.f.Cap(), tombstoneIndexFirstFillRoom*firstFillBatch(len(hs), flushRoom)))
}

// firstFillBatch is the tombstones the flushes after a first fill of n
// are expected to bring each: n, or flushRoom when n fill at least
// 1/tombstoneIndexPhaseShare of a memtable.
func firstFillBatch(n, flushRoom int) int {
	if n*tombstoneIndexPhaseShare >= flushRoom {
		return max(n, flushRoom)
	}
	return n
}

// spillLocked counts in overflow the hashes AddHashes spilled: their
// alias classes hold tombstoneIndexMaxCopies copies already. REQUIRES:
// ti.mu.
func (ti *tombstoneIndex) spillLocked(spill []uint64) {
	for _, h := range spill {
		if ti.overflow == nil {
			ti.overflow = make(map[uint64]uint32)
		}
		ti.overflow[ti.f.AliasHash(h)]++
		ti.overflowTotal++
	}
	ti.spill = spill[:0]
}

// removeAllLocked forgets one tombstone per element of hs, the key hashes
// of tombstones a compaction dropped: each is a member. REQUIRES: mu held,
// every earlier edit applied (tombstoneEdit).
func (ti *tombstoneIndex) removeAllLocked(hs []uint64) {
	if ti.f == nil || ti.saturated || len(hs) == 0 {
		return
	}
	defer ti.noteUpdateTime(time.Now())
	defer ti.shrinkIfEmptyLocked()
	if !ti.rebuilding && ti.overflowTotal == 0 {
		// No class has a tombstone beyond its filter copies (removes only
		// shrink overflow), so every remove is the filter's.
		ti.f.RemoveHashes(hs)
		return
	}
	for _, h := range hs {
		if ti.rebuilding {
			ti.pending = append(ti.pending, pendingTombstone{h: h})
			continue
		}
		ti.removeLocked(h)
	}
}

// tombstoneIndexKeptSlots is the most slots an index left with no
// tombstone keeps: 4096 slots, 6 KiB.
const tombstoneIndexKeptSlots = 4096

// shrinkIfEmptyLocked gives back the memory of a filter that compactions
// have emptied: a delete phase sizes it for several memtables of
// tombstones (768 KiB at the default memtable, 192 MiB at the largest),
// and once purges have taken them all to the bottom nothing needs it. The
// next flush of deletes fills a filter of its own size from an empty index
// again, in place, reading no table (addAllLocked). A growth logs the
// removes instead, and installs a minimum-size filter itself when they
// leave none (finishGrowth). REQUIRES: ti.mu.
func (ti *tombstoneIndex) shrinkIfEmptyLocked() {
	if ti.rebuilding || ti.f.Len()+ti.overflowTotal != 0 || ti.f.Cap() <= tombstoneIndexKeptSlots {
		return
	}
	f, err := newTombstoneIndex(tombstoneIndexMinCapacity)
	if err != nil {
		return // the empty filter it would replace answers as well
	}
	ti.f, ti.fBytes, ti.overflow = f, f.EncodedLen(), nil
}

func (ti *tombstoneIndex) noteUpdateTime(began time.Time) {
	ti.updateNanos.Add(int64(time.Since(began)))
}

// collectHashes returns a callback appending the hash of each key it sees
// to dst, or nil when the index is disabled (nothing to collect).
func (ti *tombstoneIndex) collectHashes(dst *[]uint64) func([]byte) {
	if !ti.on {
		return nil
	}
	return func(k []byte) { *dst = append(*dst, filters.Hash(k)) }
}

// takeHashes returns an empty hash buffer for a flush or a compaction to
// collect tombstone hashes in: a spent one when there is one (nil with the
// index off, which collects none).
func (ti *tombstoneIndex) takeHashes() []uint64 {
	if !ti.on {
		return nil
	}
	if p, ok := ti.hashBufs.Get().(*[]uint64); ok {
		return (*p)[:0]
	}
	return nil
}

// recycleHashes keeps hs, an applied edit's hashes, for takeHashes.
func (ti *tombstoneIndex) recycleHashes(hs []uint64) {
	if cap(hs) > 0 {
		ti.hashBufs.Put(&hs)
	}
}

// rebuildLocked builds the index anew from the tables' tombstones (Open,
// and growth of an index without grow). REQUIRES: ti.mu.
func (ti *tombstoneIndex) rebuildLocked(capacity int) error {
	began := time.Now()
	defer func() { ti.rebuildNanos.Add(int64(time.Since(began))) }()
	hs, err := ti.rebuild()
	if err != nil {
		return err
	}
	ti.rebuilds.Add(1)
	return ti.fillLocked(hs, capacity)
}

// fillLocked replaces the filter with one holding hs, trying at most
// tombstoneIndexMaxGrowths+1 sizes. REQUIRES: ti.mu.
func (ti *tombstoneIndex) fillLocked(hs []uint64, capacity int) error {
	// Room for the keys at 80% load, so the next flushes fit before the
	// next growth; NewCuckoo rounds the buckets up to a power of two.
	capacity = max(capacity, len(hs)*5/4)
	for try := 0; try <= tombstoneIndexMaxGrowths; try++ {
		f, err := newTombstoneIndex(capacity)
		if err != nil {
			return err
		}
		ti.f, ti.overflow, ti.overflowTotal, ti.saturated = f, nil, 0, false
		ti.fBytes = f.EncodedLen()
		spill, _, err := f.AddHashes(hs, tombstoneIndexMaxCopies, ti.spill[:0])
		ti.spillLocked(spill)
		if err == nil {
			ti.notePeakLocked()
			return nil
		}
		capacity *= 2
	}
	// With at most two copies per alias class the keys fit at a load far
	// below the cuckoo filter's 95%, so this is only reached if the hash
	// concentrates keys pathologically. Saturation stays correct.
	ti.overflow, ti.overflowTotal, ti.saturated = nil, 0, true
	return nil
}

// mayHaveTombstone reports whether some table may hold a tombstone for
// userKey (false is definite).
func (ti *tombstoneIndex) mayHaveTombstone(userKey []byte) bool {
	ti.lockApplied()
	defer ti.mu.Unlock()
	if ti.f == nil || ti.saturated || ti.rebuilding {
		return true
	}
	ti.checks.Add(1)
	ok := ti.f.MayContainHash(filters.Hash(userKey))
	if !ok {
		ti.negatives.Add(1)
	}
	return ok
}

// stats reports the tombstones indexed (filter copies plus overflow) and
// the index's memory: the filter's encoded size plus an estimate of the
// overflow map's and of a growth's log. While a growth runs, entries are
// those of the filter it replaces plus the net logged changes (the
// tombstones it has not yet read are unknown).
func (ti *tombstoneIndex) stats() (entries int, bytes uint64) {
	ti.lockApplied()
	defer ti.mu.Unlock()
	if ti.f == nil {
		return 0, 0
	}
	entries = ti.f.Len() + ti.overflowTotal
	for _, p := range ti.pending {
		if p.add {
			entries++
		} else {
			entries--
		}
	}
	return max(entries, 0), ti.bytesLocked() + uint64(cap(ti.pending)*16)
}

// bytesLocked is the memory of the filter and the overflow map.
// REQUIRES: ti.mu.
func (ti *tombstoneIndex) bytesLocked() uint64 {
	return uint64(ti.fBytes + len(ti.overflow)*overflowEntryBytes)
}

// notePeakLocked records the index's size if it counts more tombstones
// than ever before. REQUIRES: ti.mu.
func (ti *tombstoneIndex) notePeakLocked() {
	if ti.f == nil || ti.saturated || ti.rebuilding {
		return
	}
	if n := ti.f.Len() + ti.overflowTotal; n > ti.peakEntries {
		ti.peakEntries, ti.peakBytes = n, ti.bytesLocked()
	}
}

// peak reports the most tombstones counted since Open and the index's
// memory at that moment.
func (ti *tombstoneIndex) peak() (entries int, bytes uint64) {
	ti.lockApplied()
	defer ti.mu.Unlock()
	return ti.peakEntries, ti.peakBytes
}

// maxTombstoneHashesHint bounds tombstoneHashes' up-front allocation to
// 8 MiB of hashes; a larger tree grows the slice as it reads.
const maxTombstoneHashesHint = 1 << 20

// tombstoneHashes returns the key hash (filters.Hash) of every point
// tombstone of v's tables, for a rebuild, which needs nothing else of
// them. Tables whose properties record no deletions are skipped unread.
// The same pass gives every table it reads that has no shadowed-bytes
// estimate yet (tables found by Open) its delete-aware figures, so
// delete-aware compaction needs no read of its own after a restart
// (delete_aware.go); only those tables' keys are copied, for the estimate.
// A growth reads every tombstone table of the tree while the flushes that
// filled the index go on, so it hashes each key where the iterator holds
// it: copying each key into a slice of keys first made about 340 B of
// garbage per tombstone read (16-byte keys; 35 B now: the hash and the
// blocks read), which at 1M keys in kvbench's deleterandom showed as the
// index engine's extra ~200 B allocated per delete, collected while the
// deletes ran.
func (d *DB) tombstoneHashes(v *manifest.Version) ([]uint64, error) {
	// The properties' counts size the slice, up to a bound: they are only
	// a hint (append grows past it), and a checksummed but hostile count
	// must not make the allocation panic or exhaust memory.
	var n uint64
	for _, ts := range v.Levels {
		for _, t := range ts {
			if t.Props != nil {
				n += t.Props.NumDeletions
			}
		}
	}
	hs := make([]uint64, 0, min(n, maxTombstoneHashesHint))
	for l, ts := range v.Levels {
		for _, t := range ts {
			if d.isClosed() {
				return nil, ErrClosed
			}
			_, known := t.ShadowedBytes()
			if t.Props != nil && t.Props.NumDeletions == 0 {
				// No point tombstone to index; range tombstones still
				// need their delete-aware figures, from resident data.
				if !known && tableHasRangeDels(t) {
					d.estimateFound(v, l, t, nil)
				}
				continue
			}
			if known {
				err := d.eachTombstone(t, func(k []byte) { hs = append(hs, filters.Hash(k)) })
				if err != nil {
					return nil, err
				}
				continue
			}
			tk, err := d.tableTombstones(t)
			if err != nil {
				return nil, err
			}
			d.estimateFound(v, l, t, tk)
			for _, k := range tk {
				hs = append(hs, filters.Hash(k))
			}
		}
	}
	return hs, nil
}
