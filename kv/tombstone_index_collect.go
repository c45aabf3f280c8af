package kv

import (
	"bytes"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/manifest"
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

// keys returns the collected user keys in the order written (sorted, as
// the tables are). They alias the collector's buffer.
func (c *tombstoneCollector) keys() [][]byte {
	if c == nil || len(c.ends) == 0 {
		return nil
	}
	ks := make([][]byte, len(c.ends))
	start := 0
	for i, end := range c.ends {
		ks[i] = c.buf[start:end:end]
		start = end
	}
	return ks
}
