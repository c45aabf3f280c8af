package main

import (
	"testing"
	"time"
)

// TestLeaderShutdownHandsOffLeadership (S14): a leader shut down cleanly (a
// rolling restart's SIGTERM) hands its leadership to another voter first,
// so the cluster has a leader again at once rather than after a
// follower's election timeout, and the data survives the handover.
// Without the handover no follower can stand before one heartbeat timeout
// of silence; the test gives the handover half of that.
func TestLeaderShutdownHandsOffLeadership(t *testing.T) {
	const heartbeat = 2 * time.Second
	c := newTestCluster(t, func(cfg *Config) { cfg.HeartbeatTimeout = heartbeat })
	c.waitSettled()
	old := c.leader()
	c.put(old, "before", "handover")
	c.stop(old)
	stopped := time.Now()
	waitFor(t, "a new leader within half a heartbeat timeout of the old one's shutdown", heartbeat/2, func() bool { return c.leader() >= 0 })
	t.Logf("new leader %v after the old leader's Shutdown returned", time.Since(stopped))
	now := c.leader()
	c.put(now, "after", "handover")
	if got, code := c.get(now, "before", false); code != 200 || got != "handover" {
		t.Fatalf("read of a write from before the handover on the new leader: %d %q", code, got)
	}
}
