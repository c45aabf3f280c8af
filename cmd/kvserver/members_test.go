package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// listMembers is GET /members through node i: the status and, on 200,
// the members.
func (c *testCluster) listMembers(i int) (int, []member) {
	c.t.Helper()
	code, body, err := doRetrying(c.client, func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, c.https[i].URL+"/members", nil)
		return req
	})
	if err != nil {
		c.t.Fatalf("GET /members via n%d: %v", i+1, err)
	}
	var ms []member
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &ms); err != nil {
			c.t.Fatalf("GET /members via n%d: %v in %q", i+1, err, body)
		}
	}
	return code, ms
}

// reachable reports whether node i's GET /members lists id as reached by
// the leader's heartbeats, and whether it lists id at all.
func (c *testCluster) reachable(i int, id string) (reached, listed bool) {
	c.t.Helper()
	_, ms := c.listMembers(i)
	for _, m := range ms {
		if m.ID == id {
			return m.Reachable != nil && *m.Reachable, true
		}
	}
	return false, false
}

// removeMember sends DELETE /members/ID (query appended) through node i.
func (c *testCluster) removeMember(i int, id, query string) (int, string) {
	c.t.Helper()
	code, body, err := doRetrying(c.client, func() *http.Request {
		req, _ := http.NewRequest(http.MethodDelete, c.https[i].URL+"/members/"+id+query, nil)
		return req
	})
	if err != nil {
		c.t.Fatalf("DELETE /members/%s via n%d: %v", id, i+1, err)
	}
	return code, body
}

// nodeStatus is node i's own /status.
func (c *testCluster) nodeStatus(i int) statusReply {
	c.t.Helper()
	resp, err := c.client.Get(c.https[i].URL + "/status")
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var s statusReply
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		c.t.Fatalf("status of n%d: %v", i+1, err)
	}
	return s
}

// send is one request through node i, not retried and no redirect
// followed: the node's own answer.
func (c *testCluster) send(i int, method, path, body string) (int, string) {
	c.t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: c.client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(method, c.https[i].URL+path, strings.NewReader(body))
	resp, err := client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

// logWatch collects a node's log, to wait for what raft says it did.
type logWatch struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logWatch) has(s string) bool { return strings.Contains(l.String(), s) }

