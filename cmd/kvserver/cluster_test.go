package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// testCluster is three nodes on raft's in-memory transport, each with its
// own data directory and a real HTTP server for its API.
type testCluster struct {
	t     *testing.T
	nodes []*Node
	trans []*raft.InmemTransport
	addrs []raft.ServerAddress
	https []*httptest.Server
	api   []*swapHandler
	dirs  []string
	// opts adjust every node's Config; client carries the token they set.
	opts   []func(*Config)
	client *http.Client
	// wrap, if set, is the raft transport each node is given around its
	// in-memory one (which connect still connects to the others).
	wrap func(i int, tr *raft.InmemTransport) raft.Transport
}

// swapHandler lets a restarted node take over its HTTP server.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := s.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.Error(w, "node down", http.StatusServiceUnavailable)
}

func (c *testCluster) config(i int) Config {
	cfg := Config{
		ID:       fmt.Sprintf("n%d", i+1),
		Dir:      c.dirs[i],
		HTTPAddr: c.https[i].Listener.Addr().String(),
		// Short enough for fast failover, long enough that a loaded
		// machine under -race does not keep calling elections.
		HeartbeatTimeout:  250 * time.Millisecond,
		SnapshotThreshold: 32,
		SnapshotInterval:  50 * time.Millisecond,
		TrailingLogs:      16,
		LogOutput:         io.Discard,
		LogLevel:          "ERROR",
	}
	if i > 0 {
		cfg.Join = c.https[0].URL
	}
	for _, o := range c.opts {
		o(&cfg)
	}
	return cfg
}

// start (re)starts node i from its directory on a fresh in-memory
// transport at its old address, connected both ways to the others.
func (c *testCluster) start(i int) {
	c.t.Helper()
	cfg := c.connect(i)
	n, err := StartNode(cfg)
	if err != nil {
		c.t.Fatalf("start %s: %v", cfg.ID, err)
	}
	c.serve(i, n)
}

// connect gives node i a fresh in-memory transport at its old address,
// connected both ways to the others, and returns the Config to start it
// with. With serve, it is start in two halves, so that StartNode can run
// on another goroutine (a fresh joiner's waits for the leader).
func (c *testCluster) connect(i int) Config {
	_, tr := raft.NewInmemTransport(c.addrs[i])
	for j, other := range c.trans {
		if j != i && other != nil {
			tr.Connect(c.addrs[j], other)
			other.Connect(c.addrs[i], tr)
		}
	}
	c.trans[i] = tr
	cfg := c.config(i)
	cfg.Transport = tr
	if c.wrap != nil {
		cfg.Transport = c.wrap(i, tr)
	}
	return cfg
}

// serve makes the started node n node i, serving its HTTP API.
func (c *testCluster) serve(i int, n *Node) {
	c.nodes[i] = n
	h := NewHandler(n)
	c.api[i].h.Store(&h)
}

// stop shuts node i down; its HTTP server answers 503 until it restarts.
func (c *testCluster) stop(i int) {
	c.t.Helper()
	if err := c.nodes[i].Shutdown(); err != nil {
		c.t.Fatalf("shut n%d down: %v", i+1, err)
	}
	c.nodes[i] = nil
	c.api[i].h.Store(nil)
}

func newTestCluster(t *testing.T, opts ...func(*Config)) *testCluster {
	return newWrappedTestCluster(t, nil, opts...)
}

