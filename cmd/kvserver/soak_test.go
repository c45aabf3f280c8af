package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// TestClusterSoakLeaderKills writes from three clients through every node
// while the leader is shut down and restarted again and again, then stops
// and restarts every node: each write acknowledged with 204 is read back
// from the new leader and from every node's own state. make test runs two
// kills; make soak (SIEVEKV_SOAK=1) runs forty.
func TestClusterSoakLeaderKills(t *testing.T) {
	rounds := 2
	if os.Getenv("SIEVEKV_SOAK") != "" {
		rounds = 40
	}
	c := newTestCluster(t)
	c.waitSettled()
	var mu sync.Mutex
	acked := map[string]string{}
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := 0; w < 3; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Each key is written once, so an acknowledged value is
				// the only one it can hold.
				key, val := fmt.Sprintf("w%d-%06d", w, i), fmt.Sprintf("v%d-%d", w, i)
				req, _ := http.NewRequest(http.MethodPut, c.https[i%3].URL+"/kv/"+key, bytes.NewReader([]byte(val)))
				resp, err := c.client.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusNoContent {
					mu.Lock()
					acked[key] = val
					mu.Unlock()
				}
			}
		}()
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	for round := 0; round < rounds; round++ {
		before := ackedCount()
		waitFor(t, "writes acknowledged before the kill", 10*time.Second, func() bool { return ackedCount() >= before+20 })
		old := c.waitLeader("a leader")
		if err := c.nodes[old].Shutdown(); err != nil {
			t.Fatalf("round %d: shut the leader down: %v", round, err)
		}
		c.nodes[old] = nil
		c.api[old].h.Store(nil)
		c.waitLeader("a new leader")
		c.start(old)
	}
	close(stop)
	writers.Wait()

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
