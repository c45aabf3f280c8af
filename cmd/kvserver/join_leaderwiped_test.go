package main

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/hashicorp/raft"
)

// TestWipedLeaderRejoinsThroughAFollower wipes the leader's directory and
// restarts it fresh with -join naming a follower, which forwards its joins
// to the leader the other two elected meanwhile: that leader must remove
// the old leader's ID (its heartbeats to it fail, S10) and add the node
// back as a new voter, every acknowledged write on all three.
func TestWipedLeaderRejoinsThroughAFollower(t *testing.T) {
	t.Parallel()
	// No automatic snapshots: the leader's log keeps the whole
	// configuration history.
	c := newTestCluster(t, func(cfg *Config) { cfg.SnapshotThreshold = 1 << 30 })
	c.waitSettled()
	old := c.waitLeader("a leader")
	var keys []string
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("k%02d", i)
		c.put(old, key, "v"+key)
		keys = append(keys, key)
	}
	c.stop(old)
	if err := os.RemoveAll(c.dirs[old]); err != nil {
		t.Fatal(err)
	}
	via := (old + 1) % 3
	cfg := c.connect(old)
	cfg.Join = c.https[via].URL
	n, err := StartNode(cfg)
	if err != nil {
		t.Fatalf("restart the wiped leader fresh through a follower: %v", err)
	}
	c.serve(old, n)
	c.waitSettled()
	l := c.waitLeader("a leader")
	if !isVoter(c.nodes[l], cfg.ID) {
		t.Fatalf("the wiped leader %s is not a voter again", cfg.ID)
	}
	history := configHistory(t, c.nodes[l])
	step := 0 // 0: not yet a member, 1: a member, 2: removed, 3: back
	for _, cf := range history {
		if in := hasID(cf, raft.ServerID(cfg.ID)); in == (step%2 == 0) {
			step++
		}
	}
	if step < 3 {
		t.Errorf("configurations %v: the wiped leader %s was never removed before it was added back", history, cfg.ID)
	}
	c.waitApplied("the wiped node to apply the writes", old, l)
	for _, key := range keys {
		if got, code := c.get(old, key, true); code != http.StatusOK || got != "v"+key {
			t.Fatalf("the rejoined node lacks acknowledged %s: %d %q", key, code, got)
		}
	}
}
