package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// freshJoinMember prepares a fresh join like a pre-S13 member's: a
// settled cluster with its ID applied, and the follower f whose ID and
// raft address the join names.
func freshJoinMember(t *testing.T, c *testCluster) (f int, req joinRequest) {
	t.Helper()
	c.waitSettled()
	l := c.waitLeader("a leader")
	waitClusterID(t, c.nodes[l])
	if idx := c.nodes[l].fsm.clusterRecord().index; idx <= 1 {
		t.Fatalf("cluster named at index %d; the test needs a state applied through 1 to lie below it", idx)
	}
	f = (l + 1) % 3
	return f, joinRequest{ID: c.nodes[f].cfg.ID, Raft: string(c.addrs[f]), Fresh: true, Applied: 1}
}

// takeFreshJoin stops follower f and sends req until the leader takes it
// (once raft stops counting f as alive).
func takeFreshJoin(t *testing.T, c *testCluster, f int, req joinRequest) {
	t.Helper()
	c.stop(f)
	waitFor(t, "the fresh join to be taken", 15*time.Second, func() bool {
		code, _ := c.joinLeader(req)
		return code == http.StatusOK
	})
}

// clusterWithFreshJoinRecord is a cluster whose leader l took the fresh
// join req of a stopped follower and kept its record.
func clusterWithFreshJoinRecord(t *testing.T) (c *testCluster, req joinRequest, l int) {
	t.Helper()
	c = newTestCluster(t)
	f, req := freshJoinMember(t, c)
	takeFreshJoin(t, c, f, req)
	l = c.waitLeader("a leader")
	if got := c.nodes[l].fsm.freshJoined(req.ID); got != req.Raft {
		t.Fatalf("the taken fresh join left record %q; want %q", got, req.Raft)
	}
	return c, req, l
}

// TestRefusedFreshJoinKeepsNoRecord (a review): the leader applied
// opFreshJoin as soon as the joiner's state passed, before it found the
// member of that ID alive and refused the join (409). The record stayed,
// and once the operator removed that member, it made the refused
// joiner's state (another cluster's, older than cluster IDs) a server of
// this cluster's, and its fresh join was taken.
func TestRefusedFreshJoinKeepsNoRecord(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	f, req := freshJoinMember(t, c)
	if code, msg := c.joinLeader(req); code != http.StatusConflict {
		t.Fatalf("fresh join as the live member %s: %d %s; want 409", req.ID, code, msg)
	}
	if got := c.nodes[c.waitLeader("a leader")].fsm.freshJoined(req.ID); got != "" {
		t.Errorf("a refused fresh join left a record %s -> %q", req.ID, got)
	}
	c.stop(f)
	if err := c.nodes[c.waitLeader("a leader")].removeMember(req.ID, false); err != nil {
		t.Fatalf("remove %s: %v", req.ID, err)
	}
	if code, msg := c.joinLeader(req); code != http.StatusPreconditionFailed {
		t.Fatalf("fresh join of the removed %s with a state older than cluster IDs: %d %s; want 412", req.ID, code, msg)
	}
}

// TestFreshJoinRecordEndsAtRemoval (a review): a fresh join taken, its
// answer lost, and the machine never back left a record that nothing
// could end: DELETE /members/ID answered "no such member", and the
// record vouched for any state older than cluster IDs at that ID and
// address for good. The removal now ends the record.
func TestFreshJoinRecordEndsAtRemoval(t *testing.T) {
	t.Parallel()
	c, req, l := clusterWithFreshJoinRecord(t)
	if got := c.nodes[l].status().FreshJoins; !slices.Equal(got, []string{req.ID}) {
		t.Fatalf("/status lists fresh joins %q; want [%s]", got, req.ID)
	}
	if err := c.nodes[l].removeMember(req.ID, false); err != nil {
		t.Fatalf("remove %s, which left only its fresh-join record: %v", req.ID, err)
	}
	for i, n := range c.nodes {
		if n != nil {
			c.waitApplied("the record's end to apply", i, l)
			if got := n.fsm.freshJoined(req.ID); got != "" {
				t.Errorf("%s still holds %s's record %q", n.cfg.ID, req.ID, got)
			}
		}
	}
	if got := c.nodes[l].status().FreshJoins; len(got) != 0 {
		t.Fatalf("/status lists fresh joins %q after the record's end", got)
	}
	if code, msg := c.joinLeader(req); code != http.StatusPreconditionFailed {
		t.Fatalf("fresh join after the record's end: %d %s; want 412", code, msg)
	}
	if err := c.nodes[l].removeMember(req.ID, false); err == nil {
		t.Fatal("a second removal of the same ID succeeded; want ErrUnknownMember")
	}
}

// TestFreshJoinRecordNeedsEveryMemberToTakeIt (a review): a kvserver
// older than op 5 refuses every snapshot holding an 'f' key, so a leader
// that kept the record with such a member in the cluster left it unable
// ever to catch up by snapshot. The leader now keeps the record only if
// every other member reports at /status that it applies it; here one
// answers as an older kvserver (no "ops"), and the join goes ahead
// without the record.
func TestFreshJoinRecordNeedsEveryMemberToTakeIt(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	f, req := freshJoinMember(t, c)
	old := 3 - f - c.waitLeader("a leader")
	h := *c.api[old].h.Load()
	var asOld http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var st map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
			t.Errorf("decode /status: %v", err)
		}
		delete(st, "ops")
		json.NewEncoder(w).Encode(st)
	})
	c.api[old].h.Store(&asOld)
	takeFreshJoin(t, c, f, req)
	l := c.waitLeader("a leader")
	if got := c.nodes[l].fsm.freshJoined(req.ID); got != "" {
		t.Fatalf("the leader kept record %q with a member older than op 5 in the cluster", got)
	}
	if got := c.nodes[l].status().Ops; got != int(lastOp) {
		t.Fatalf("/status reports ops %d; want %d", got, lastOp)
	}
}

// TestOlderJoinerEndsFreshJoinRecords: a server older than op 6 added
// while a fresh-join record exists would refuse every snapshot holding
// it, so its join (a request without "ops") ends every record first; a
// current joiner's leaves them.
func TestOlderJoinerEndsFreshJoinRecords(t *testing.T) {
	t.Parallel()
	c, req, l := clusterWithFreshJoinRecord(t)
	// n9 does not exist: each join gets as far as adding it and waiting
	// for its answer (502), past the point where records end.
	current := joinRequest{ID: "n9", Raft: "inmem-n9", Ops: int(lastOp)}
	if code, msg := c.joinLeader(current); code != http.StatusBadGateway {
		t.Fatalf("join of n9: %d %s; want 502", code, msg)
	}
	if got := c.nodes[l].fsm.freshJoined(req.ID); got != req.Raft {
		t.Fatalf("a current joiner ended %s's record (now %q)", req.ID, got)
	}
	older := current
	older.Ops = 0
	if code, msg := c.joinLeader(older); code != http.StatusBadGateway {
		t.Fatalf("join of n9 as an older kvserver: %d %s; want 502", code, msg)
	}
	if got := c.nodes[l].fsm.freshJoined(req.ID); got != "" {
		t.Fatalf("an older joiner was added with %s's record still held (%q)", req.ID, got)
	}
}
