package kv

import (
	"bytes"
	"sync"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
	"github.com/sievekv/sievekv/sstable"
)

// versionRangeDels remembers whether a version has a table with range
// tombstones, and once an iterator asked, all of them fragmented into one
// Set (tables are immutable, so neither answer ever changes). Iterators
// share the Set instead of each refragmenting every table's tombstones,
// which cost milliseconds per NewIter with thousands of them.
type versionRangeDels struct {
	v   *manifest.Version
	any bool

	mu     sync.Mutex
	tables *rangedel.Set // nil until built; guarded by mu
}

func tableHasRangeDels(t *manifest.TableMetadata) bool {
	return t.Props != nil && t.Props.NumRangeDeletions > 0
}

// hasRangeDels reports whether any source of rs holds a range tombstone.
// Without one, a Get takes the plain path of K4; with one, getCovered.
func (d *DB) hasRangeDels(rs *readState) bool {
	if rs.mem.rangeDels.n.Load() > 0 {
		return true
	}
	for _, m := range rs.imm {
		if m.rangeDels.n.Load() > 0 {
			return true
		}
	}
	if c := d.rangeDelVersion.Load(); c != nil && c.v == rs.v {
		return c.any
	}
	c := &versionRangeDels{v: rs.v}
	for _, level := range rs.v.Levels {
		for _, t := range level {
			c.any = c.any || tableHasRangeDels(t)
		}
	}
	d.rangeDelVersion.Store(c)
	return c.any
}

// getCovered is getAt for a read state holding range tombstones. It visits
// the sources in K4's order and, before each source's point lookup, asks
// the source for its newest visible range tombstone covering key (a table
// answers from its resident tombstones: no read, so the filter-first
// lookup stays filter-first). Without one, the source is looked up as
// getAt does. With one, the source decides (K8): a point version of key
// newer than the tombstone in the same source is the answer; anything
// else means the key is deleted, since no older source holds a version
// newer than the tombstone.
func (d *DB) getCovered(rs *readState, dst []byte, lk lookupKey, seq base.SeqNum, trace *GetTrace) ([]byte, error) {
	key := lk.UserKey
	mems := make([]*memTable, 0, 1+len(rs.imm))
	mems = append(mems, rs.mem)
	for i := len(rs.imm) - 1; i >= 0; i-- {
		mems = append(mems, rs.imm[i])
	}
	for i, m := range mems {
		name := "mutable memtable"
		if i > 0 {
			name = "immutable memtable"
		}
		cover := m.rangeDels.cover(key, seq)
		if cover == 0 {
			if v, kind, found := m.GetHashed(key, lk.hash, seq); found {
				trace.memtable(name, true)
				return result(dst, v, kind)
			}
			trace.memtable(name, false)
			continue
		}
		// The point's sequence number decides against the tombstone; the
		// plain Get does not return it, so seek a snapshot of the tree.
		it := m.NewIter(key, nil)
		k, v, found := seekPoint(it, key, seq)
		it.Close()
		trace.memtableCovered(name, found && k.SeqNum() > cover)
		return newerThanCover(dst, k, v, found, cover)
	}
	for level, tables := range rs.v.Levels {
		for _, t := range tables {
			if level > 0 {
				if t = rs.v.TableFor(level, key); t == nil {
					break
				}
			} else if !t.ContainsUserKey(key) {
				continue
			}
			h, err := d.tables.acquire(t)
			if err != nil {
				return dst, err
			}
			if cover := h.reader().RangeDelCover(key, seq); cover != 0 {
				v, err := d.getCoveredInTable(dst, h.reader(), t, level, key, seq, cover, trace)
				h.release()
				return v, err
			}
			h.release()
			v, kind, found, err := d.getFromTable(dst, t, level, lk, seq, trace)
			if err != nil || found {
				return tableResult(dst, v, kind, err)
			}
			if level > 0 {
				break // one table per sorted level
			}
		}
	}
	return dst, ErrNotFound
}

