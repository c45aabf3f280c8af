package memtable

import "github.com/google/btree"

// NodePool recycles the B-tree nodes of released memtables for the next
// ones (MT10), as the chunk pools recycle their arenas (MT9). Without it a
// fill allocated about 100 bytes of nodes per Set afresh, the largest
// share of its Go heap once the arenas were reused (docs/design.md, "In
// the shared-process run (WAL off)").
//
// It wraps a google/btree free list, which is safe for concurrent use by
// the trees sharing it (btree: "two Btrees using the same freelist are
// safe for concurrent write access"): the mutable memtable takes nodes
// while the flush releases an older one. A pool holds at most the nodes it
// was sized for and keeps them until it is unreachable, so one pool per DB
// ties that memory to the DB's lifetime. The zero value is not usable;
// call NewNodePool.
type NodePool struct {
	free *btree.FreeListG[item]
}

// minItemsPerNode is the fewest entries a node other than the root holds
// (btree degree - 1): sequential inserts split nodes in half, leaving
// them at this fill.
const minItemsPerNode = btreeDegree - 1

// NewNodePool returns a pool that keeps at most the nodes of one memtable
// whose LogicalSize reached memTableBytes: every entry counts at least
// LogicalEntryOverhead (MT7), so such a tree has at most that many entries
// and, at minItemsPerNode per node, the nodes this bound allows.
func NewNodePool(memTableBytes int) *NodePool {
	nodes := memTableBytes/LogicalEntryOverhead/minItemsPerNode + 1
	return &NodePool{free: btree.NewFreeListG[item](nodes)}
}

// Freeze declares that nothing writes m again (MT10): an Add afterwards
// panics, and iterators read the tree itself instead of a Clone, so the
// nodes stay the tree's own and Release can hand them to the pool. The
// engine freezes a memtable when it rotates it out for flushing.
func (m *MemTable) Freeze() {
	m.mu.Lock()
	m.frozen = true
	m.snap = nil // iterators read the tree itself from now on
	m.mu.Unlock()
}

// snapshot returns a tree an iterator may read without a lock (MT5): a
// frozen memtable's own tree, which google/btree lets any number of
// readers share, or else a Clone, taken under the write lock (Clone
// updates the receiver's copy-on-write state) and shared by the iterators
// made until the next Add (snap). A Clone leaves every existing node owned
// by neither tree, so Release could recycle none of them: the flush of a
// memtable, which iterates it once, used to cost it all its nodes. And
// every Clone costs the next Add a copy of its path, the nodes it shares
// with the Clone, and three allocations of its own, which a scan made
// between the same two Adds as the last one's need not pay again.
func (m *MemTable) snapshot() *btree.BTreeG[item] {
	m.rlock()
	if m.released {
		m.mu.RUnlock()
		panic(errReleased)
	}
	if t := m.frozenOrSnap(); t != nil {
		m.mu.RUnlock()
		return t
	}
	m.mu.RUnlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		panic(errReleased)
	}
	if t := m.frozenOrSnap(); t != nil {
		return t
	}
	m.snap = m.tree.Clone()
	return m.snap
}

// frozenOrSnap is the tree snapshot can hand out without cloning: a frozen
// memtable's own, or the Clone no Add has made stale; nil if neither.
// REQUIRES: mu held.
func (m *MemTable) frozenOrSnap() *btree.BTreeG[item] {
	if m.frozen {
		return m.tree
	}
	return m.snap
}

// releaseNodes hands the tree's own nodes to the pool, the ones a Clone
// still shares excepted (google/btree checks). REQUIRES: m.mu held and no
// reader left (Release's promise).
func (m *MemTable) releaseNodes() {
	m.tree.Clear(m.pool != nil)
	m.snap = nil
	m.released = true
	m.filter.Store(nil)
}

// errReleased is the panic of a read of a released memtable: the caller
// broke Release's promise, and its node and arena memory may be another
// memtable's now, so it must not get an answer.
const errReleased = "memtable: read of a released memtable"
