package kv

import (
	"sort"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// levelIter iterates the tables of one sorted level (L1+) as one sequence,
// opening each table's iterator only when the walk reaches it and skipping
// tables wholly outside [lower, upper).
type levelIter struct {
	d            *DB
	tables       []*manifest.TableMetadata // sorted by smallest key, non-overlapping
	lower, upper []byte
	idx          int        // index of the table cur iterates; -1 or len = none
	cur          *tableIter // &table while a table is open, else nil
	err          error
	// table is the one table iterator the walk reuses from table to table
	// (it holds the table's reader while open).
	table tableIter
	// skipCacheFill is IterOptions.SkipCacheFill, for each table opened.
	skipCacheFill bool
}

var _ base.InternalIterator = (*levelIter)(nil)

// init makes l a walk of tables within [lower, upper), keeping the memory
// of its table iterator from an earlier walk (l must be closed or new).
func (l *levelIter) init(d *DB, tables []*manifest.TableMetadata, lower, upper []byte, skipCacheFill bool) {
	*l = levelIter{d: d, tables: tables, lower: lower, upper: upper, idx: -1, table: l.table, skipCacheFill: skipCacheFill}
}

// detach drops a closed walk's references to its DB, tables and bounds, so
// that memory kept for reuse pins none of them.
func (l *levelIter) detach() {
	l.table.Detach()
	*l = levelIter{table: l.table}
}

// inBounds reports whether table i may hold keys in [lower, upper).
func (l *levelIter) inBounds(i int) bool {
	t := l.tables[i]
	if l.lower != nil && base.CompareUserKeys(t.Largest.UserKey, l.lower) < 0 {
		return false
	}
	if l.upper != nil && base.CompareUserKeys(t.Smallest.UserKey, l.upper) >= 0 {
		return false
	}
	return true
}

// open switches the walk to table i, closing the previous table iterator.
func (l *levelIter) open(i int) bool {
	if l.cur != nil {
		if err := l.cur.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.cur = nil
	}
	l.idx = i
	if l.err != nil || i < 0 || i >= len(l.tables) {
		return false
	}
	if err := l.d.tables.initIter(&l.table, l.tables[i], l.lower, l.upper); err != nil {
		l.err = err
		return false
	}
	if l.skipCacheFill {
		l.table.SkipCacheFill()
	}
	l.cur = &l.table
	return true
}

// settle handles the current table running out: forward moves to the next
// in-bounds tables' first entries, backward to the previous tables' last.
func (l *levelIter) settle(ok bool, forward bool) bool {
	for {
		if ok {
			return true
		}
		if l.cur != nil && l.cur.Error() != nil {
			l.err = l.cur.Error()
		}
		if l.err != nil {
			return false
		}
		next := l.idx + 1
		if !forward {
			next = l.idx - 1
		}
		if next < 0 || next >= len(l.tables) || !l.inBounds(next) {
			l.open(-1)
			return false
		}
		if !l.open(next) {
			return false
		}
		if forward {
			ok = l.cur.First()
		} else {
			ok = l.cur.Last()
		}
	}
}

func (l *levelIter) SeekGE(key base.InternalKey) bool {
	// The first table whose largest key is >= key.
	i := sort.Search(len(l.tables), func(i int) bool {
		return base.Compare(l.tables[i].Largest, key) >= 0
	})
	if i >= len(l.tables) || !l.inBounds(i) {
		l.open(-1)
		return false
	}
	if !l.open(i) {
		return false
	}
	return l.settle(l.cur.SeekGE(key), true)
}

func (l *levelIter) SeekLT(key base.InternalKey) bool {
	// The last table whose smallest key is < key.
	i := sort.Search(len(l.tables), func(i int) bool {
		return base.Compare(l.tables[i].Smallest, key) >= 0
	}) - 1
	if i < 0 || !l.inBounds(i) {
		l.open(-1)
		return false
	}
	if !l.open(i) {
		return false
	}
	return l.settle(l.cur.SeekLT(key), false)
}

func (l *levelIter) First() bool {
	for i := range l.tables {
		if l.inBounds(i) {
			if !l.open(i) {
				return false
			}
			return l.settle(l.cur.First(), true)
		}
	}
	l.open(-1)
	return false
}

func (l *levelIter) Last() bool {
	for i := len(l.tables) - 1; i >= 0; i-- {
		if l.inBounds(i) {
			if !l.open(i) {
				return false
			}
			return l.settle(l.cur.Last(), false)
		}
	}
	l.open(-1)
	return false
}

func (l *levelIter) Next() bool {
	if l.cur == nil || !l.cur.Valid() {
		return false
	}
	return l.settle(l.cur.Next(), true)
}

func (l *levelIter) Prev() bool {
	if l.cur == nil || !l.cur.Valid() {
		return false
	}
	return l.settle(l.cur.Prev(), false)
}

func (l *levelIter) Valid() bool { return l.err == nil && l.cur != nil && l.cur.Valid() }

func (l *levelIter) Key() base.InternalKey { return l.cur.Key() }

func (l *levelIter) Value() []byte { return l.cur.Value() }

func (l *levelIter) Error() error {
	if l.err != nil {
		return l.err
	}
	if l.cur != nil {
		return l.cur.Error()
	}
	return nil
}

func (l *levelIter) Close() error {
	l.open(-1)
	return l.err
}
