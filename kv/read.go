package kv

import (
	"github.com/sievekv/sievekv/filters"
	"github.com/sievekv/sievekv/internal/base"
	"github.com/sievekv/sievekv/internal/manifest"
	"github.com/sievekv/sievekv/sstable"
)

// Get returns a copy of the newest value of key, or ErrNotFound.
func (d *DB) Get(key []byte) ([]byte, error) {
	return d.getLatest(nil, key, nil)
}

// GetAppend appends the newest value of key to dst and returns the
// extended slice, or returns dst unchanged with ErrNotFound or another
// error. With room in dst (pass buf[:0] to reuse buf), a Get of a key whose
// block is cached, or that a memtable holds, allocates nothing: Get's one
// allocation is its copy of the value. The bytes are the caller's, as
// Get's are; nothing of the DB aliases them.
func (d *DB) GetAppend(dst, key []byte) ([]byte, error) {
	return d.getLatest(dst, key, nil)
}

// lookupKey is a Get's key with its filter hash, computed once and passed
// to every table the Get probes.
type lookupKey struct {
	UserKey []byte
	hash    uint64
}

// getLatest looks key up as of the newest visible write (Get, ExplainGet).
// trace, when not nil, records each source consulted (kvshell's explain).
func (d *DB) getLatest(dst, key []byte, trace *GetTrace) ([]byte, error) {
	d.counters.gets.Add(1)
	if !d.reads.enter() {
		return dst, ErrClosed
	}
	defer d.reads.exit()
	rs, seq, err := d.loadLatestReadState()
	if err != nil {
		return dst, err
	}
	defer rs.unref()
	return d.getIn(rs, dst, key, seq, trace)
}

// getAt looks key up as of seq, a snapshot's number: the DB keeps every
// version a snapshot reads (compaction's C1), so any read state pinned
// after the snapshot was taken holds it.
func (d *DB) getAt(dst, key []byte, seq base.SeqNum, trace *GetTrace) ([]byte, error) {
	d.counters.gets.Add(1)
	if !d.reads.enter() {
		return dst, ErrClosed
	}
	defer d.reads.exit()
	rs, err := d.loadReadState()
	if err != nil {
		return dst, err
	}
	defer rs.unref()
	return d.getIn(rs, dst, key, seq, trace)
}

// getIn looks key up as of seq in rs: memtables newest first, then L0
// tables newest first, then at most one table per deeper level (K4). Each
// table's filter answers before any block is read (the sstable reader's
// T6). The value is appended to dst; on an error dst is returned as given.
func (d *DB) getIn(rs *readState, dst, key []byte, seq base.SeqNum, trace *GetTrace) ([]byte, error) {
	lk := lookupKey{UserKey: key, hash: filters.Hash(key)}
	if d.hasRangeDels(rs) {
		return d.getCovered(rs, dst, lk, seq, trace) // K8
	}

	if v, kind, found := rs.mem.GetHashed(key, lk.hash, seq); found {
		trace.memtable("mutable memtable", true)
		return result(dst, v, kind)
	}
	trace.memtable("mutable memtable", false)
	for i := len(rs.imm) - 1; i >= 0; i-- {
		if v, kind, found := rs.imm[i].GetHashed(key, lk.hash, seq); found {
			trace.memtable("immutable memtable", true)
			return result(dst, v, kind)
		}
		trace.memtable("immutable memtable", false)
	}
	for level, tables := range rs.v.Levels {
		if level == 0 {
			for _, t := range tables {
				if !t.ContainsUserKey(key) {
					continue
				}
				v, kind, found, err := d.getFromTable(dst, t, level, lk, seq, trace)
				if err != nil || found {
					return tableResult(dst, v, kind, err)
				}
			}
			continue
		}
		t := rs.v.TableFor(level, key)
		if t == nil {
			continue
		}
		v, kind, found, err := d.getFromTable(dst, t, level, lk, seq, trace)
		if err != nil || found {
			return tableResult(dst, v, kind, err)
		}
	}
	return dst, ErrNotFound
}

// getFromTable reads key from table t, its value appended to dst. With a
// trace, the reader fills a per-call GetStats, so the trace shows this
// Get's work alone however many reads and compactions run beside it;
// without one the ordinary Get path runs and nothing extra is allocated or
// counted.
func (d *DB) getFromTable(dst []byte, t *manifest.TableMetadata, level int, key lookupKey, seq base.SeqNum, trace *GetTrace) ([]byte, base.Kind, bool, error) {
	h, err := d.tables.acquire(t)
	if err != nil {
		return dst, 0, false, err
	}
	defer h.release()
	r := h.reader()
	// The reader copies the value out of its block before releasing it,
	// so v is already the caller's copy: the one allocation of a Get, or
	// none when dst has room.
	if trace == nil {
		return r.GetHashed(dst, key.UserKey, key.hash, seq, nil)
	}
	var gs sstable.GetStats
	v, kind, found, err := r.GetHashed(dst, key.UserKey, key.hash, seq, &gs)
	trace.table(level, t, &gs, found, err)
	return v, kind, found, err
}

// result turns a memtable hit into Get's answer: the value appended to
// dst, a copy, since memtable values alias memory the memtable owns. An
// empty value is a non-nil empty slice, so it never reads as an absent one.
func result(dst, v []byte, kind base.Kind) ([]byte, error) {
	if kind == base.KindDelete {
		return dst, ErrNotFound
	}
	if out := append(dst, v...); out != nil {
		return out, nil
	}
	return []byte{}, nil
}

// tableResult turns a table hit into Get's answer. v is dst with the
// value appended already (getFromTable); an empty value is returned as a
// non-nil empty slice, as memtable hits are.
func tableResult(dst, v []byte, kind base.Kind, err error) ([]byte, error) {
	switch {
	case err != nil:
		return dst, err
	case kind == base.KindDelete:
		return dst, ErrNotFound
	case v == nil:
		return []byte{}, nil
	}
	return v, nil
}
