package main

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// heartbeatWatch records, from raft's observations on the leader, which
// members its heartbeats currently fail to reach: the raft half of
// memberAlive (S10). A member is unreachable from its first failed
// heartbeat until one succeeds again, its replication restarts (it was
// removed or re-added) or this node's raft state changes (a new
// leadership starts its heartbeats afresh and reports no recovery from
// failures of an older one).
type heartbeatWatch struct {
	obs *raft.Observer
	ch  chan raft.Observation
	// window is how long a failure counts without another: a failing
	// member fails again at least every raftTimeout plus raft's backoff
	// (at most half the heartbeat timeout), so a failure older than that
	// is one whose recovery was not seen (an observation dropped).
	window time.Duration

	mu      sync.Mutex
	failing map[raft.ServerID]time.Time // REQUIRES: mu; last failure seen
}

func newHeartbeatWatch(heartbeatTimeout time.Duration) *heartbeatWatch {
	w := &heartbeatWatch{
		// raft drops an observation when the channel is full, so it has
		// room for a burst from every member while run drains it.
		ch:      make(chan raft.Observation, 256),
		window:  2 * (raftTimeout + heartbeatTimeout),
		failing: make(map[raft.ServerID]time.Time),
	}
	w.obs = raft.NewObserver(w.ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.PeerObservation, raft.RaftState:
			return true
		}
		return false
	})
	return w
}

// run records observations until stop is closed.
func (w *heartbeatWatch) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case o := <-w.ch:
			w.mu.Lock()
			switch d := o.Data.(type) {
			case raft.FailedHeartbeatObservation:
				w.failing[d.PeerID] = time.Now()
			case raft.ResumedHeartbeatObservation:
				delete(w.failing, d.PeerID)
			case raft.PeerObservation:
				delete(w.failing, d.Peer.ID)
			case raft.RaftState:
				clear(w.failing)
			}
			w.mu.Unlock()
		}
	}
}

// unreachable reports whether this node's heartbeats to id are failing.
func (w *heartbeatWatch) unreachable(id raft.ServerID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.failing[id]
	return ok && time.Since(last) < w.window
}
