package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestJoinKeepsAMemberRaftReaches caught a join removing a healthy voter
// whose /status the leader could not read: busy (503 beyond MaxRequests),
// slow (beyond memberProbeTimeout), cut off from the leader's HTTP
// client, or registered at an HTTP address it no longer serves. A fresh
// join under its ID, from a client with the token, a node started by
// mistake with that ID, or a node's own fresh join delayed or sent twice
// and arriving after it was added back, removed it (and a removed member
// hears from no leader, so it stayed out until it joined again). The leader's
// heartbeats reach it, so it is alive (S10): each such join is 409 and
// it stays a voter. Once its raft stops too, a fresh join under its ID
// removes it.
func TestJoinKeepsAMemberRaftReaches(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	c.waitSettled()
	leader := c.waitLeader("a leader")
	f := (leader + 1) % 3
	id, addr := c.nodes[f].cfg.ID, string(c.addrs[f])
	c.api[f].h.Store(nil) // its HTTP API answers 503; its raft runs on

	for _, req := range []joinRequest{
		{ID: id, Raft: addr, Fresh: true},
		{ID: id, Raft: "inmem-impostor", Fresh: true},
		{ID: "n9", Raft: addr, Fresh: true},
		{ID: "n9", Raft: string(c.addrs[leader]), Fresh: true},
		{ID: id, Raft: "inmem-impostor"},
	} {
		if code, msg := c.joinLeader(req); code != http.StatusConflict {
			t.Fatalf("join %+v of a member raft reaches: %d %s; want 409", req, code, msg)
		}
		if l := c.waitLeader("a leader"); !isVoter(c.nodes[l], id) || c.voters(l) != 3 {
			t.Fatalf("member %s lost to join %+v (leader %d, %d members)", id, req, l, c.voters(l))
		}
	}

	// Its raft stops as well: now a fresh join under its ID removes it.
	c.stop(f)
	var code int
	var msg string
	waitFor(t, "a fresh join to remove the stopped member", 10*time.Second, func() bool {
		code, msg = c.joinLeader(joinRequest{ID: id, Raft: addr, Fresh: true})
		return code == http.StatusOK
	})
	if l := c.waitLeader("a leader"); hasMember(c.nodes[l], raft.ServerID(id)) {
		t.Fatalf("the stopped member %s is still in the configuration after a fresh join: %d %s", id, code, msg)
	}
}
