package kv

import (
	"bytes"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/internal/rangedel"
)

// versionRangeDels remembers whether a version has a table with range
// tombstones (tables are immutable, so the answer never changes).
type versionRangeDels struct {
	v   *manifest.Version
	any bool
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
// the sources in K4's order and, before each source's point lookup, folds
// that source's newest visible tombstone covering key into cover (for a
// table from its resident tombstones: no read, so the filter-first lookup
// stays filter-first). A point version newer than cover is the answer;
// anything else means the key is deleted. By K8 no older source can hold
// a version newer than a tombstone already met, so the walk stops at the
// first source with a point version or a covering tombstone.
func (d *DB) getCovered(rs *readState, key []byte, seq base.SeqNum, trace *GetTrace) ([]byte, error) {
	var cover base.SeqNum
	// decide is the end of the walk at one source: pointSeq is 0 when the
	// source had no visible version of key.
	decide := func(v []byte, kind base.Kind, pointSeq base.SeqNum) ([]byte, error) {
		if pointSeq > cover {
			return result(v, kind)
		}
		return nil, ErrNotFound
	}
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
		cover = max(cover, m.rangeDels.cover(key, seq))
		it := m.NewIter(key, nil)
		k, v, found := seekPoint(it, key, seq)
		it.Close()
		trace.memtable(name, found)
		if found || cover > 0 {
			return decide(v, k.Kind(), k.SeqNum())
		}
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
			r, err := d.tables.get(t)
			if err != nil {
				return nil, err
			}
			cover = max(cover, r.RangeDelCover(key, seq))
			if cover == 0 {
				v, kind, found, err := d.getFromTable(t, level, key, seq, trace)
				if err != nil || found {
					return resultOrErr(v, kind, err)
				}
			} else {
				// The point's sequence number decides against a tombstone
				// of the same table; the filter still answers first.
				var k base.InternalKey
				var v []byte
				var before tableStats
				if trace != nil {
					before = d.snapshotTableStats()
				}
				found := false
				if r.MayContain(key) {
					it := r.NewIter(key, nil)
					k, v, found = seekPoint(it, key, seq)
					if err := it.Close(); err != nil {
						return nil, err
					}
				}
				if trace != nil {
					trace.table(level, t, before, d.snapshotTableStats(), found, nil)
				}
				return decide(v, k.Kind(), k.SeqNum())
			}
			if level > 0 {
				break // one table per sorted level
			}
		}
	}
	return nil, ErrNotFound
}

// seekPoint finds the newest version of key visible at seq in it. The key
// and value are copies, valid after it closes.
func seekPoint(it base.InternalIterator, key []byte, seq base.SeqNum) (base.InternalKey, []byte, bool) {
	if !it.SeekGE(base.MakeSearchKey(key, seq)) || !bytes.Equal(it.Key().UserKey, key) {
		return base.InternalKey{}, nil, false
	}
	return it.Key().Clone(), bytes.Clone(it.Value()), true
}

// iterRangeDels gathers the range tombstones visible at seq from every
// source of rs whose range meets [lower, upper), fragmented into one Set
// an Iterator consults for each entry. It returns nil, and the iterator
// pays nothing, when there is none.
func (d *DB) iterRangeDels(rs *readState, seq base.SeqNum, lower, upper []byte) (*rangedel.Set, error) {
	if !d.hasRangeDels(rs) {
		return nil, nil
	}
	var ts []rangedel.Tombstone
	keep := func(list []rangedel.Tombstone) {
		for _, t := range list {
			if t.Seq > seq || (upper != nil && bytes.Compare(t.Start, upper) >= 0) || (lower != nil && bytes.Compare(t.End, lower) <= 0) {
				continue
			}
			ts = append(ts, t)
		}
	}
	keep(rs.mem.rangeDels.all())
	for _, m := range rs.imm {
		keep(m.rangeDels.all())
	}
	for _, level := range rs.v.Levels {
		for _, t := range level {
			if !tableHasRangeDels(t) || !t.Overlaps(lower, nil) || (upper != nil && bytes.Compare(t.Smallest.UserKey, upper) >= 0) {
				continue
			}
			r, err := d.tables.get(t)
			if err != nil {
				return nil, err
			}
			keep(r.RangeDels())
		}
	}
	if len(ts) == 0 {
		return nil, nil
	}
	return rangedel.NewSet(ts), nil
}

// coveredAt reports whether a visible range tombstone deletes k for a read
// at seq (rangedel's R1).
func coveredAt(s *rangedel.Set, k base.InternalKey, seq base.SeqNum) bool {
	return !s.Empty() && s.Cover(k.UserKey, seq) > k.SeqNum()
}
