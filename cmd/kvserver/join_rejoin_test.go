package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// joinLog records the joins one node's HTTP API received from one ID.
type joinLog struct {
	mu    sync.Mutex
	fresh []bool // per join, whether it was a fresh one
}

// wrap passes every request to next, recording the joins from id.
func (j *joinLog) wrap(id string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/join" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct {
				ID    string `json:"id"`
				Fresh bool   `json:"fresh"`
			}
			if json.Unmarshal(body, &req) == nil && req.ID == id {
				j.mu.Lock()
				j.fresh = append(j.fresh, req.Fresh)
				j.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (j *joinLog) seen() []bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]bool(nil), j.fresh...)
}

// TestWipedMemberRejoinsAsNew caught a member that lost its directory and
// restarted with its ID, raft address and -join being taken back as
// "already a voter", with an empty log and no memory of its votes. Writes
// commit on n2 and n3 while n1 is down; n3 loses its directory; n2 is
// down too. n1 and the wiped n3 then made a majority that elected n1,
// which lacks the writes, and n2's log was overwritten to match (its
// state kept them: the members diverged): acknowledged writes lost on
// n1 and n3. The wiped node must not start raft before a leader has
// committed its removal, which needs n2; then it is added back as a new
// voter, and every write is on every node.
//
// Losing only the raft directory, with snapshots/ and state/ kept, loses
// the vote and the entries after the snapshot just the same: raft took
// the snapshots for state, and the node back as the voter it was.
func TestWipedMemberRejoinsAsNew(t *testing.T) {
	t.Parallel()
	t.Run("directory", func(t *testing.T) {
		testWipedMemberRejoins(t, func(c *testCluster, i int) error { return os.RemoveAll(c.dirs[i]) })
	})
	t.Run("raft store", func(t *testing.T) {
		testWipedMemberRejoins(t, func(c *testCluster, i int) error { return os.RemoveAll(filepath.Join(c.dirs[i], "raft")) })
	})
}

// testWipedMemberRejoins is TestWipedMemberRejoinsAsNew with the wiped
// node's loss made by wipe, called once it has taken a snapshot and
// stopped.
func testWipedMemberRejoins(t *testing.T, wipe func(c *testCluster, i int) error) {
	// No automatic snapshots: the leader's log keeps the whole
	// configuration history.
	c := newTestCluster(t, func(cfg *Config) { cfg.SnapshotThreshold = 1 << 30 })
	c.waitSettled()
	const a, b, wiped = 0, 1, 2 // n1 is the node the others join through
	if c.leader() == a {
		// With n1 a follower when it stops, its term is not above the
		// others', and the failure this test catches is the write loss.
		if err := c.nodes[a].raft.LeadershipTransfer().Error(); err != nil {
			t.Fatalf("leadership transfer: %v", err)
		}
	}
	c.stop(a)
	var keys []string
	for i := 0; i < 20; i++ {
		key := fmt.Sprintf("k%02d", i)
		c.put(b, key, "v"+key)
		keys = append(keys, key)
	}
	c.waitApplied("the node to wipe to apply the writes", wiped, b)
	if err := c.nodes[wiped].raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	c.stop(b)
	c.stop(wiped)
	if err := wipe(c, wiped); err != nil {
		t.Fatal(err)
	}

	c.start(a)
	joins := &joinLog{}
	h := joins.wrap(fmt.Sprintf("n%d", wiped+1), *c.api[a].h.Load())
	c.api[a].h.Store(&h)
	type started struct {
		n   *Node
		err error
	}
	done := make(chan started, 1)
	cfg := c.connect(wiped)
	go func() {
		n, err := StartNode(cfg)
		done <- started{n, err}
	}()
	waitFor(t, "the wiped node's join to reach n1", 10*time.Second, func() bool { return len(joins.seen()) > 0 })
	select {
	case s := <-done:
		t.Errorf("the wiped node started raft while no leader could remove it (n2 down): it votes and acknowledges with an empty log")
		done <- s
	default:
	}
	if f := joins.seen(); !f[0] {
		t.Errorf("the wiped node's first join was not a fresh one: %v", f)
	}

	c.start(b)
	select {
	case s := <-done:
		if s.err != nil {
			t.Fatalf("start the wiped node: %v", s.err)
		}
		c.serve(wiped, s.n)
	case <-time.After(10 * time.Second):
		t.Fatal("the wiped node did not start within 10s of n2's return")
	}
	c.waitSettled()
	l := c.waitLeader("a leader")
	for i := range c.nodes {
		c.waitApplied("every node to apply the leader's writes", i, l)
	}
	for i := range c.nodes {
		var lost []string
		for _, key := range keys {
			if got, code := c.get(i, key, true); code != http.StatusOK || got != "v"+key {
				lost = append(lost, key)
			}
		}
		if len(lost) > 0 {
			t.Errorf("n%d lacks %d of the %d acknowledged writes: %v", i+1, len(lost), len(keys), lost)
		}
	}
	for _, key := range keys {
		if got, code := c.get(wiped, key, false); code != http.StatusOK || got != "v"+key {
			t.Fatalf("linearizable read of acknowledged %s: %d %q", key, code, got)
		}
	}

	// The leader's log holds the wiped node's removal, then its return.
	id := raft.ServerID(cfg.ID)
	history := configHistory(t, c.nodes[l])
	step := 0 // 0: not yet a member, 1: a member, 2: removed, 3: back
	for _, cf := range history {
		if in := hasID(cf, id); in == (step%2 == 0) {
			step++
		}
	}
	if step < 3 {
		t.Errorf("the leader's configurations %v: %s was not removed and then added back", history, id)
	}
}

