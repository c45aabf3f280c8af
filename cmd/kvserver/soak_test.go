package main

import (
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestClusterSoakLeaderKills writes from three clients through every node
// while the leader is shut down and restarted again and again, then stops
// and restarts every node: each write acknowledged with 204 is read back
// from the new leader and from every node's own state. make test runs two
// kills; make soak (SIEVEKV_SOAK=1) runs forty.
func TestClusterSoakLeaderKills(t *testing.T) {
	t.Parallel()
	rounds := 2
	if os.Getenv("SIEVEKV_SOAK") != "" {
		rounds = 40
	}
	c := newTestCluster(t)
	c.waitSettled()
	w := startAckedWriters(c.client, []string{c.https[0].URL, c.https[1].URL, c.https[2].URL}, 3)
	for round := 0; round < rounds; round++ {
		before := w.count()
		waitFor(t, "writes acknowledged before the kill", 10*time.Second, func() bool { return w.count() >= before+20 })
		old := c.waitLeader("a leader")
		if err := c.nodes[old].Shutdown(); err != nil {
			t.Fatalf("round %d: shut the leader down: %v", round, err)
		}
		c.nodes[old] = nil
		c.api[old].h.Store(nil)
		c.waitLeader("a new leader")
		c.start(old)
	}
	acked := w.halt()

	for i := range c.nodes {
		if err := c.nodes[i].Shutdown(); err != nil {
			t.Fatalf("shut n%d down: %v", i+1, err)
		}
		c.nodes[i] = nil
		c.api[i].h.Store(nil)
	}
	for i := range c.nodes {
		c.start(i)
	}
	c.waitSettled()
	leader := c.waitLeader("a leader after the restart")
	t.Logf("%d rounds, %d writes acknowledged", rounds, len(acked))
	for key, want := range acked {
		if got, code := c.get(leader, key, false); code != http.StatusOK || got != want {
			t.Fatalf("acknowledged %s=%s read from the leader: %d %q", key, want, code, got)
		}
	}
	// The linearizable reads made the leader apply every entry committed
	// before them; wait for the others to reach its state machine's
	// applied index (raft's counts entries handed to the state machine,
	// not yet applied).
	applied := c.nodes[leader].fsm.applied.Load()
	for i, n := range c.nodes {
		waitFor(t, fmt.Sprintf("n%d to apply the log", i+1), 10*time.Second, func() bool { return n.fsm.applied.Load() >= applied })
	}
	for key, want := range acked {
		for i := range c.nodes {
			if got, code := c.get(i, key, true); code != http.StatusOK || got != want {
				t.Fatalf("acknowledged %s=%s in n%d's state: %d %q", key, want, i+1, code, got)
			}
		}
	}
}
