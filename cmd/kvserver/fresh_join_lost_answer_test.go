package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestPreS13FreshJoinAnswerLost caught a node refused for good when the
// answer to its fresh join never reached it (a third review): its state
// is older than cluster IDs, the leader took the fresh join and removed
// its old server, and the node crashed (or its HTTP client gave up)
// before it could store the ID the answer named (joinedClusterKey). Its
// next fresh join named no cluster again, and the leader, finding it no
// server of the configuration any more, refused it (ErrClusterMismatch).
// The leader now records the fresh join it took (opFreshJoin) before the
// removal, and counts the server as its own on a join naming no cluster.
func TestPreS13FreshJoinAnswerLost(t *testing.T) {
	a1, dirA2, raftA2 := preS13Member(t)
	body, err := json.Marshal(joinRequest{ID: "a2", Raft: raftA2, HTTP: "127.0.0.1:9", Fresh: true, Applied: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Refused as a live member's (409) until a1's heartbeats miss the
	// stopped a2 for a timeout; a2 would retry likewise.
	var lastErr error
	waitFor(t, "a1 to take a2's fresh join", 15*time.Second, func() bool {
		_, lastErr = postJoin(ctx, http.DefaultClient, a1.url, body)
		return lastErr == nil || !strings.Contains(lastErr.Error(), "409")
	})
	if lastErr != nil {
		t.Fatalf("the fresh join a2 would send: %v", lastErr)
	}
	// The answer is dropped; a2 restarts as it would, with -join.
	again := serveNode(t, Config{ID: "a2", Dir: dirA2, RaftAddr: raftA2, Join: a1.url})
	waitRejoined(t, a1, again, "after a fresh join whose answer was lost")
	// Its ordinary join, naming the cluster now, ends the record.
	waitFor(t, "a2's fresh-join record to go", 10*time.Second, func() bool { return a1.fsm.freshJoined("a2") == "" })
}

// TestFreshJoinRecordEndsAtMember: opFreshJoin records a server's raft
// address, and an opMember of the same ID deletes it.
func TestFreshJoinRecordEndsAtMember(t *testing.T) {
	sm, err := openStateMachine(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	apply := func(i uint64, c command) {
		t.Helper()
		if res := sm.Apply(&raft.Log{Type: raft.LogCommand, Index: i, Data: c.encode()}); res != nil {
			t.Fatal(res)
		}
	}
	apply(1, command{op: opFreshJoin, key: []byte("n2"), value: []byte("10.0.0.2:7000")})
	apply(2, command{op: opFreshJoin, key: []byte("n3"), value: []byte("10.0.0.3:7000")})
	if got := sm.freshJoined("n2"); got != "10.0.0.2:7000" {
		t.Fatalf("freshJoined(n2) = %q", got)
	}
	apply(3, command{op: opMember, key: []byte("n2"), value: []byte("10.0.0.2:8000")})
	if got, other := sm.freshJoined("n2"), sm.freshJoined("n3"); got != "" || other != "10.0.0.3:7000" {
		t.Fatalf("after n2's member command: freshJoined(n2) = %q, freshJoined(n3) = %q", got, other)
	}
	apply(4, command{op: opFreshJoinEnd, key: []byte("n3")})
	if got := sm.freshJoined("n3"); got != "" {
		t.Fatalf("after n3's fresh-join end: freshJoined(n3) = %q", got)
	}
}
