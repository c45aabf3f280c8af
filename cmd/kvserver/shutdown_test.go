package main

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestShutdownAnswersQueuedFutures caught a write, and Shutdown, hanging
// for good (it hung make test's cluster cleanup once, in leaderLoop's
// barrier): raft drops the futures of entries still queued for its FSM
// goroutine when it shuts down, unanswered (hashicorp/raft issue 498).
// Here the FSM goroutine is held inside Snapshot (on stateMachine.mu,
// which the test holds shared) while a write commits and queues behind
// it; then the node shuts down. Once the FSM goroutine is let go it picks
// raft's shutdown or the queued write at random, so four rounds make the
// dropped case near certain; the write must return either way.
func TestShutdownAnswersQueuedFutures(t *testing.T) {
	for round := 0; round < 4; round++ {
		_, tr := raft.NewInmemTransport("")
		n, err := StartNode(Config{ID: "n1", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:1", Transport: tr, HeartbeatTimeout: 100 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "leadership and the member record", 5*time.Second, func() bool { return n.isLeader() && n.leaderHTTP() != "" })
		if err := n.apply(command{op: opSet, key: []byte("k"), value: []byte("v")}); err != nil {
			t.Fatal(err)
		}

		n.fsm.mu.RLock()
		go n.raft.Snapshot().Error()
		waitFor(t, "the FSM goroutine to wait in Snapshot", 5*time.Second, func() bool {
			if n.fsm.mu.TryRLock() { // fails once a writer waits
				n.fsm.mu.RUnlock()
				return false
			}
			return true
		})
		last := n.raft.LastIndex()
		wrote := make(chan error, 1)
		go func() { wrote <- n.apply(command{op: opSet, key: []byte("k"), value: []byte("queued")}) }()
		waitFor(t, "the write to queue for the FSM", 5*time.Second, func() bool { return n.raft.AppliedIndex() > last })
		shut := make(chan error, 1)
		go func() { shut <- n.Shutdown() }()
		<-n.stop
		n.fsm.mu.RUnlock()

		select {
		case <-wrote:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a write queued for the FSM at shutdown is still waiting", round)
		}
		select {
		case <-shut:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Shutdown is still waiting", round)
		}
	}
}