// configHistory is every configuration in n's raft log, in log order.
func configHistory(t *testing.T, n *Node) []raft.Configuration {
	t.Helper()
	first, _ := n.store.FirstIndex()
	last, _ := n.store.LastIndex()
	var out []raft.Configuration
	for i := first; i <= last && i > 0; i++ {
		var l raft.Log
		if err := n.store.GetLog(i, &l); err != nil {
			t.Fatalf("log %d: %v", i, err)
		}
		if l.Type == raft.LogConfiguration {
			out = append(out, raft.DecodeConfiguration(l.Data))
		}
	}
	return out
}

func hasID(cf raft.Configuration, id raft.ServerID) bool {
	for _, s := range cf.Servers {
		if s.ID == id {
			return true
		}
	}
	return false
}

// TestRemovedMemberRejoinsWithItsState caught a member removed while it
// was down never coming back when restarted with its directory and
// -join: having state, it sent no join, and its peers, whose
// configuration no longer held it, ignored it. It keeps its log and
// vote, so it is added back as a voter and catches up.
func TestRemovedMemberRejoinsWithItsState(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	c.waitSettled()
	l := c.waitLeader("a leader")
	x := (l + 1) % 3
	if x == 0 { // n1 has no -join
		x = (l + 2) % 3
	}
	id := c.nodes[x].cfg.ID
	c.stop(x)
	if err := c.nodes[l].raft.RemoveServer(raft.ServerID(id), 0, 0).Error(); err != nil {
		t.Fatalf("remove %s: %v", id, err)
	}
	for i := 0; i < 10; i++ {
		c.put(l, fmt.Sprintf("r%d", i), "after removal")
	}
	c.start(x)
	waitFor(t, id+" back as a voter", 10*time.Second, func() bool {
		l := c.leader()
		return l >= 0 && isVoter(c.nodes[l], id)
	})
	l = c.waitLeader("a leader")
	c.waitApplied(id+" to catch up", x, l)
	for i := 0; i < 10; i++ {
		if got, code := c.get(x, fmt.Sprintf("r%d", i), true); code != http.StatusOK || got != "after removal" {
			t.Fatalf("r%d on the rejoined %s: %d %q", i, id, code, got)
		}
	}
}

// TestFreshJoinNeedsALeaderThatKnowsIt: a 200 to a fresh join from a
// leader that does not say it took the join as fresh (an older kvserver,
// which would have answered "already a member" without removing
// anything) does not let the joiner start raft.
func TestFreshJoinNeedsALeaderThatKnowsIt(t *testing.T) {
	var fresh, plain atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req joinRequest
		json.NewDecoder(r.Body).Decode(&req)
		if req.Fresh {
			fresh.Add(1)
		} else {
			plain.Add(1)
		}
		w.WriteHeader(http.StatusOK) // no joinReply: an older leader
	}))
	defer srv.Close()
	var log bytes.Buffer
	n := &Node{cfg: Config{Join: srv.URL, LogOutput: &log}, sec: &security{}, peers: (&security{}).httpClient("")}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req := joinRequest{ID: "n3", Raft: "127.0.0.1:7003", HTTP: "127.0.0.1:8003", Fresh: true}
	if err := n.requestJoin(ctx, req); err == nil {
		t.Fatal("a fresh join answered by a leader without fresh joins was taken as done")
	}
	if fresh.Load() < 2 || plain.Load() != 0 || !strings.Contains(log.String(), "ordinary one") {
		t.Fatalf("%d fresh and %d plain joins sent, log %q; want fresh ones retried and the reason logged", fresh.Load(), plain.Load(), log.String())
	}
	req.Fresh = false
	if err := n.requestJoin(context.Background(), req); err != nil {
		t.Fatalf("an ordinary join answered 200 without a body: %v", err)
	}
}

