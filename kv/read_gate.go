package kv

import (
	"sync"
	"sync/atomic"
)

// readGate lets Close wait for the read operations in flight (a Get, an
// iterator's positioning call, building an iterator) before it closes the
// table files under them, and turns every later one away with ErrClosed.
// An iterator can stay open indefinitely, so Close cannot wait for
// iterators; it waits for each call, which is short, and the open
// iterator's next call fails instead.
//
// enter never blocks, so an operation may enter again inside itself
// (Iterator.First calling SeekGE).
type readGate struct {
	active  atomic.Int64
	closing atomic.Bool

	mu      sync.Mutex
	drained sync.Cond // on mu: broadcast when active reaches 0 while closing
}

// enter registers an operation; false means the DB is closing and the
// operation must return ErrClosed without touching any file.
func (g *readGate) enter() bool {
	g.active.Add(1)
	// The count is raised before closing is read, and close sets closing
	// before it reads the count: one of the two sees the other.
	if g.closing.Load() {
		g.exit()
		return false
	}
	return true
}

// exit ends an operation that entered.
func (g *readGate) exit() {
	if g.active.Add(-1) == 0 && g.closing.Load() {
		g.mu.Lock()
		g.drained.Broadcast()
		g.mu.Unlock()
	}
}

// close turns later operations away and waits for those in flight.
func (g *readGate) close() {
	g.closing.Store(true)
	g.mu.Lock()
	if g.drained.L == nil {
		g.drained.L = &g.mu
	}
	for g.active.Load() != 0 {
		g.drained.Wait()
	}
	g.mu.Unlock()
}