// String is the log so far; raft may still be writing to it.
func (l *logWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newWatchedCluster is a settled testCluster whose nodes send their raft
// logs, warnings up, each to its logWatch by ID; and its leader.
func newWatchedCluster(t *testing.T) (*testCluster, map[string]*logWatch, int) {
	logs := map[string]*logWatch{}
	c := newTestCluster(t, func(cfg *Config) {
		if logs[cfg.ID] == nil {
			logs[cfg.ID] = &logWatch{}
		}
		cfg.LogOutput, cfg.LogLevel = logs[cfg.ID], "WARN"
	})
	c.waitSettled()
	return c, logs, c.waitLeader("a leader")
}

// followers are the two nodes other than l.
func followers(l int) (int, int) { return (l + 1) % 3, (l + 2) % 3 }

// stopAFollower settles c and stops one follower for good. It returns
// the leader, the follower left, and the stopped node and its ID.
func (c *testCluster) stopAFollower() (l, live, dead int, deadID string) {
	c.t.Helper()
	c.waitSettled()
	l = c.waitLeader("a leader")
	dead, live = followers(l)
	deadID = c.nodes[dead].cfg.ID
	c.stop(dead)
	return l, live, dead, deadID
}

// TestRemoveDeadMember: a member stopped for good is removed through a
// follower (forwarded to the leader, one hop), and the two left commit
// writes, as a majority of the two. Removing it again is 404.
func TestRemoveDeadMember(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	l, via, _, deadID := c.stopAFollower()
	waitFor(t, "the leader to see the stopped member unreached", 10*time.Second, func() bool {
		reached, listed := c.reachable(via, deadID)
		return listed && !reached
	})
	var forwarded atomic.Int64
	h := *c.api[l].h.Load()
	counted := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && r.Header.Get(forwardedHeader) != "" {
			forwarded.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	c.api[l].h.Store(&counted)
	if code, msg := c.removeMember(via, deadID, ""); code != http.StatusNoContent {
		t.Fatalf("remove the stopped member %s via follower n%d: %d %s", deadID, via+1, code, msg)
	}
	if c.leader() == l && forwarded.Load() != 1 {
		t.Fatalf("the removal reached the leader %d times forwarded; want once", forwarded.Load())
	}
	now := c.waitLeader("a leader")
	if hasMember(c.nodes[now], raft.ServerID(deadID)) || c.voters(now) != 2 {
		t.Fatalf("after the removal the leader has %d members, %s among them: %v", c.voters(now), deadID, hasMember(c.nodes[now], raft.ServerID(deadID)))
	}
	for i := 0; i < 10; i++ {
		c.put(via, fmt.Sprintf("k%d", i), "v")
	}
	if v, code := c.get(via, "k9", false); code != http.StatusOK || v != "v" {
		t.Fatalf("read after the removal: %d %q", code, v)
	}
	if code, ms := c.listMembers(via); code != http.StatusOK || len(ms) != 2 {
		t.Fatalf("GET /members after the removal: %d %+v", code, ms)
	}
	if code, msg := c.removeMember(via, deadID, ""); code != http.StatusNotFound {
		t.Fatalf("remove %s again: %d %s; want 404", deadID, code, msg)
	}
}

// TestRemoveRefusedWithoutReachedMajority: with one of three members
// down, removing a live one (follower or leader) would leave one live
// voter of two: refused, 409, and nothing changes. Forced, the removal is
// proposed, the leader steps down (503), and the removal commits once the
// stopped member is back.
func TestRemoveRefusedWithoutReachedMajority(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	l, live, dead, deadID := c.stopAFollower()
	liveID, leaderID := c.nodes[live].cfg.ID, c.nodes[l].cfg.ID
	waitFor(t, "the leader to see the stopped member unreached", 10*time.Second, func() bool {
		reached, listed := c.reachable(live, deadID)
		return listed && !reached
	})
	for _, id := range []string{liveID, leaderID} {
		code, msg := c.removeMember(live, id, "")
		if code != http.StatusConflict || !strings.Contains(msg, "force=true") || !strings.Contains(msg, deadID) {
			t.Fatalf("remove live %s with %s down: %d %s; want 409 naming %s and force", id, deadID, code, msg, deadID)
		}
	}
	if n := c.waitLeader("a leader"); c.voters(n) != 3 {
		t.Fatalf("a refused removal changed the configuration: %d members", c.voters(n))
	}
	if code, msg := c.removeMember(live, liveID, "?force=nope"); code != http.StatusBadRequest {
		t.Fatalf("force=nope: %d %s; want 400", code, msg)
	}

	// Forced, the leader proposes the removal, then steps down: it
	// cannot reach a majority of the new configuration, {leader, stopped
	// member}. The removal commits once the stopped member is back.
	if code, msg := c.send(l, http.MethodDelete, "/members/"+liveID+"?force=true", ""); code != http.StatusServiceUnavailable || !strings.Contains(msg, "may yet commit") {
		t.Fatalf("forced removal of %s with %s down: %d %s; want 503, proposed", liveID, deadID, code, msg)
	}
	c.start(dead)
	waitFor(t, "the forced removal to commit", 10*time.Second, func() bool {
		n := c.leader()
		return n >= 0 && n != live && c.voters(n) == 2 && c.nodes[n].raft.CommitIndex() >= c.nodes[n].raft.LastIndex()
	})
	n := c.waitLeader("a leader")
	if !isVoter(c.nodes[n], deadID) || hasMember(c.nodes[n], raft.ServerID(liveID)) || c.voters(n) != 2 {
		t.Fatalf("after the forced removal: %d members, %s a voter %v, %s a member %v", c.voters(n), deadID, isVoter(c.nodes[n], deadID), liveID, hasMember(c.nodes[n], raft.ServerID(liveID)))
	}
}

// TestRemovedMemberStaysOut: a live member removed (the two left are
// reached) keeps running: it reports itself removed, answers 410 to
// writes and reads, and never calls an election, so the leader and its
// term stand. Removals go on down to one voter; the last is refused, even
// forced. Unknown IDs are 404.
func TestRemovedMemberStaysOut(t *testing.T) {
	t.Parallel()
	c, logs, l := newWatchedCluster(t)
	gone, other := followers(l)
	goneID := c.nodes[gone].cfg.ID
	term := c.nodes[l].raft.CurrentTerm()
	if code, msg := c.removeMember(l, goneID, ""); code != http.StatusNoContent {
		t.Fatalf("remove live %s: %d %s", goneID, code, msg)
	}
	waitFor(t, "the removed member to report it", 10*time.Second, func() bool { return c.nodeStatus(gone).Removed })
	for _, r := range []struct{ method, path string }{
		{http.MethodPut, "/kv/k"}, {http.MethodDelete, "/kv/k"}, {http.MethodGet, "/kv/k"}, {http.MethodGet, "/kv/k?stale=true"},
	} {
		if code, msg := c.send(gone, r.method, r.path, "v"); code != http.StatusGone || !strings.Contains(msg, "removed") {
			t.Fatalf("%s %s on the removed member: %d %s; want 410", r.method, r.path, code, msg)
		}
	}
	// raft says, once its heartbeat timeout passed, that it declined an
	// election as a server outside the configuration.
	waitFor(t, "the removed member to decline an election", 10*time.Second, func() bool {
		return logs[goneID].has("not part of")
	})
	c.put(other, "after", "v")
	if c.leader() != l || c.nodes[l].raft.CurrentTerm() != term || c.nodes[gone].raft.State() != raft.Follower {
		t.Fatalf("after the removal: leader n%d term %d (was n%d, %d), removed member %v", c.leader()+1, c.nodes[l].raft.CurrentTerm(), l+1, term, c.nodes[gone].raft.State())
	}

	if code, msg := c.removeMember(other, "n9", ""); code != http.StatusNotFound {
		t.Fatalf("remove unknown n9: %d %s; want 404", code, msg)
	}
	if code, msg := c.removeMember(other, c.nodes[other].cfg.ID, ""); code != http.StatusNoContent {
		t.Fatalf("remove the other follower: %d %s", code, msg)
	}
	for _, q := range []string{"", "?force=true"} {
		if code, msg := c.removeMember(l, c.nodes[l].cfg.ID, q); code != http.StatusConflict || !strings.Contains(msg, "last voter") {
			t.Fatalf("remove the last voter%s: %d %s; want 409", q, code, msg)
		}
	}
	c.put(l, "alone", "v")
	if code, ms := c.listMembers(l); code != http.StatusOK || len(ms) != 1 || !ms[0].Leader || ms[0].Reachable == nil || !*ms[0].Reachable {
		t.Fatalf("GET /members of the last voter: %d %+v", code, ms)
	}
}

// TestRemoveLeaderItself: the leader may remove itself; it answers once
// the removal commits, steps down, stays up outside the configuration
// (reporting it, declining elections), and the two left elect a leader.
func TestRemoveLeaderItself(t *testing.T) {
	t.Parallel()
	c, logs, l := newWatchedCluster(t)
	id := c.nodes[l].cfg.ID
	if code, msg := c.removeMember(l, id, ""); code != http.StatusNoContent {
		t.Fatalf("the leader removes itself: %d %s", code, msg)
	}
	waitFor(t, "a new leader of two", 10*time.Second, func() bool {
		n := c.leader()
		return n >= 0 && n != l && c.voters(n) == 2
	})
	waitFor(t, "the old leader to report its removal", 10*time.Second, func() bool { return c.nodeStatus(l).Removed })
	waitFor(t, "the old leader to decline an election", 10*time.Second, func() bool { return logs[id].has("not part of") })
	if code, msg := c.send(l, http.MethodPut, "/kv/k", "v"); code != http.StatusGone {
		t.Fatalf("PUT on the removed old leader: %d %s; want 410", code, msg)
	}
	c.put((l+1)%3, "k", "v")
	if n := c.waitLeader("a leader"); n == l {
		t.Fatalf("the removed old leader leads again")
	}
}

// TestMemberRemovedWhileCutOff: a member cut off from the others when
// it is removed, and reconnected only one way (it reaches them, the
// leader's raft does not reach it), never gets the removal from raft. It
// calls elections, which the members ignore (raft rejects a pre-vote
// from a server outside its configuration), so the leader and its term
// stand; and it learns of its removal from a member's GET /members, so
// it reports it and answers 410 as any removed member does.
func TestMemberRemovedWhileCutOff(t *testing.T) {
	t.Parallel()
	c, logs, l := newWatchedCluster(t)
	cut, other := followers(l)
	cutID := c.nodes[cut].cfg.ID
	for j := range c.trans {
		if j != cut {
			c.trans[j].Disconnect(c.addrs[cut])
			c.trans[cut].Disconnect(c.addrs[j])
		}
	}
	waitFor(t, "the leader to see the cut-off member unreached", 10*time.Second, func() bool {
		reached, listed := c.reachable(other, cutID)
		return listed && !reached
	})
	if code, msg := c.removeMember(other, cutID, ""); code != http.StatusNoContent {
		t.Fatalf("remove the cut-off %s: %d %s", cutID, code, msg)
	}
	term := c.nodes[l].raft.CurrentTerm()
	for j := range c.trans {
		if j != cut {
			c.trans[cut].Connect(c.addrs[j], c.trans[j])
		}
	}
	defer func() {
		if t.Failed() {
			for id, l := range logs {
				t.Logf("%s:\n%s", id, l)
			}
		}
	}()
	waitFor(t, "a member to reject the removed member's pre-vote", 10*time.Second, func() bool {
		return logs[c.nodes[l].cfg.ID].has("rejecting pre-vote request since node is not in configuration") ||
			logs[c.nodes[other].cfg.ID].has("rejecting pre-vote request since node is not in configuration")
	})
	waitFor(t, "the cut-off member to report its removal", 10*time.Second, func() bool { return c.nodeStatus(cut).Removed })
	if !hasMember(c.nodes[cut], raft.ServerID(cutID)) {
		t.Fatalf("the cut-off member got its removal from raft: the test no longer covers a removal raft did not deliver")
	}
	if code, msg := c.send(cut, http.MethodPut, "/kv/k", "v"); code != http.StatusGone {
		t.Fatalf("PUT on the cut-off removed member: %d %s; want 410", code, msg)
	}
	c.put(other, "k", "v")
	if c.leader() != l || c.nodes[l].raft.CurrentTerm() != term {
		t.Fatalf("the removed member's elections disrupted the cluster: leader n%d term %d (was n%d, %d)", c.leader()+1, c.nodes[l].raft.CurrentTerm(), l+1, term)
	}
}

// TestMembersRoutesNeedAuth: GET /members and DELETE /members/ID without
// the token are 401 and remove nothing (K2).
func TestMembersRoutesNeedAuth(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, withToken(testToken))
	c.waitSettled()
	l := c.waitLeader("a leader")
	f, _ := followers(l)
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/members"}, {http.MethodDelete, "/members/" + c.nodes[f].cfg.ID}, {http.MethodDelete, "/members/" + c.nodes[f].cfg.ID + "?force=true"},
	} {
		for _, i := range []int{l, f} {
			req, _ := http.NewRequest(r.method, c.https[i].URL+r.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s %s on n%d without the token: %d; want 401", r.method, r.path, i+1, resp.StatusCode)
			}
		}
	}
	if n := c.waitLeader("a leader"); c.voters(n) != 3 {
		t.Fatalf("an unauthenticated removal changed the configuration: %d members", c.voters(n))
	}
	if code, ms := c.listMembers(f); code != http.StatusOK || len(ms) != 3 {
		t.Fatalf("GET /members with the token via a follower: %d %+v", code, ms)
	}
}

// TestRemoveAfterElectionCountsOnlyAnswers: a leader just elected has
// seen no heartbeat to a stopped member fail yet (raft's in-memory
// transport takes half a second to; a dead host's dial, raftTimeout).
// Counting every member without a failure as reached, it let the old
// leader's removal through, leaving the new leader and the stopped
// member, a configuration that commits nothing. Only members that
// answered count: refused.
func TestRemoveAfterElectionCountsOnlyAnswers(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	old, next, _, deadID := c.stopAFollower()
	if err := c.nodes[old].raft.LeadershipTransferToServer(raft.ServerID(c.nodes[next].cfg.ID), c.addrs[next]).Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	waitFor(t, "the new leader", 10*time.Second, func() bool { return c.leader() == next })
	code, msg := c.send(next, http.MethodDelete, "/members/"+c.nodes[old].cfg.ID, "")
	if code != http.StatusConflict {
		t.Fatalf("remove the old leader right after the election, with %s stopped: %d %s; want 409", deadID, code, msg)
	}
	if n := c.waitLeader("a leader"); c.voters(n) != 3 {
		t.Fatalf("a refused removal changed the configuration: %d members", c.voters(n))
	}
}
