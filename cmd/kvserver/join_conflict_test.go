package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestJoinDoesNotReplaceALiveMember caught that a join naming a member's ID
// at another raft address removed that member first, taken for a machine
// that had been replaced: a node started by mistake with the leader's ID
// deposed the leader, and with a follower's ID voted the follower out,
// and either way took over the member's HTTP address, where followers
// redirect clients. A live member is kept (409); once it is down, a join
// with its ID replaces it.
func TestJoinDoesNotReplaceALiveMember(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	c.waitSettled()
	leader := c.waitLeader("a leader")
	lead := func() int { return c.waitLeader("a leader") }
	follower := (leader + 1) % 3
	join := func(id, addr string, fresh ...bool) (int, string) {
		t.Helper()
		return c.joinLeader(joinRequest{ID: id, Raft: addr, Fresh: len(fresh) > 0 && fresh[0]})
	}
	hasServer := func(i int, id, addr string) bool {
		for _, s := range c.nodes[i].configServers() {
			if s.ID == raft.ServerID(id) && s.Address == raft.ServerAddress(addr) {
				return true
			}
		}
		return false
	}
	for _, i := range []int{leader, follower} {
		id, httpAddr := c.nodes[i].cfg.ID, c.nodes[i].cfg.HTTPAddr
		if code, msg := join(id, "inmem-impostor"); code != http.StatusConflict {
			t.Fatalf("join as live member %s at another address: %d %s; want 409", id, code, msg)
		}
		l := lead()
		if !hasServer(l, id, string(c.addrs[i])) || c.voters(l) != 3 {
			t.Fatalf("member %s lost to a conflicting join (leader %d)", id, l)
		}
		if got := c.nodes[l].fsm.memberHTTP(id); got != httpAddr {
			t.Fatalf("member %s's HTTP address is %q after a conflicting join; want %s", id, got, httpAddr)
		}
	}

	// A fresh join (of a node without raft state) under a live member's
	// ID, even at that member's own address, is refused as well: the
	// member still holds its log and votes, and removing it would only
	// cost the cluster a voter (or its leader).
	for _, i := range []int{leader, follower} {
		id := c.nodes[i].cfg.ID
		if code, msg := join(id, string(c.addrs[i]), true); code != http.StatusConflict {
			t.Fatalf("fresh join as live member %s at its address: %d %s; want 409", id, code, msg)
		}
		if l := lead(); !hasServer(l, id, string(c.addrs[i])) || c.voters(l) != 3 {
			t.Fatalf("member %s lost to a conflicting fresh join (leader %d)", id, l)
		}
	}

	// A member without a vote joining again at its own address is the
	// same server, alive as it is: it gets its vote back.
	other := (leader + 2) % 3
	otherID := c.nodes[other].cfg.ID
	if err := c.nodes[lead()].raft.DemoteVoter(raft.ServerID(otherID), 0, 0).Error(); err != nil {
		t.Fatalf("demote %s: %v", otherID, err)
	}
	body, _ := json.Marshal(joinRequest{ID: otherID, Raft: string(c.addrs[other]), HTTP: c.nodes[other].cfg.HTTPAddr})
	resp, err := c.client.Post(c.https[lead()].URL+"/join", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !isVoter(c.nodes[lead()], otherID) {
		t.Fatalf("rejoin of the demoted %s: %d, voter %v; want 200 and a vote", otherID, resp.StatusCode, isVoter(c.nodes[lead()], otherID))
	}

	// The follower's machine is gone: a join with its ID replaces it,
	// once the leader's heartbeats to it have failed (S10), and the
	// replacement answers the leader (S12).
	id := c.nodes[follower].cfg.ID
	c.nodes[follower].Shutdown()
	c.nodes[follower] = nil
	c.api[follower].h.Store(nil)
	c.answeringPeer("inmem-replacement")
	var code int
	var msg string
	waitFor(t, "a join to replace the stopped member", 10*time.Second, func() bool {
		code, msg = join(id, "inmem-replacement")
		return code == http.StatusOK
	})
	l := lead()
	if !hasServer(l, id, "inmem-replacement") || hasServer(l, id, string(c.addrs[follower])) {
		t.Fatalf("the stopped member %s was not replaced: %d %s", id, code, msg)
	}
}

// joinLeader posts req to the current leader's /join, with an HTTP address
// nothing serves, and returns the answer's status and body.
func (c *testCluster) joinLeader(req joinRequest) (int, string) {
	c.t.Helper()
	req.HTTP = "127.0.0.1:9"
	body, _ := json.Marshal(req)
	resp, err := c.client.Post(c.https[c.waitLeader("a leader")].URL+"/join", "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

// configServers is the servers of n's latest configuration, none if raft
// cannot read it.
func (n *Node) configServers() []raft.Server {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return nil
	}
	return cf.Configuration().Servers
}

// hasMember reports whether n's latest configuration has a server id.
func hasMember(n *Node, id raft.ServerID) bool {
	_, ok := suffrage(n, id)
	return ok
}

func isVoter(n *Node, id string) bool {
	s, ok := suffrage(n, raft.ServerID(id))
	return ok && s == raft.Voter
}

// suffrage is id's suffrage in n's latest configuration, and whether id
// is in it at all.
func suffrage(n *Node, id raft.ServerID) (raft.ServerSuffrage, bool) {
	for _, s := range n.configServers() {
		if s.ID == id {
			return s.Suffrage, true
		}
	}
	return 0, false
}

// answeringPeer connects an in-memory raft transport at addr to every
// running node and answers its AppendEntries (answerAppendEntries).
func (c *testCluster) answeringPeer(addr raft.ServerAddress) {
	_, tr := raft.NewInmemTransport(addr)
	for i, other := range c.trans {
		if other != nil && c.nodes[i] != nil {
			tr.Connect(c.addrs[i], other)
			other.Connect(addr, tr)
		}
	}
	answerAppendEntries(c.t, tr)
}

// answerAppendEntries answers every AppendEntries tr receives, as a
// follower that took the entries would, and fails every other request:
// a raft peer a leader reaches (S12) without running raft.
func answerAppendEntries(t *testing.T, tr *raft.InmemTransport) {
	serveRPCs(t, tr, func(rpc raft.RPC, _ <-chan struct{}) bool {
		if req, ok := rpc.Command.(*raft.AppendEntriesRequest); ok {
			last := req.PrevLogEntry
			if n := len(req.Entries); n > 0 {
				last = req.Entries[n-1].Index
			}
			rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, Success: true, LastLog: last}, nil)
		} else {
			rpc.Respond(nil, errors.New("answerAppendEntries: only AppendEntries"))
		}
		return true
	})
}

