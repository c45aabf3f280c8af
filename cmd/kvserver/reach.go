package main

import (
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// heartbeatWatch records, from raft's observations on the leader, which
// members its heartbeats currently fail to reach: the raft half of
// memberAlive (S10); and, from the transport (reportingTransport), which
// members last answered one of its AppendEntries, heartbeats included,
// and when: what a removal counts as reached (S11). A member is unreachable from its first failed
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

	// fresh is how long an answer counts as the member reached: a
	// leader heartbeats every member every tenth of the heartbeat
	// timeout, so one that answered none for a whole timeout is not
	// reached now.
	fresh time.Duration

	// reporting: the transport reports answers (transport), so reached
	// and answeredSince can be true. Set before raft starts.
	reporting bool

	mu       sync.Mutex
	failing  map[raft.ServerID]time.Time // REQUIRES: mu; last failure seen
	answered map[raft.ServerID]time.Time // REQUIRES: mu; last AppendEntries answered
	// answeredAt is answered by the address the AppendEntries went to.
	answeredAt map[raft.ServerAddress]time.Time // REQUIRES: mu
}

func newHeartbeatWatch(heartbeatTimeout time.Duration) *heartbeatWatch {
	w := &heartbeatWatch{
		// raft drops an observation when the channel is full, so it has
		// room for a burst from every member while run drains it.
		ch:         make(chan raft.Observation, 256),
		window:     2 * (raftTimeout + heartbeatTimeout),
		fresh:      heartbeatTimeout,
		failing:    make(map[raft.ServerID]time.Time),
		answered:   make(map[raft.ServerID]time.Time),
		answeredAt: make(map[raft.ServerAddress]time.Time),
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

// reached reports whether id answered an AppendEntries this node sent it
// within the last heartbeat timeout: positive evidence, unlike
// !unreachable, which holds too for a member no heartbeat has been sent
// to yet (a leadership just begun) or whose failures take raftTimeout to
// show (a dead host's dial).
func (w *heartbeatWatch) reached(id raft.ServerID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.answered[id]
	return ok && time.Since(last) < w.fresh
}

// answeredSince reports whether the server at addr answered an
// AppendEntries this node sent it after t: that a server runs raft there
// (S12). It goes by address, not ID: a member of the joiner's ID at
// another address answering says nothing of this one.
func (w *heartbeatWatch) answeredSince(addr raft.ServerAddress, t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.answeredAt[addr]
	return ok && last.After(t)
}

func (w *heartbeatWatch) sawAnswer(id raft.ServerID, addr raft.ServerAddress) {
	now := time.Now()
	w.mu.Lock()
	w.answered[id], w.answeredAt[addr] = now, now
	w.mu.Unlock()
}

// transport is t reporting to w every AppendEntries a member answers.
// Only a leader sends AppendEntries, so on a follower nothing is
// reported. A transport without pre-vote is returned as it is: wrapped,
// raft would take it for one with pre-vote; and then no member is
// reached, so a removal needs force (S11).
func (w *heartbeatWatch) transport(t raft.Transport) raft.Transport {
	if _, ok := t.(raft.WithPreVote); !ok {
		return t
	}
	w.reporting = true
	return reportingTransport{Transport: t, w: w}
}

// reportingTransport is a raft transport that tells its heartbeatWatch of
// every AppendEntries answered. It keeps the transport's pre-vote and
// Close, which raft looks for by type.
type reportingTransport struct {
	raft.Transport
	w *heartbeatWatch
}

func (t reportingTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := t.Transport.AppendEntries(id, target, args, resp)
	if err == nil {
		t.w.sawAnswer(id, target)
	}
	return err
}

func (t reportingTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.Transport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

func (t reportingTransport) Close() error {
	if c, ok := t.Transport.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