// newWrappedTestCluster is newTestCluster with each node's transport
// wrapped (testCluster.wrap).
func newWrappedTestCluster(t *testing.T, wrap func(int, *raft.InmemTransport) raft.Transport, opts ...func(*Config)) *testCluster {
	c := &testCluster{t: t, nodes: make([]*Node, 3), trans: make([]*raft.InmemTransport, 3), opts: opts, wrap: wrap}
	var probe Config
	for _, o := range opts {
		o(&probe)
	}
	c.client = &http.Client{Timeout: 10 * time.Second, Transport: bearer{token: probe.Token, next: http.DefaultTransport}}
	root := t.TempDir()
	for i := 0; i < 3; i++ {
		c.addrs = append(c.addrs, raft.ServerAddress(fmt.Sprintf("inmem-n%d", i+1)))
		c.dirs = append(c.dirs, filepath.Join(root, fmt.Sprintf("n%d", i+1)))
		api := &swapHandler{}
		c.api = append(c.api, api)
		c.https = append(c.https, httptest.NewServer(api))
	}
	t.Cleanup(func() {
		for i, n := range c.nodes {
			if n != nil {
				n.Shutdown()
			}
			c.https[i].Close()
		}
	})
	for i := 0; i < 3; i++ {
		c.start(i)
	}
	return c
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *testCluster) leader() int {
	for i, n := range c.nodes {
		if n != nil && n.raft.State() == raft.Leader && n.leaderHTTP() != "" {
			return i
		}
	}
	return -1
}

// waitSettled waits for a leader with three voters, known (with its HTTP
// address) to every node.
func (c *testCluster) waitSettled() {
	c.t.Helper()
	waitFor(c.t, "a leader with three voters known to all", 10*time.Second, func() bool {
		l := c.leader()
		if l < 0 || c.voters(l) != 3 {
			return false
		}
		for _, n := range c.nodes {
			if n.leaderHTTP() == "" {
				return false
			}
		}
		return true
	})
}

// waitApplied waits until node i's state machine has applied every
// command node l's had when called (l's writes return once it applied
// them). raft's AppliedIndex is no such wait: it counts an entry once it
// is handed to the state machine, so a stale read right after it may miss
// the last writes, and a configuration entry never reaches the state
// machine at all.
func (c *testCluster) waitApplied(what string, i, l int) {
	c.t.Helper()
	want := c.nodes[l].fsm.applied.Load()
	waitFor(c.t, what, 10*time.Second, func() bool { return c.nodes[i].fsm.applied.Load() >= want })
}

// waitLeader waits for a leader and returns its index, read once: an
// election under load may unseat it between two calls of leader.
func (c *testCluster) waitLeader(what string) int {
	c.t.Helper()
	l := -1
	waitFor(c.t, what, 10*time.Second, func() bool { l = c.leader(); return l >= 0 })
	return l
}

// voters is the number of voters in node i's latest configuration.
func (c *testCluster) voters(i int) int {
	n := 0
	for _, s := range c.nodes[i].configServers() {
		if s.Suffrage == raft.Voter {
			n++ // a joiner is a nonvoter until it has answered (S12)
		}
	}
	return n
}

// put writes through node i's HTTP API, following a redirect to the leader.
func (c *testCluster) put(i int, key, value string) {
	c.t.Helper()
	code, body, err := doRetrying(c.client, func() *http.Request {
		req, _ := http.NewRequest(http.MethodPut, c.https[i].URL+"/kv/"+key, bytes.NewReader([]byte(value)))
		return req
	})
	if err != nil || code != http.StatusNoContent {
		c.t.Fatalf("PUT %s via n%d: %d %s %v", key, i+1, code, body, err)
	}
}

// get reads key through node i; stale reads are served by i itself.
func (c *testCluster) get(i int, key string, stale bool) (string, int) {
	c.t.Helper()
	url := c.https[i].URL + "/kv/" + key
	if stale {
		url += "?stale=true"
	}
	code, body, err := doRetrying(c.client, func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		return req
	})
	if err != nil {
		c.t.Fatalf("GET %s via n%d: %v", key, i+1, err)
	}
	return body, code
}

// ackedWriters PUT keys through the nodes at urls in turn (followers
// redirect to the leader), from several goroutines until halted, and
// record every write acknowledged with 204. Each key is written once, so
// an acknowledged value is the only one it can hold.
type ackedWriters struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked map[string]string // guarded by mu
}

func startAckedWriters(client *http.Client, urls []string, writers int) *ackedWriters {
	a := &ackedWriters{stop: make(chan struct{}), acked: map[string]string{}}
	for w := range writers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-a.stop:
					return
				default:
				}
				key, val := fmt.Sprintf("w%d-%06d", w, i), fmt.Sprintf("v%d-%d", w, i)
				req, _ := http.NewRequest(http.MethodPut, urls[i%len(urls)]+"/kv/"+key, bytes.NewReader([]byte(val)))
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusNoContent {
					a.mu.Lock()
					a.acked[key] = val
					a.mu.Unlock()
				}
			}
		}()
	}
	return a
}

