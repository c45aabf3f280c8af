package kv

import "sync"

// tableCacheShard is one shard of the table cache: the readers of the
// tables whose numbers map to it, in a list bounded by its capacity.
//
// A hit only reads the index and counts a reference, so it takes the read
// lock; inserting, evicting and closing take the write lock. Eviction is
// second chance (CLOCK): a hit sets its entry's used bit instead of
// moving it to the front, and the sweep from the tail moves used entries
// back to the front, clearing the bit, and evicts the first unused one. So
// an entry is evicted only after it went a whole sweep without a hit, as
// LRU would roughly choose, without a write on the list per hit.
type tableCacheShard struct {
	mu       sync.RWMutex
	capacity int
	// Guarded by mu:
	closed bool
	byNum  map[fileNum]*cachedTable // the list's entries
	list   cachedTable              // sentinel: list.next is the newest
	// open holds every entry whose reader is not closed yet: those in
	// byNum and those evicted but still referenced.
	open map[*cachedTable]struct{}
}

func (s *tableCacheShard) init(capacity int) {
	s.capacity = capacity
	s.byNum = map[fileNum]*cachedTable{}
	s.open = map[*cachedTable]struct{}{}
	s.list.next, s.list.prev = &s.list, &s.list
}

// lookup returns num's entry with a reference for the caller, or nil if
// the shard does not hold it.
func (s *tableCacheShard) lookup(num fileNum) (*cachedTable, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	e := s.byNum[num]
	if e == nil {
		return nil, nil
	}
	// The list's reference keeps refs above zero while e is in byNum,
	// and it is dropped only under the write lock.
	e.refs.Add(1)
	if !e.used.Load() { // a load first: hits on a hot table share the line
		e.used.Store(true)
	}
	return e, nil
}

// insert returns num's entry with a reference for the caller, adding it
// (unopened) if no other goroutine did first, and evicts down to the
// capacity.
func (s *tableCacheShard) insert(num fileNum) (*cachedTable, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	e := s.byNum[num]
	var evicted []*cachedTable
	if e == nil {
		e = &cachedTable{shard: s, num: num}
		e.refs.Store(1) // the list's reference
		// Marked used, so a sweep over entries that are all used evicts
		// the oldest of them rather than the one just added.
		e.used.Store(true)
		s.byNum[num] = e
		s.open[e] = struct{}{}
		s.pushFrontLocked(e)
		evicted = s.shrinkLocked()
	}
	e.refs.Add(1)
	s.mu.Unlock()
	closeReaders(evicted)
	return e, nil
}

// forget takes an entry whose open failed out of the list, so the next
// acquire tries again.
func (s *tableCacheShard) forget(e *cachedTable) {
	s.mu.Lock()
	if e.inList {
		s.removeLocked(e) // the caller still holds a reference
	}
	s.mu.Unlock()
}

// evict drops the list's reference to num's reader, if it holds one.
func (s *tableCacheShard) evict(num fileNum) {
	s.mu.Lock()
	e := s.byNum[num]
	var done []*cachedTable
	if e != nil && s.removeLocked(e) {
		done = append(done, e)
	}
	s.mu.Unlock()
	closeReaders(done)
}

func (s *tableCacheShard) openCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.open)
}

// closeAll closes every reader of the shard and refuses acquires from now
// on.
func (s *tableCacheShard) closeAll() error {
	s.mu.Lock()
	s.closed = true
	all := make([]*cachedTable, 0, len(s.open))
	for e := range s.open {
		all = append(all, e)
	}
	for _, e := range all {
		if e.inList {
			s.removeLocked(e)
		}
	}
	s.mu.Unlock()
	var first error
	for _, e := range all {
		// An entry being opened has a holder inside once: wait for it.
		e.once.Do(func() {})
		if err := e.closeReader(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// pushFrontLocked makes e the newest entry of the list. REQUIRES: s.mu
// held for writing.
func (s *tableCacheShard) pushFrontLocked(e *cachedTable) {
	e.prev, e.next = &s.list, s.list.next
	s.list.next.prev = e
	s.list.next = e
	e.inList = true
}

// unlinkLocked takes e out of the list, keeping its references.
// REQUIRES: s.mu held for writing.
func (s *tableCacheShard) unlinkLocked(e *cachedTable) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
	e.inList = false
}

// removeLocked takes e out of the list and the index and drops the list's
// reference; it reports whether that was the last one (the caller then
// closes the reader, outside the lock). REQUIRES: s.mu held for writing,
// e.inList.
func (s *tableCacheShard) removeLocked(e *cachedTable) bool {
	s.unlinkLocked(e)
	if s.byNum[e.num] == e {
		delete(s.byNum, e.num)
	}
	return e.refs.Add(-1) == 0
}

// shrinkLocked evicts entries down to the capacity, giving each used one a
// second chance, and returns those whose readers are now unreferenced. It
// ends: hits set used bits under the read lock only, so while it holds the
// write lock every pass over the list clears bits, and within one lap of
// the list it meets an unused entry. REQUIRES: s.mu held for writing.
func (s *tableCacheShard) shrinkLocked() []*cachedTable {
	var done []*cachedTable
	for len(s.byNum) > s.capacity {
		tail := s.list.prev
		if tail.used.Load() {
			tail.used.Store(false)
			s.unlinkLocked(tail)
			s.pushFrontLocked(tail)
			continue
		}
		if s.removeLocked(tail) {
			done = append(done, tail)
		}
	}
	return done
}