// TestJoinCannotMoveTheLeadersHTTPAddress: a join naming the leader's own
// ID and raft address, as a voter already does when it joins again, was
// taken as that rejoin and registered the request's HTTP address: every
// follower then redirected clients, with their tokens, to it until the
// next election. The leader knows its own address; such a join is 409,
// and the leader's registered address and the followers' redirects stay.
func TestJoinCannotMoveTheLeadersHTTPAddress(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	c.waitSettled()
	l := c.waitLeader("a leader")
	id, own := c.nodes[l].cfg.ID, c.nodes[l].cfg.HTTPAddr
	if code, msg := c.joinLeader(joinRequest{ID: id, Raft: string(c.addrs[l])}); code != http.StatusConflict {
		t.Fatalf("join as the leader with another HTTP address: %d %s; want 409", code, msg)
	}
	if c.waitLeader("a leader") != l {
		t.Skip("leadership moved during the test")
	}
	if got := c.nodes[l].fsm.memberHTTP(id); got != own {
		t.Fatalf("the leader's HTTP address is %q after the join; want %s", got, own)
	}
	f := (l + 1) % 3
	if st := c.nodeStatus(f); st.LeaderHTTP != "" && st.LeaderHTTP != own {
		t.Fatalf("follower redirects to %q; the leader serves %s", st.LeaderHTTP, own)
	}
}
