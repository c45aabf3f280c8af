package kv

import (
	"github.com/sievekv/sievekv/internal/base"
)

// mergingIter merges several sorted internal iterators into one, in both
// directions, with a binary heap of the children that are positioned. It
// relies on no internal key appearing in two children (sequence numbers
// are unique), which lets a direction switch re-seek the other children
// strictly past the current key.
//
// The heap holds each child's current key beside its index. A child's key
// stays valid until that child moves, and only the merge moves it, so a
// comparison reads two cached keys instead of calling Key through the
// interface twice: that was a fifth of a compaction's merge time
// (container/heap's Fix and Less, BenchmarkMergingIterNext).
type mergingIter struct {
	children []base.InternalIterator
	h        mergeHeap
	err      error
}

// mergeHeap is a binary min-heap (max-heap when reverse) of the
// positioned children by their current keys.
type mergeHeap struct {
	items   []mergeItem
	reverse bool
}

type mergeItem struct {
	key   base.InternalKey // children[child].Key(), cached
	child int
}

// before reports whether a sorts ahead of b in the heap's direction.
func (h *mergeHeap) before(a, b *mergeItem) bool {
	c := base.Compare(a.key, b.key)
	if h.reverse {
		return c > 0
	}
	return c < 0
}

// down restores the heap below i after items[i]'s key changed.
func (h *mergeHeap) down(i int) {
	items := h.items
	n := len(items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h.before(&items[r], &items[l]) {
			j = r
		}
		if !h.before(&items[j], &items[i]) {
			return
		}
		items[i], items[j] = items[j], items[i]
		i = j
	}
}

// init orders items into a heap.
func (h *mergeHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// popTop removes the top item.
func (h *mergeHeap) popTop() {
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items[n] = mergeItem{}
	h.items = h.items[:n]
	h.down(0)
}

func newMergingIter(children []base.InternalIterator) *mergingIter {
	m := new(mergingIter)
	m.init(children)
	return m
}

// init makes m a merge of children, keeping the heap's memory from an
// earlier merge but none of its keys: they point into blocks and memtable
// arenas that a pooled merge must not keep alive, and a heap that shrank
// left some past its length.
func (m *mergingIter) init(children []base.InternalIterator) {
	clear(m.h.items[:cap(m.h.items)])
	*m = mergingIter{children: children, h: mergeHeap{items: m.h.items[:0]}}
}

var _ base.InternalIterator = (*mergingIter)(nil)

// rebuild makes a heap of the valid children for the given direction,
// recording the first child error.
func (m *mergingIter) rebuild(reverse bool) bool {
	m.h.reverse = reverse
	m.h.items = m.h.items[:0]
	for i, c := range m.children {
		if c.Valid() {
			m.h.items = append(m.h.items, mergeItem{key: c.Key(), child: i})
		} else if err := c.Error(); err != nil && m.err == nil {
			m.err = err
		}
	}
	if m.err != nil {
		m.h.items = m.h.items[:0]
		return false
	}
	m.h.init()
	return len(m.h.items) > 0
}

func (m *mergingIter) First() bool {
	for _, c := range m.children {
		c.First()
	}
	return m.rebuild(false)
}

func (m *mergingIter) Last() bool {
	for _, c := range m.children {
		c.Last()
	}
	return m.rebuild(true)
}

func (m *mergingIter) SeekGE(key base.InternalKey) bool {
	for _, c := range m.children {
		c.SeekGE(key)
	}
	return m.rebuild(false)
}

func (m *mergingIter) SeekLT(key base.InternalKey) bool {
	for _, c := range m.children {
		c.SeekLT(key)
	}
	return m.rebuild(true)
}

func (m *mergingIter) Next() bool {
	if !m.Valid() {
		return false
	}
	if m.h.reverse {
		// Every other child sits before the current key; move each to the
		// first entry after it (keys are unique across children).
		cur := m.h.items[0].child
		key := m.h.items[0].key.Clone()
		for i, c := range m.children {
			if i == cur {
				continue
			}
			if c.SeekGE(key) && base.Compare(c.Key(), key) == 0 {
				c.Next()
			}
		}
		m.children[cur].Next()
		return m.rebuild(false)
	}
	return m.step(true)
}

func (m *mergingIter) Prev() bool {
	if !m.Valid() {
		return false
	}
	if !m.h.reverse {
		cur := m.h.items[0].child
		key := m.h.items[0].key.Clone()
		for i, c := range m.children {
			if i == cur {
				continue
			}
			c.SeekLT(key)
		}
		m.children[cur].Prev()
		return m.rebuild(true)
	}
	return m.step(false)
}

// step moves the top child forward or backward (the heap's direction)
// and restores the heap.
func (m *mergingIter) step(forward bool) bool {
	top := &m.h.items[0]
	c := m.children[top.child]
	var ok bool
	if forward {
		ok = c.Next()
	} else {
		ok = c.Prev()
	}
	if ok {
		top.key = c.Key()
		m.h.down(0)
	} else {
		if err := c.Error(); err != nil {
			m.err = err
			m.h.items = m.h.items[:0]
			return false
		}
		m.h.popTop()
	}
	return len(m.h.items) > 0
}

func (m *mergingIter) Valid() bool { return m.err == nil && len(m.h.items) > 0 }

func (m *mergingIter) Key() base.InternalKey { return m.h.items[0].key }

func (m *mergingIter) Value() []byte { return m.children[m.h.items[0].child].Value() }

func (m *mergingIter) Error() error { return m.err }

func (m *mergingIter) Close() error {
	err := m.err
	for _, c := range m.children {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}