// soloNode is the config of a one-node cluster in a directory of the
// test's, and a function starting a node on it (each time with a fresh
// in-memory transport, as a restarted process would have).
func soloNode(t *testing.T) (Config, func() (*Node, error)) {
	cfg := Config{ID: "solo", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:1", HeartbeatTimeout: 100 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"}
	return cfg, func() (*Node, error) {
		_, tr := raft.NewInmemTransport("inmem-solo")
		c := cfg
		c.Transport = tr
		return StartNode(c)
	}
}

// TestRaftStoreLostRefusedWithoutJoin caught a node whose raft directory
// was lost, its snapshots kept, starting as the member it was without
// -join: raft took the snapshots for its state, with no vote and none of
// the entries after the last snapshot, which in a one-node cluster were
// acknowledged writes, silently lost. It is ErrRaftStateLost.
func TestRaftStoreLostRefusedWithoutJoin(t *testing.T) {
	cfg, start := soloNode(t)
	n, err := start()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leadership", 5*time.Second, func() bool { return n.isLeader() })
	for i := 0; i < 3; i++ {
		if err := n.apply(command{op: opSet, key: fmt.Appendf(nil, "k%d", i), value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.apply(command{op: opSet, key: []byte("after"), value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(cfg.Dir, "raft")); err != nil {
		t.Fatal(err)
	}
	if n, err := start(); !errors.Is(err, ErrRaftStateLost) {
		if err == nil {
			n.Shutdown()
		}
		t.Fatalf("StartNode without -join after losing the raft directory = %v; want ErrRaftStateLost", err)
	}
}

// TestRaftStoreLostBeforeSnapshotRefused caught a one-node cluster whose
// raft directory was lost before its first snapshot, its state directory
// kept, starting again without -join: it bootstrapped a new cluster on the
// old state, whose log numbered its entries from 1 again, and the state
// machine skipped each new command up to its old applied index while the
// client was told it was written (a PUT answered 204, then a
// linearizable GET returned the value before it). Without a snapshot the
// state DB's applied index is what says a log existed: ErrRaftStateLost,
// as with snapshots, and starting over needs the state gone too.
func TestRaftStoreLostBeforeSnapshotRefused(t *testing.T) {
	cfg, start := soloNode(t)
	n, err := start()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "leadership", 5*time.Second, func() bool { return n.isLeader() })
	for i := 0; i < 5; i++ {
		if err := n.apply(command{op: opSet, key: []byte("k"), value: []byte("old")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(cfg.Dir, "raft")); err != nil {
		t.Fatal(err)
	}
	if n, err := start(); !errors.Is(err, ErrRaftStateLost) {
		if err == nil {
			// Show what the refusal prevents.
			waitFor(t, "leadership", 5*time.Second, func() bool { return n.isLeader() })
			aerr := n.apply(command{op: opSet, key: []byte("k"), value: []byte("new")})
			v, rerr := n.linearizableRead([]byte("k"))
			n.Shutdown()
			t.Fatalf("StartNode without -join after losing the raft directory before any snapshot started; then set k=new: %v, read k = %q, %v", aerr, v, rerr)
		}
		t.Fatalf("StartNode without -join after losing the raft directory before any snapshot = %v; want ErrRaftStateLost", err)
	}
	// Losing both directories is a new node: it starts a new cluster.
	if err := os.RemoveAll(filepath.Join(cfg.Dir, "state")); err != nil {
		t.Fatal(err)
	}
	n, err = start()
	if err != nil {
		t.Fatalf("StartNode on a directory without raft or state: %v", err)
	}
	defer n.Shutdown()
	waitFor(t, "leadership", 5*time.Second, func() bool { return n.isLeader() })
	if err := n.apply(command{op: opSet, key: []byte("k"), value: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if v, err := n.linearizableRead([]byte("k")); err != nil || string(v) != "new" {
		t.Fatalf("read k = %q, %v; want new", v, err)
	}
}