// getCoveredInTable decides a Get at the table holding a tombstone that
// covers key at cover: the filter answers first, then one seek finds the
// point version and its sequence number.
func (d *DB) getCoveredInTable(dst []byte, r *sstable.Reader, t *manifest.TableMetadata, level int, key []byte, seq, cover base.SeqNum, trace *GetTrace) ([]byte, error) {
	var gs *sstable.GetStats
	if trace != nil {
		gs = new(sstable.GetStats)
	}
	v, kind, vseq, found, err := r.GetVersion(key, seq, gs)
	if err != nil {
		return dst, err
	}
	trace.tableCovered(level, t, gs, found, vseq > cover)
	return newerThanCover(dst, base.MakeInternalKey(key, vseq, kind), v, found, cover)
}

// newerThanCover is the answer of a source whose tombstone covers the key
// at cover: its point version, appended to dst, if one is newer, else not
// found.
func newerThanCover(dst []byte, k base.InternalKey, v []byte, found bool, cover base.SeqNum) ([]byte, error) {
	if found && k.SeqNum() > cover {
		return result(dst, v, k.Kind())
	}
	return dst, ErrNotFound
}

// seekPoint finds the newest version of key visible at seq in it. The key
// and value are copies, valid after it closes.
func seekPoint(it base.InternalIterator, key []byte, seq base.SeqNum) (base.InternalKey, []byte, bool) {
	if !it.SeekGE(base.MakeSearchKey(key, seq)) || !bytes.Equal(it.Key().UserKey, key) {
		return base.InternalKey{}, nil, false
	}
	return it.Key().Clone(), bytes.Clone(it.Value()), true
}

// rangeDelView is every range tombstone an Iterator sees (K8): the
// memtables' indexes as of its creation (K13; later tombstones are newer
// than the iterator's sequence number, so it would not see them) and its
// version's tables' tombstones fragmented into one Set. A nil view sees
// none.
type rangeDelView struct {
	mems   []*memRangeDelIndex
	tables *rangedel.Set
}

// iterRangeDels gathers the range tombstones of every source of rs: the
// memtables' indexes as they stand, and the version's tables' Set. It
// returns nil, and the iterator pays nothing, when there is none. Both
// hold tombstones newer than the iterator and outside its bounds; lookups
// pass the iterator's sequence number and keys, so those never answer.
func (d *DB) iterRangeDels(rs *readState) (*rangeDelView, error) {
	if !d.hasRangeDels(rs) {
		return nil, nil
	}
	v := &rangeDelView{}
	for _, m := range append([]*memTable{rs.mem}, rs.imm...) {
		if idx := m.rangeDels.indexed(); idx != nil {
			v.mems = append(v.mems, idx)
		}
	}
	tables, err := d.versionTableRangeDels(rs.v)
	if err != nil {
		return nil, err
	}
	if !tables.Empty() {
		v.tables = tables
	}
	if len(v.mems) == 0 && v.tables == nil {
		return nil, nil
	}
	return v, nil
}

// coveredAt reports whether a visible range tombstone deletes k for a read
// at seq (rangedel's R1).
func coveredAt(v *rangeDelView, k base.InternalKey, seq base.SeqNum) bool {
	if v == nil {
		return false
	}
	for _, idx := range v.mems {
		if idx.coverAbove(k.UserKey, seq, k.SeqNum()) != 0 {
			return true
		}
	}
	return v.tables.Cover(k.UserKey, seq) > k.SeqNum()
}

// versionTableRangeDels returns every range tombstone of v's tables in
// one Set, built once per version and shared by its iterators. A failure
// to open a table is returned and not remembered, so a later iterator
// tries again.
func (d *DB) versionTableRangeDels(v *manifest.Version) (*rangedel.Set, error) {
	c := d.rangeDelVersion.Load()
	if c == nil || c.v != v {
		c = &versionRangeDels{v: v} // an older version: build, do not keep
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables != nil {
		return c.tables, nil
	}
	var ts []rangedel.Tombstone
	for _, level := range v.Levels {
		for _, t := range level {
			if !tableHasRangeDels(t) {
				continue
			}
			err := d.tables.withReader(t, func(r *sstable.Reader) error {
				ts = append(ts, r.RangeDels()...)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	c.tables = rangedel.NewSet(ts)
	return c.tables, nil
}
