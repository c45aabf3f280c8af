package kv

import (
	"github.com/sievekv/sievekv/internal/base"
)

// Snapshot is a read-only, point-in-time view of the DB: reads through it
// see exactly the writes committed before NewSnapshot returned. While a
// snapshot is open, compactions keep the versions it can see (compaction's
// C1). Close it when done.
type Snapshot struct {
	db     *DB
	seq    base.SeqNum
	closed bool
	// prev and next link the snapshot into DB.snapshots (guarded by DB.mu).
	prev, next *Snapshot
}

// NewSnapshot returns a snapshot of the DB's current state.
func (d *DB) NewSnapshot() *Snapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &Snapshot{db: d, seq: base.SeqNum(d.visibleSeq.Load())}
	if d.closed {
		s.closed = true
		return s
	}
	d.snapshots.pushBack(s)
	return s
}

// Get returns a copy of key's value as of the snapshot, or ErrNotFound.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	return s.db.getAt(nil, key, s.seq, nil)
}

// GetAppend is DB.GetAppend as of the snapshot: the value appended to dst,
// or dst unchanged with an error.
func (s *Snapshot) GetAppend(dst, key []byte) ([]byte, error) {
	if s.isClosed() {
		return dst, ErrClosed
	}
	return s.db.getAt(dst, key, s.seq, nil)
}

// NewIter returns an iterator over the snapshot's state.
func (s *Snapshot) NewIter(o *IterOptions) *Iterator {
	if s.isClosed() {
		return &Iterator{db: s.db, err: ErrClosed, state: stateClosed}
	}
	rs, err := s.db.loadReadState()
	if err != nil {
		return &Iterator{db: s.db, err: err, state: stateClosed}
	}
	return s.db.newIterator(rs, s.seq, o)
}

func (s *Snapshot) isClosed() bool {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	return s.closed
}

// Close releases the snapshot. Closing twice returns ErrClosed.
func (s *Snapshot) Close() error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closed = true
	s.db.snapshots.remove(s)
	return nil
}

// snapshotList is a doubly linked list of open snapshots, oldest first.
type snapshotList struct {
	head, tail *Snapshot
	n          int
}

func (l *snapshotList) pushBack(s *Snapshot) {
	s.prev, s.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = s
	} else {
		l.head = s
	}
	l.tail = s
	l.n++
}

func (l *snapshotList) remove(s *Snapshot) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		l.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.next = nil, nil
	l.n--
}

// seqs returns the sequence numbers of the open snapshots.
func (l *snapshotList) seqs() []base.SeqNum {
	out := make([]base.SeqNum, 0, l.n)
	for s := l.head; s != nil; s = s.next {
		out = append(out, s.seq)
	}
	return out
}
