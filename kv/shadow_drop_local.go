package kv

import (
	"slices"

	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// When the tables above a compaction hold few entries against the values
// it rewrites, early drop asks a sorted set of their keys' hashes instead
// of the tombstone index. The case is kvbench's deleterandom at 1M keys:
// the phase's last flush leaves one L0 table of a few hundred tombstones
// spanning the whole key range while purge compactions rewrite L6 beneath
// it, so every value they write is inside that table's range and pays an
// index lookup (hundreds of thousands per compaction; 0.8% of the run's
// CPU, more than the index's inserts and removes together, for 404 values
// dropped; docs/design.md, "Early drop of shadowed values"). The index is
// an engine-wide cuckoo filter of ~1 MB there, so each lookup misses the
// cache; the set holds a few hundred hashes and stays in L1. Reading the
// above tables to build it costs at most one entry read per
// shadowLocalRatio values of the inputs.
//
// The set holds every point key of those tables (any kind, in the inputs'
// range), so it answers "may be above" for every key newerEntryAbove could
// find there, with no false negative for them and with false positives
// only on a 64-bit hash collision; like the index's answer it only chooses
// which values to look up, and the lookup alone decides a drop (K14).

// shadowLocalRatio: the above tables' entries times this at most the
// inputs' entries selects the local set. Tests set it to 0 to keep the
// index path (the set is then never chosen), or set testShadowLocalAlways
// to choose the set whenever the sizes are known.
var shadowLocalRatio uint64 = 32

var testShadowLocalAlways bool

// aboveKeyHashes returns the sorted, deduplicated hashes (filters.Hash) of
// the point keys in [lo, hi] of above, if those tables are small enough
// against inputs for a set of them to be cheaper than index lookups; ok is
// false otherwise, or if a table cannot be read (the index path then
// decides).
func (d *DB) aboveKeyHashes(above []*manifest.TableMetadata, inputs []levelTable, lo, hi []byte) (hs []uint64, ok bool) {
	if shadowLocalRatio == 0 {
		return nil, false
	}
	var aboveEntries, inputEntries uint64
	for _, t := range above {
		if t.Props == nil {
			return nil, false // size unknown
		}
		aboveEntries += t.Entries()
	}
	for _, in := range inputs {
		inputEntries += in.meta.Entries()
	}
	if aboveEntries*shadowLocalRatio > inputEntries && !testShadowLocalAlways {
		return nil, false
	}
	hs = make([]uint64, 0, aboveEntries)
	for _, t := range above {
		it, err := d.tables.newCompactionIter(t, nil, nil)
		if err != nil {
			return nil, false
		}
		for ok := it.SeekGE(base.MakeSearchKey(lo, base.SeqNumMax)); ok && base.CompareUserKeys(it.Key().UserKey, hi) <= 0; ok = it.Next() {
			hs = append(hs, filters.Hash(it.Key().UserKey))
		}
		if err := it.Close(); err != nil {
			return nil, false
		}
	}
	slices.Sort(hs)
	return slices.Compact(hs), true
}

// inLocalSet reports whether h is one of c.local's hashes.
func (c *shadowCheck) inLocalSet(h uint64) bool {
	_, found := slices.BinarySearch(c.local, h)
	return found
}
