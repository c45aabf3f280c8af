package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// stalledLog is a node's in-memory transport on which, while stalled,
// every AppendEntries carrying entries fails: a member whose log writes
// hang or fail, which still answers heartbeats, so a leader keeps its
// lease yet commits nothing that needs this member.
type stalledLog struct {
	*raft.InmemTransport
	out     chan raft.RPC
	stalled atomic.Bool
}

func newStalledLog(t *testing.T, tr *raft.InmemTransport) *stalledLog {
	s := &stalledLog{InmemTransport: tr, out: make(chan raft.RPC)}
	serveRPCs(t, tr, func(rpc raft.RPC, done <-chan struct{}) bool {
		if ae, ok := rpc.Command.(*raft.AppendEntriesRequest); ok && len(ae.Entries) > 0 && s.stalled.Load() {
			// A typed response with the error: raft's in-memory pipeline
			// copies the response before it looks at the error, and a
			// nil one panicked the test binary (once replication to
			// the member was pipelined when the stall began).
			rpc.Respond(&raft.AppendEntriesResponse{}, errors.New("log write stalled"))
			return true
		}
		select {
		case s.out <- rpc:
			return true
		case <-done:
			return false
		}
	})
	return s
}

// serveRPCs passes every RPC tr receives to handle, on a goroutine that
// stops when the test ends or handle returns false. done is closed when
// the test ends.
func serveRPCs(t *testing.T, tr *raft.InmemTransport, handle func(rpc raft.RPC, done <-chan struct{}) bool) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case rpc := <-tr.Consumer():
				if !handle(rpc, done) {
					return
				}
			}
		}
	}()
}

func (s *stalledLog) Consumer() <-chan raft.RPC { return s.out }

// TestFreshJoinAnsweredOnlyOnceTheRemovalCommits caught a fresh join
// answered 200 while the removal it asked for was not committed. The
// leader decided from its latest configuration, which holds a removal as
// soon as it is proposed: a fresh joiner whose first request gave up
// waiting (the removal cannot commit while a majority of the members
// left is down) and which asked again was told at once that nothing was
// left to remove, and started raft with its old member still counted by
// every log but the leader's (S8). With the leader lost then, the
// wiped node's vote (granted with an empty configuration) could elect a
// member lacking writes the old one had acknowledged. A fresh join must
// not be answered 200 until its removal is committed, however often it
// is sent.
func TestFreshJoinAnsweredOnlyOnceTheRemovalCommits(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	c.waitSettled()
	slow := (c.waitLeader("a leader") + 1) % 3
	c.stop(slow)
	cfg := c.connect(slow)
	stall := newStalledLog(t, c.trans[slow])
	cfg.Transport = stall
	// Not asking to rejoin (S9): it is still a member, and a rejoin sent
	// late, once the stall began, would hold the leader's joins (they are
	// serialized, S12) on a member command that cannot commit, so that
	// the fresh join below could not even propose its removal.
	cfg.Join = ""
	n, err := StartNode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.serve(slow, n)
	c.waitSettled()
	leader := c.waitLeader("a leader")
	if leader == slow {
		if err := c.nodes[slow].raft.LeadershipTransfer().Error(); err != nil {
			t.Fatal(err)
		}
		leader = c.waitLeader("a leader other than the stalled node")
	}
	wiped := 3 - leader - slow
	req := joinRequest{ID: c.nodes[wiped].cfg.ID, Raft: string(c.addrs[wiped]), HTTP: c.nodes[wiped].cfg.HTTPAddr, Fresh: true}
	c.stop(wiped)
	stall.stalled.Store(true)

	body, _ := json.Marshal(req)
	post := func(timeout time.Duration) (int, string, error) {
		client := &http.Client{Timeout: timeout}
		resp, err := client.Post(c.https[leader].URL+"/join", "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(msg), nil
	}
	// The first asks for the removal, which cannot commit while the only
	// other member left cannot write its log; the joiner gives up and
	// sends it again.
	var code int
	var msg string
	waitFor(t, "the removal to be proposed", 10*time.Second, func() bool {
		code, msg, err = post(time.Second)
		if err == nil && code == http.StatusOK {
			t.Fatalf("fresh join answered %d %s with the removal's only other voter unable to write its log; want no 200 until the removal commits", code, msg)
		}
		return !hasMember(c.nodes[leader], raft.ServerID(req.ID))
	})
	for i := 0; i < 3; i++ {
		if code, msg, err = post(500 * time.Millisecond); err == nil && code == http.StatusOK {
			t.Fatalf("fresh join sent again while its removal is uncommitted: %d %s; want no 200 before the removal commits", code, msg)
		}
	}
	if c.nodes[leader].raft.State() != raft.Leader {
		t.Fatalf("the leader lost its lease: the test needs it to lead with the removal uncommitted")
	}
	// Once the member's log writes go through the removal commits, and
	// the fresh join is answered.
	stall.stalled.Store(false)
	waitFor(t, "the fresh join to be answered once its removal commits", 10*time.Second, func() bool {
		code, msg, err = post(2 * time.Second)
		return err == nil && code == http.StatusOK
	})
	if hasMember(c.nodes[slow], raft.ServerID(req.ID)) {
		t.Fatalf("fresh join answered %d %s, but %s is still in %s's configuration", code, msg, req.ID, c.nodes[slow].cfg.ID)
	}
}
