package kv

import (
	"github.com/sievekv/sievekv/filters"
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
type tombstoneCollector struct {
	// wantHashes: the caller adds the tombstones to the index.
	wantHashes bool
	buf        []byte
	ends       []int
	hashes     []uint64
}

// add records the tombstone for userKey that w has just been given.
func (c *tombstoneCollector) add(userKey []byte, w *sstable.Writer) {
	c.buf = append(c.buf, userKey...)
	c.ends = append(c.ends, len(c.buf))
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
