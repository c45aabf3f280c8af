package kv

import "github.com/sievekv/sievekv/memtable"

// A memtable's arena goes back to the memtable package's pools (its MT9)
// once nothing can read it again (K12): it has been flushed and dropped
// from d.imm, and no read state naming it is pinned. memTable.refs counts
// the DB's own hold (from creation until the flush drops it from the
// queue) plus one per read state listing it; read states are what every
// read goes through (K9), and Get and Iterator copy what they hand out,
// so no user slice points into an arena. Reusing the arenas spares a fill
// most of its per-Set garbage (docs/design.md, "What sets a sequential
// fill's 99th percentile"). The same release hands the memtable's B-tree
// nodes to the DB's node pool (the memtable package's MT10): rotation
// freezes a memtable, so its flush iterates the tree itself and no Clone
// shares its nodes when it is released.

// ref adds a holder. REQUIRES: m is held already (refs > 0): by the DB
// under d.mu, or by a read state being built under d.mu.
func (m *memTable) ref() { m.refs.Add(1) }

// unref drops a holder; the last one releases the arena.
func (m *memTable) unref() {
	switch n := m.refs.Add(-1); {
	case n == 0:
		m.Release()
	case n < 0:
		panic("kv: memtable released more often than held")
	}
}

// refMemTables and unrefMemTables hold and drop every memtable of a
// read state (none yet while Open recovers: mem is nil then).
func (rs *readState) refMemTables() {
	if rs.mem != nil {
		rs.mem.ref()
	}
	for _, m := range rs.imm {
		m.ref()
	}
}

func (rs *readState) unrefMemTables() {
	if rs.mem != nil {
		rs.mem.unref()
	}
	for _, m := range rs.imm {
		m.unref()
	}
}

// newMemTableStruct wraps an empty memtable that the DB holds (refs 1),
// its nodes drawn from the DB's pool, made on first use (memtables exist
// only after Open has settled the options). Its key filter (the memtable
// package's MT11) is sized for a quarter more entries than the mutable
// memtable it follows took, so a steady stream of writes of one shape
// never makes the filter rebuild under the write lock.
func (d *DB) newMemTableStruct(id uint64) *memTable {
	if d.nodes == nil {
		d.nodes = memtable.NewNodePool(d.opts.MemTableSize)
	}
	expected := 0
	if d.mem != nil {
		expected = d.mem.Len() + d.mem.Len()/4
	}
	m := &memTable{MemTable: memtable.NewSized(d.nodes, expected), id: id}
	m.refs.Store(1)
	return m
}
