package kv

import (
	"sync/atomic"

	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
)

// readState is what a read needs: the memtables and the version current
// when it started. The DB publishes a new one, under DB.mu, whenever the
// memtables or the version change, and a read pins the published one
// without taking DB.mu (K9): a Get contends with neither the commit
// leader nor a flush. Memtables are garbage collected; the version is
// reference counted so its table files outlive every read that uses them
// (K5). A readState holds one reference to its version, dropped when its
// own count reaches zero.
type readState struct {
	refs atomic.Int32
	mem  *memTable
	imm  []*memTable // oldest first
	v    *manifest.Version
}

// tryRef pins rs unless it was already retired (count zero), in which case
// a newer state has been published and the caller loads again. It never
// resurrects a retired state, so its version is unreferenced exactly once.
func (rs *readState) tryRef() bool {
	for {
		n := rs.refs.Load()
		if n <= 0 {
			return false
		}
		if rs.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// unref drops a pin; the last one releases the version.
func (rs *readState) unref() {
	switch n := rs.refs.Add(-1); {
	case n == 0:
		rs.v.Unref()
		rs.unrefMemTables()
	case n < 0:
		panic("kv: read state released more often than pinned")
	}
}

// loadReadState pins the published read state for one read, or returns
// ErrClosed. Lock-free: an atomic load and a compare-and-swap, retried
// only if a publish retires the state in between.
func (d *DB) loadReadState() (*readState, error) {
	for {
		if d.isClosed() {
			return nil, ErrClosed
		}
		rs := d.readState.Load()
		if rs == nil {
			return nil, ErrClosed
		}
		if rs.tryRef() {
			return rs, nil
		}
	}
}

// publishReadStateLocked makes the current memtables and version what
// new reads pin, and retires the previous state (reads already holding it
// keep it until they finish). The imm slice header is shared, not copied:
// the DB only ever drops memtables from its front or appends past its
// end, never writing inside a range a reader holds. REQUIRES: d.mu held,
// and called after every change of d.mem, d.imm or d.current once Open
// has returned (K9).
func (d *DB) publishReadStateLocked() {
	rs := &readState{mem: d.mem, imm: d.imm, v: d.current}
	rs.v.Ref()
	rs.refMemTables()
	rs.refs.Store(1) // the DB's own pin, dropped when retired
	if old := d.readState.Swap(rs); old != nil {
		old.unref()
	}
}

// retireReadStateLocked drops the published state at Close; reads then
// see ErrClosed. REQUIRES: d.mu held.
func (d *DB) retireReadStateLocked() {
	if old := d.readState.Swap(nil); old != nil {
		old.unref()
	}
}

// loadLatestReadState pins the published read state and then loads the
// visible sequence number to read at, retrying if a publish came between
// the two (K15). In that order no compaction can have dropped a version
// visible at the number from the pinned state: a compaction drops a
// version only for a newer entry that was visible before it ran, hence
// before the number was loaded, and the pinned version never changes. In
// the other order a compaction between the loads could drop the newest
// version visible at the number (shadowed by a write the number does not
// see) and the read would return an older one. The recheck makes the
// state hold every write at or below the number (K3): a write enters a
// memtable of the state current when it is applied.
func (d *DB) loadLatestReadState() (*readState, base.SeqNum, error) {
	for {
		rs, err := d.loadReadState()
		if err != nil {
			return nil, 0, err
		}
		if testHookReadStatePinned != nil {
			testHookReadStatePinned()
		}
		seq := base.SeqNum(d.visibleSeq.Load())
		if d.readState.Load() == rs {
			return rs, seq, nil
		}
		rs.unref()
	}
}

// testHookReadStatePinned, when set (tests only), runs between a latest
// read's two loads.
var testHookReadStatePinned func()
