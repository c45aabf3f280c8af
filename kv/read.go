package kv

import (
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// readState pins what a read needs: the memtables and the version current
// when it started. Memtables are garbage collected; the version is
// reference counted so its table files outlive the read (K5).
type readState struct {
	mem *memTable
	imm []*memTable // oldest first
	v   *manifest.Version
}

func (rs *readState) unref() { rs.v.Unref() }

// loadReadState pins the current state for one read. It returns a value,
// not a pointer, so a Get allocates nothing for it. The imm slice header
// is shared, not copied: the DB only ever drops memtables from its front
// or appends past its end, never writing inside a range a reader holds.
func (d *DB) loadReadState() (readState, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return readState{}, ErrClosed
	}
	d.current.Ref()
	return readState{mem: d.mem, imm: d.imm, v: d.current}, nil
}

// Get returns a copy of the newest value of key, or ErrNotFound.
func (d *DB) Get(key []byte) ([]byte, error) {
	return d.getAt(key, base.SeqNum(d.visibleSeq.Load()), nil)
}

// getAt looks key up as of seq: memtables newest first, then L0 tables
// newest first, then at most one table per deeper level (K4). Each table's
// filter answers before any block is read (the sstable reader's T6).
// trace, when not nil, records each source consulted (kvshell's explain).
func (d *DB) getAt(key []byte, seq base.SeqNum, trace *GetTrace) ([]byte, error) {
	d.counters.gets.Add(1)
	if !d.reads.enter() {
		return nil, ErrClosed
	}
	defer d.reads.exit()
	// The visible sequence number is loaded before the read state: every
	// entry at or below it is already in the memtables that state pins
	// (K3), or flushed into its version.
	rs, err := d.loadReadState()
	if err != nil {
		return nil, err
	}
	defer rs.unref()
	if d.hasRangeDels(&rs) {
		return d.getCovered(&rs, key, seq, trace) // K8
	}

	if v, kind, found := rs.mem.Get(key, seq); found {
		trace.memtable("mutable memtable", true)
		return result(v, kind)
	}
	trace.memtable("mutable memtable", false)
	for i := len(rs.imm) - 1; i >= 0; i-- {
		if v, kind, found := rs.imm[i].Get(key, seq); found {
			trace.memtable("immutable memtable", true)
			return result(v, kind)
		}
		trace.memtable("immutable memtable", false)
	}
	for level, tables := range rs.v.Levels {
		if level == 0 {
			for _, t := range tables {
				if !t.ContainsUserKey(key) {
					continue
				}
				v, kind, found, err := d.getFromTable(t, level, key, seq, trace)
				if err != nil || found {
					return resultOrErr(v, kind, err)
				}
			}
			continue
		}
		t := rs.v.TableFor(level, key)
		if t == nil {
			continue
		}
		v, kind, found, err := d.getFromTable(t, level, key, seq, trace)
		if err != nil || found {
			return resultOrErr(v, kind, err)
		}
	}
	return nil, ErrNotFound
}

// getFromTable reads key from table t. With a trace, the reader fills a
// per-call GetStats, so the trace shows this Get's work alone however many
// reads and compactions run beside it; without one the ordinary Get path
// runs and nothing extra is allocated or counted.
func (d *DB) getFromTable(t *manifest.TableMetadata, level int, key []byte, seq base.SeqNum, trace *GetTrace) ([]byte, base.Kind, bool, error) {
	h, err := d.tables.acquire(t)
	if err != nil {
		return nil, 0, false, err
	}
	defer h.release()
	r := h.reader()
	if trace == nil {
		return r.Get(key, seq)
	}
	var gs sstable.GetStats
	v, kind, found, err := r.GetWithStats(key, seq, &gs)
	trace.table(level, t, &gs, found, err)
	return v, kind, found, err
}

func result(v []byte, kind base.Kind) ([]byte, error) {
	if kind == base.KindDelete {
		return nil, ErrNotFound
	}
	return append([]byte{}, v...), nil
}

func resultOrErr(v []byte, kind base.Kind, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return result(v, kind)
}
