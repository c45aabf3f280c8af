package kv

import (
	"container/heap"

	"github.com/sievekv/sievekv/internal/base"
)

// mergingIter merges several sorted internal iterators into one, in both
// directions, with a binary heap of the children that are positioned. It
// relies on no internal key appearing in two children (sequence numbers
// are unique), which lets a direction switch re-seek the other children
// strictly past the current key.
type mergingIter struct {
	children []base.InternalIterator
	h        mergeHeap
	err      error
}

type mergeHeap struct {
	iters   []base.InternalIterator
	idx     []int
	reverse bool
}

func (h *mergeHeap) Len() int { return len(h.idx) }
func (h *mergeHeap) Less(i, j int) bool {
	c := base.Compare(h.iters[h.idx[i]].Key(), h.iters[h.idx[j]].Key())
	if h.reverse {
		return c > 0
	}
	return c < 0
}
func (h *mergeHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *mergeHeap) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *mergeHeap) Pop() any {
	n := len(h.idx) - 1
	x := h.idx[n]
	h.idx = h.idx[:n]
	return x
}

func newMergingIter(children []base.InternalIterator) *mergingIter {
	m := new(mergingIter)
	m.init(children)
	return m
}

// init makes m a merge of children, keeping the heap's memory from an
// earlier merge.
func (m *mergingIter) init(children []base.InternalIterator) {
	*m = mergingIter{children: children, h: mergeHeap{iters: children, idx: m.h.idx[:0]}}
}

var _ base.InternalIterator = (*mergingIter)(nil)

// rebuild makes a heap of the valid children for the given direction,
// recording the first child error.
func (m *mergingIter) rebuild(reverse bool) bool {
	m.h.reverse = reverse
	m.h.idx = m.h.idx[:0]
	for i, c := range m.children {
		if c.Valid() {
			m.h.idx = append(m.h.idx, i)
		} else if err := c.Error(); err != nil && m.err == nil {
			m.err = err
		}
	}
	if m.err != nil {
		m.h.idx = m.h.idx[:0]
		return false
	}
	heap.Init(&m.h)
	return len(m.h.idx) > 0
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
		cur := m.h.idx[0]
		key := m.children[cur].Key().Clone()
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
	return m.step(func(c base.InternalIterator) bool { return c.Next() })
}

func (m *mergingIter) Prev() bool {
	if !m.Valid() {
		return false
	}
	if !m.h.reverse {
		cur := m.h.idx[0]
		key := m.children[cur].Key().Clone()
		for i, c := range m.children {
			if i == cur {
				continue
			}
			c.SeekLT(key)
		}
		m.children[cur].Prev()
		return m.rebuild(true)
	}
	return m.step(func(c base.InternalIterator) bool { return c.Prev() })
}

// step moves the top child in the heap's direction and restores the heap.
func (m *mergingIter) step(move func(base.InternalIterator) bool) bool {
	top := m.children[m.h.idx[0]]
	if move(top) {
		heap.Fix(&m.h, 0)
	} else {
		if err := top.Error(); err != nil {
			m.err = err
			m.h.idx = m.h.idx[:0]
			return false
		}
		heap.Pop(&m.h)
	}
	return len(m.h.idx) > 0
}

func (m *mergingIter) Valid() bool { return m.err == nil && len(m.h.idx) > 0 }

func (m *mergingIter) Key() base.InternalKey { return m.children[m.h.idx[0]].Key() }

func (m *mergingIter) Value() []byte { return m.children[m.h.idx[0]].Value() }

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