// count is the number of writes acknowledged so far.
func (a *ackedWriters) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acked)
}

// halt stops the writers and returns every acknowledged write, key to
// value.
func (a *ackedWriters) halt() map[string]string {
	close(a.stop)
	a.wg.Wait()
	return a.acked
}

// TestClusterLeaderFailover: a three-node cluster keeps taking writes when
// its leader shuts down, and the old leader, restarted from its directory,
// catches up by a snapshot install (its log fell behind the others'
// compacted logs) and serves every write.
func TestClusterLeaderFailover(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t)
	waitFor(t, "a leader with three voters", 10*time.Second, func() bool {
		l := c.leader()
		return l >= 0 && c.voters(l) == 3
	})
	const before, after = 60, 120
	for i := 0; i < before; i++ {
		c.put(i%3, fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i))
	}
	old := c.waitLeader("the leader")
	if err := c.nodes[old].Shutdown(); err != nil {
		t.Fatalf("shut the leader down: %v", err)
	}
	c.nodes[old] = nil
	c.api[old].h.Store(nil)
	next := c.waitLeader("a new leader")
	for i := before; i < before+after; i++ {
		c.put(next, fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i))
	}
	// Snapshot now so the new leader's log starts past what the old leader
	// holds: it can catch up only by an installed snapshot.
	if err := c.nodes[next].raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	first, _ := c.nodes[next].store.FirstIndex()
	c.start(old)
	restarted := c.nodes[old]
	c.waitApplied("the restarted node to catch up", old, next)
	if restarted.fsm.gen < 2 {
		t.Fatalf("restarted node caught up without restoring a snapshot (leader's log starts at %d)", first)
	}
	for i := 0; i < before+after; i++ {
		key, want := fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i)
		if got, code := c.get(old, key, true); code != http.StatusOK || got != want {
			t.Fatalf("stale read of %s on the restarted node: %d %q; want %q", key, code, got, want)
		}
		if got, code := c.get((old+1)%3, key, false); code != http.StatusOK || got != want {
			t.Fatalf("linearizable read of %s: %d %q; want %q", key, code, got, want)
		}
	}
	if _, code := c.get(next, "absent", false); code != http.StatusNotFound {
		t.Fatalf("read of an absent key: %d; want 404", code)
	}
}

// TestLostStateRestoredFromSnapshot: a node whose state directory is gone
// (but whose raft log and snapshots remain) restores the newest snapshot
// before raft starts, since raft itself replays only the entries after it.
func TestLostStateRestoredFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	cfg := Config{ID: "solo", Dir: dir, HTTPAddr: srv.Listener.Addr().String(), HeartbeatTimeout: 100 * time.Millisecond,
		TrailingLogs: 4, LogOutput: io.Discard, LogLevel: "ERROR"}
	start := func() *Node {
		_, tr := raft.NewInmemTransport("inmem-solo")
		c := cfg
		c.Transport = tr
		n, err := StartNode(c)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "leadership", 5*time.Second, func() bool { return n.raft.State() == raft.Leader })
		return n
	}
	n := start()
	set := func(i int) {
		if err := n.apply(command{op: opSet, key: fmt.Appendf(nil, "k%d", i), value: fmt.Appendf(nil, "v%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		set(i)
	}
	if err := n.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	for i := 30; i < 35; i++ {
		set(i)
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	n = start()
	defer n.Shutdown()
	waitFor(t, "the log replayed", 5*time.Second, func() bool { return n.raft.AppliedIndex() >= n.raft.CommitIndex() })
	for i := 0; i < 35; i++ {
		v, err := n.linearizableRead(fmt.Appendf(nil, "k%d", i))
		if err != nil || string(v) != fmt.Sprintf("v%d", i) {
			t.Fatalf("k%d after losing the state dir: %q, %v", i, v, err)
		}
	}
}
