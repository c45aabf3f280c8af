package kv

import (
	"bytes"
	"slices"
	"sync"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/memtable"
	"github.com/sievekv/sievekv/sstable"
)

// tombstoneCollector gathers the point tombstones a flush or a compaction
// writes: their user keys, for the delete-aware figures (noteTombstones),
// and, for a flush with the tombstone index on, their hashes for addAll.
// The hashes come from the table writer, which hashes every user key for
// its filter anyway (sstable.Writer.LastUserKeyHash), so the index costs
// no second xxhash per tombstone; only a table built without a filter
// leaves the collector to hash the key itself. The keys are packed into
// one buffer rather than copied one allocation each.
//
// It also keeps each tombstone's shadowed-bytes estimate when the
// elision check (elider) has just made it: both ask the same filters of
// the same tables below about the same key, so the tables' figures
// (noteTombstones) need not probe them a second time.
type tombstoneCollector struct {
	// wantHashes: the caller adds the tombstones to the index.
	wantHashes bool
	buf        []byte
	ends       []int
	hashes     []uint64
	// shadowed is each key's estimate, unknownShadowed where no elision
	// check probed it (a tombstone a snapshot keeps, or a manual
	// compaction's, which elides without probing).
	shadowed []uint64
	// probedKey and probedShadowed are the elider's last probe, until
	// add takes it or a probe of another key replaces it.
	probedKey      []byte
	probedShadowed uint64
	probed         bool
	// expect is how many tombstones reserve was told to expect in all.
	expect int
}

// unknownShadowed marks a collected tombstone whose estimate is not known.
const unknownShadowed = ^uint64(0)

// elider returns the elision check (compaction's C2) for tombstones
// written above level from of v: a tombstone may go when no table there
// may hold its key. It probes every table spanning the key rather than
// stopping at the first that may hold it, and keeps the estimate of the
// bytes those shadow for add, since a kept tombstone's estimate needs
// exactly those probes.
func (c *tombstoneCollector) elider(d *DB, v *manifest.Version, from int) func(userKey []byte) bool {
	return func(userKey []byte) bool {
		shadowed, mayHold := d.probeBelow(v, from, userKey)
		c.probedKey = append(c.probedKey[:0], userKey...)
		c.probedShadowed, c.probed = shadowed, true
		return !mayHold
	}
}

// add records the tombstone for userKey that w has just been given.
func (c *tombstoneCollector) add(userKey []byte, w *sstable.Writer) {
	if len(c.buf)+len(userKey) > cap(c.buf) {
		c.growKeys(userKey)
	}
	c.buf = append(c.buf, userKey...)
	c.ends = append(c.ends, len(c.buf))
	shadowed := uint64(unknownShadowed)
	if c.probed && bytes.Equal(c.probedKey, userKey) {
		shadowed = c.probedShadowed
	}
	c.probed = false
	c.shadowed = append(c.shadowed, shadowed)
	if !c.wantHashes {
		return
	}
	h, ok := w.LastUserKeyHash()
	if !ok {
		h = filters.Hash(userKey)
	}
	c.hashes = append(c.hashes, h)
}

// len is how many tombstones c collected.
func (c *tombstoneCollector) len() int { return len(c.ends) }

// fullMemTable estimates how many tombstones of the collected keys' mean
// length a memtable of memTableSize bytes holds: memtables rotate on
// LogicalSize, which charges a tombstone its key and
// memtable.LogicalEntryOverhead. 0 when c holds none.
func (c *tombstoneCollector) fullMemTable(memTableSize int) int {
	if c.len() == 0 {
		return 0
	}
	perTombstone := len(c.buf)/c.len() + memtable.LogicalEntryOverhead
	return memTableSize / perTombstone
}

// key is the i'th collected user key, in the order written (sorted, as the
// tables are). It aliases c's buffer: valid until release.
func (c *tombstoneCollector) key(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.buf[start:c.ends[i]:c.ends[i]]
}

// tombstoneCollectorPool keeps collectors' buffers from one flush or
// compaction to the next: made fresh, their growth was half of what a
// delete-heavy phase allocated (each tombstone is collected again by every
// compaction that carries it down a level).
var tombstoneCollectorPool = sync.Pool{New: func() any { return new(tombstoneCollector) }}

// maxPooledCollectorKeys bounds the collectors the pool keeps: one that
// held a huge compaction's keys is left to the collector instead.
const maxPooledCollectorKeys = 1 << 20

// newTombstoneCollector returns an empty collector from the pool that
// gathers hashes into hashes (appending) when wantHashes.
func newTombstoneCollector(wantHashes bool, hashes []uint64) *tombstoneCollector {
	c := tombstoneCollectorPool.Get().(*tombstoneCollector)
	c.wantHashes, c.hashes = wantHashes, hashes
	return c
}

// reserve sizes c for up to n more tombstones, so that a collector the
// pool hands out too small grows once rather than by doubling. The keys'
// buffer grows at the first key that overflows it, by that key's length
// for every tombstone still expected (growKeys).
func (c *tombstoneCollector) reserve(n int) {
	c.expect = len(c.ends) + n
	c.ends = slices.Grow(c.ends, n)
	c.shadowed = slices.Grow(c.shadowed, n)
	if c.wantHashes {
		c.hashes = slices.Grow(c.hashes, n)
	}
}

// growKeys makes room in buf for userKey and, estimated from its length,
// the keys still expected; at least doubling, so keys longer than the
// estimate still cost amortized O(1) copies.
func (c *tombstoneCollector) growKeys(userKey []byte) {
	need := max(c.expect-len(c.ends), 1) * len(userKey)
	c.buf = slices.Grow(c.buf, max(need, cap(c.buf)))
}

// release returns c to the pool once its keys and estimates are used. The
// hashes are not c's to keep: the caller has handed them to the index.
func (c *tombstoneCollector) release() {
	if len(c.ends) > maxPooledCollectorKeys {
		return
	}
	*c = tombstoneCollector{buf: c.buf[:0], ends: c.ends[:0], shadowed: c.shadowed[:0], probedKey: c.probedKey[:0]}
	tombstoneCollectorPool.Put(c)
}
