package kv

import (
	"slices"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
)

// compactionRangeDels is what a compaction does with the range tombstones
// of its inputs: it drops every point entry a tombstone deletes for every
// read that can still happen, and carries the tombstones into the outputs
// except those no read needs any more.
type compactionRangeDels struct {
	all       *rangedel.Set
	snapshots []base.SeqNum // ascending
	// kept are the tombstones the outputs must hold.
	kept []rangedel.Tombstone
	// onDropTombstone, if set, sees the user key of every point tombstone
	// dropped for being covered (the tombstone index forgets it).
	onDropTombstone func(userKey []byte)
	// Dropped counts the point entries dropped.
	Dropped uint64
}

// compactionRangeDels gathers the inputs' tombstones. A tombstone is
// dropped when the output is the bottom for its range (no table below the
// output level meets it) and it lies in the oldest snapshot stripe, so
// every read sees it: then every entry it covers is dropped with it (both
// are in stripe 0, see stripeOf), and nothing is left for it to hide. The
// levels below the output cannot change meanwhile: compactions are
// serialised on compactMu and flushes only add L0 tables.
// REQUIRES: d.compactMu held.
func (d *DB) compactionRangeDels(job *compactionJob, snaps []base.SeqNum) (*compactionRangeDels, error) {
	c := &compactionRangeDels{snapshots: slices.Compact(slices.Sorted(slices.Values(snaps)))}
	var ts []rangedel.Tombstone
	for _, in := range job.inputs {
		if !tableHasRangeDels(in.meta) {
			continue
		}
		err := d.tables.withReader(in.meta, func(r *sstable.Reader) error {
			ts = append(ts, r.RangeDels()...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(ts) == 0 {
		return c, nil
	}
	c.all = rangedel.NewSet(ts)
	d.mu.Lock()
	v := d.current
	v.Ref()
	d.mu.Unlock()
	defer v.Unref()
	for _, t := range ts {
		if c.stripeOf(t.Seq) == 0 && !overlapsBelow(v, job.outputLevel, t) {
			continue
		}
		c.kept = append(c.kept, t)
	}
	return c, nil
}

// overlapsBelow reports whether a table below level may hold a key of t.
func overlapsBelow(v *manifest.Version, level int, t rangedel.Tombstone) bool {
	for l := level + 1; l < len(v.Levels); l++ {
		for _, m := range v.Levels[l] {
			if m.Overlaps(t.Start, t.End) {
				return true
			}
		}
	}
	return false
}

// stripeOf is the snapshot stripe of seq, as compaction.Iter counts them:
// stripe i holds the sequence numbers above snapshot i-1 and at or below
// snapshot i.
func (c *compactionRangeDels) stripeOf(seq base.SeqNum) int {
	i, _ := slices.BinarySearch(c.snapshots, seq)
	return i
}

// deletes reports whether no read can see k any more: a tombstone covers
// it in k's own snapshot stripe, so every snapshot that sees k sees the
// tombstone too (rangedel's R1). Only the oldest tombstone above k need be
// asked: newer ones are in the same stripe or later.
func (c *compactionRangeDels) deletes(k base.InternalKey) bool {
	t := c.all.CoverAbove(k.UserKey, k.SeqNum())
	return t != 0 && c.stripeOf(t) == c.stripeOf(k.SeqNum())
}

// dropCovered wraps the merged input stream so it skips the entries the
// tombstones delete; compaction.Iter, reading forward, sees the rest.
func (c *compactionRangeDels) dropCovered(src base.InternalIterator) base.InternalIterator {
	if c.all.Empty() {
		return src
	}
	return &coveredFilter{InternalIterator: src, c: c}
}

// coveredFilter is a forward-only filter: compaction.Iter calls only First
// and Next.
type coveredFilter struct {
	base.InternalIterator
	c *compactionRangeDels
}

func (f *coveredFilter) First() bool { return f.skip(f.InternalIterator.First()) }

func (f *coveredFilter) Next() bool { return f.skip(f.InternalIterator.Next()) }

func (f *coveredFilter) skip(ok bool) bool {
	for ; ok; ok = f.InternalIterator.Next() {
		k := f.Key()
		if !f.c.deletes(k) {
			return true
		}
		f.c.Dropped++
		if k.Kind() == base.KindDelete && f.c.onDropTombstone != nil {
			f.c.onDropTombstone(k.UserKey)
		}
	}
	return false
}
