package main

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestHeartbeatWatchForgetsWhatANewStartVoids checks what ends a member's
// failing heartbeats besides one that succeeds: raft reports no recovery
// from failures of an older leadership or an older replication of the
// member (each starts its count afresh), so a mark kept across either
// would let a join remove a member raft reaches again (S10).
func TestHeartbeatWatchForgetsWhatANewStartVoids(t *testing.T) {
	w := newHeartbeatWatch(time.Second)
	stop := make(chan struct{})
	defer close(stop)
	go w.run(stop)
	send := func(d any) { w.ch <- raft.Observation{Data: d} }
	fail := func() {
		t.Helper()
		send(raft.FailedHeartbeatObservation{PeerID: "n2"})
		waitFor(t, "the failure recorded", 5*time.Second, func() bool { return w.unreachable("n2") })
	}
	for _, end := range []struct {
		what string
		obs  any
	}{
		{"a heartbeat that succeeds", raft.ResumedHeartbeatObservation{PeerID: "n2"}},
		{"a new leadership", raft.Follower},
		{"the member's replication restarted", raft.PeerObservation{Peer: raft.Server{ID: "n2"}}},
	} {
		fail()
		send(end.obs)
		waitFor(t, end.what+" to end the failure", 5*time.Second, func() bool { return !w.unreachable("n2") })
	}
	// A failure not repeated within the window is one whose recovery
	// went unseen.
	w.window = 50 * time.Millisecond
	fail()
	waitFor(t, "an old failure to lapse", 5*time.Second, func() bool { return !w.unreachable("n2") })
}

// TestHeartbeatWatchReachedNeedsAnAnswer: a member counts as reached
// (S11) only once it answered, and no longer once its last answer is a
// heartbeat timeout old: a member never heard from, as at the start of a
// leadership, or one that stopped answering before any failure showed,
// is not counted up for a removal.
func TestHeartbeatWatchReachedNeedsAnAnswer(t *testing.T) {
	w := newHeartbeatWatch(time.Second)
	if w.reached("n2") {
		t.Fatal("a member that never answered counts as reached")
	}
	w.sawAnswer("n2", "addr-n2")
	if !w.reached("n2") || w.reached("n3") {
		t.Fatalf("after n2 answered: n2 reached %v, n3 reached %v", w.reached("n2"), w.reached("n3"))
	}
	w.mu.Lock()
	w.fresh = 50 * time.Millisecond
	w.mu.Unlock()
	waitFor(t, "n2's answer to go stale", 5*time.Second, func() bool { return !w.reached("n2") })
}

// TestAnsweredSinceGoesByAddress: S12's check that a joiner answered is
// of its address and of answers after the join began. A server of the
// joiner's ID answering at another address, as a second join of the same
// ID would have it, or an answer from before, does not count.
func TestAnsweredSinceGoesByAddress(t *testing.T) {
	w := newHeartbeatWatch(time.Second)
	before := time.Now()
	w.sawAnswer("b", "addr-old")
	start := time.Now()
	w.sawAnswer("b", "addr-b")
	if !w.answeredSince("addr-b", start) || !w.answeredSince("addr-old", before) {
		t.Fatal("answers at addr-b and addr-old not seen")
	}
	if w.answeredSince("addr-nobody", before) {
		t.Fatal("b's answers at other addresses count for addr-nobody")
	}
	if w.answeredSince("addr-old", start) {
		t.Fatal("an answer from before the join counts")
	}
}

// TestMemberProbesReuseOneConnection: every probe of another member
// (askMember: removal watch, liveness of a conflicting join, fresh-join
// records) built a transport of its own, and left its kept-alive
// connection, two client goroutines and the server's one, until an idle
// timeout of 60-90 s: 100 probes left about 300 goroutines. The node's
// requests to members now share one client.
func TestMemberProbesReuseOneConnection(t *testing.T) {
	a := serveNode(t, Config{ID: "a"})
	a.waitLeader(t)
	b := serveNode(t, Config{ID: "b"})
	b.waitLeader(t)
	addr := strings.TrimPrefix(a.url, "http://")
	var s statusReply
	if !b.askMember(addr, "/status", &s) {
		t.Fatal("probe failed")
	}
	before := runtime.NumGoroutine()
	const probes = 100
	for range probes {
		if !b.askMember(addr, "/status", &s) {
			t.Fatal("probe failed")
		}
	}
	time.Sleep(100 * time.Millisecond)
	if grew := runtime.NumGoroutine() - before; grew > probes/4 {
		t.Fatalf("%d probes left %d more goroutines", probes, grew)
	}
}
