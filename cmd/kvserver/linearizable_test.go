package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// regOp is one operation on a single register (one key) as a client saw
// it: called at call, answered at ret (ns since the history began). A
// write whose answer was not 204 may or may not have taken effect: it is
// optional, and its ret is +inf. A value of "" is the key absent (a
// delete, or a read's 404).
type regOp struct {
	call, ret int64
	write     bool
	optional  bool
	value     string
}

func (o regOp) String() string {
	kind := "read"
	if o.write {
		kind = "write"
	}
	if o.optional {
		kind += "?"
	}
	ret := "inf"
	if o.ret != math.MaxInt64 {
		ret = fmt.Sprint(o.ret / 1e3)
	}
	return fmt.Sprintf("%s %q [%dus, %sus]", kind, o.value, o.call/1e3, ret)
}

// linearizable reports whether ops, the history of one register starting
// absent, has a linearization (Wing and Gong's search, memoized on the set
// of operations placed and the register's value). Optional writes nobody
// read are dropped first: leaving one out of a linearization leaves a
// linearization, so they only widen the search.
func linearizable(ops []regOp) bool {
	read := map[string]bool{}
	for _, o := range ops {
		if !o.write {
			read[o.value] = true
		}
	}
	var h []regOp
	required := 0
	for _, o := range ops {
		if o.optional && !read[o.value] && o.value != "" {
			continue
		}
		if !o.optional {
			required++
		}
		h = append(h, o)
	}
	placed := make([]bool, len(h))
	seen := map[string]bool{}
	key := func(state string) string {
		var b strings.Builder
		for _, p := range placed {
			if p {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		return b.String() + "|" + state
	}
	var search func(state string, left int) bool
	search = func(state string, left int) bool {
		if left == 0 {
			return true
		}
		k := key(state)
		if seen[k] {
			return false
		}
		seen[k] = true
		// The next operation placed must have been called before every
		// operation not yet placed returned.
		minRet := int64(math.MaxInt64)
		for i, o := range h {
			if !placed[i] && o.ret < minRet {
				minRet = o.ret
			}
		}
		for i, o := range h {
			if placed[i] || o.call > minRet || (!o.write && o.value != state) {
				continue
			}
			next, l := state, left
			if o.write {
				next = o.value
			}
			if !o.optional {
				l--
			}
			placed[i] = true
			if search(next, l) {
				return true
			}
			placed[i] = false
		}
		return false
	}
	return search("", required)
}

func TestLinearizableChecker(t *testing.T) {
	w := func(call, ret int64, v string) regOp { return regOp{call: call, ret: ret, write: true, value: v} }
	r := func(call, ret int64, v string) regOp { return regOp{call: call, ret: ret, value: v} }
	maybe := func(call int64, v string) regOp {
		return regOp{call: call, ret: math.MaxInt64, write: true, optional: true, value: v}
	}
	for _, tc := range []struct {
		name string
		ops  []regOp
		want bool
	}{
		{"sequential", []regOp{w(0, 1, "a"), r(2, 3, "a"), w(4, 5, "b"), r(6, 7, "b")}, true},
		{"stale read", []regOp{w(0, 1, "a"), w(2, 3, "b"), r(4, 5, "a")}, false},
		{"read absent after ack", []regOp{w(0, 1, "a"), r(2, 3, "")}, false},
		{"concurrent read either", []regOp{w(0, 1, "a"), w(2, 6, "b"), r(3, 4, "a"), r(5, 7, "b")}, true},
		{"new then old", []regOp{w(0, 10, "a"), r(1, 2, "a"), r(3, 4, "")}, false},
		{"lost write read", []regOp{maybe(0, "a"), r(5, 6, "a"), r(7, 8, "a")}, true},
		{"lost write unread", []regOp{w(0, 1, "a"), maybe(2, "b"), r(5, 6, "a")}, true},
		{"maybe then gone", []regOp{maybe(0, "a"), r(5, 6, "a"), r(7, 8, "")}, false},
	} {
		if got := linearizable(tc.ops); got != tc.want {
			t.Errorf("%s: linearizable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// history records the operations of concurrent clients, per key.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   map[string][]regOp
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

func (h *history) add(key string, o regOp) {
	h.mu.Lock()
	h.ops[key] = append(h.ops[key], o)
	h.mu.Unlock()
}

func (h *history) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ops := range h.ops {
		n += len(ops)
	}
	return n
}

// partition cuts node i off from the others in raft, both ways; its
// HTTP API still answers clients.
func (c *testCluster) partition(i int) {
	for j := range c.trans {
		if j != i {
			c.trans[i].Disconnect(c.addrs[j])
			c.trans[j].Disconnect(c.addrs[i])
		}
	}
}

// heal connects node i to the others again.
func (c *testCluster) heal(i int) {
	for j := range c.trans {
		if j != i {
			c.trans[i].Connect(c.addrs[j], c.trans[j])
			c.trans[j].Connect(c.addrs[i], c.trans[i])
		}
	}
}

// TestPartitionedLeaderLinearizable: clients write, delete and read
// (linearizably) the same two keys through every node while the leader is
// cut off from the others in raft, a new leader is elected, and the
// partition heals. The old leader's HTTP API stays reachable the whole
// time, so clients keep asking it. Every key's history must be
// linearizable: the old leader acknowledges no write the new one lacks and
// serves no read older than an acknowledged write.
//
// Not parallel, as TestDeposedLeaderLinearizable: their clients load the
// machine, and the parallel tests that time elections would feel it.
func TestPartitionedLeaderLinearizable(t *testing.T) {
	c := newTestCluster(t)
	checkHistoriesAcross(t, c, c.partition, c.heal)
}

// TestDeposedLeaderLinearizable is TestPartitionedLeaderLinearizable with
// the leader's sends alone cut: the others elect a new leader, whose
// AppendEntries reach the old one and depose it, knowing the new leader,
// while writes it appended are in flight (raft.ErrLeadershipLost).
func TestDeposedLeaderLinearizable(t *testing.T) {
	c := newTestCluster(t)
	checkHistoriesAcross(t, c, func(i int) {
		for j := range c.trans {
			if j != i {
				c.trans[i].Disconnect(c.addrs[j])
			}
		}
	}, c.heal)
}

// checkHistoriesAcross runs clients on two keys through every node while
// cut(leader) and then heal(leader) change the network, and checks each
// key's history is linearizable.
func checkHistoriesAcross(t *testing.T, c *testCluster, cut, heal func(int)) {
	c.waitSettled()
	client := &http.Client{Timeout: 3 * time.Second, Transport: c.client.Transport}
	h := &history{start: time.Now(), ops: map[string][]regOp{}}
	keys := []string{"k0", "k1"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			// Paced, so that each key's history stays small enough to
			// search: an election takes a few heartbeat timeouts.
			tick := time.NewTicker(15 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				key := keys[rng.IntN(len(keys))]
				url := c.https[rng.IntN(len(c.https))].URL + "/kv/" + key
				var req *http.Request
				o := regOp{}
				switch p := rng.IntN(10); {
				case p < 4:
					o.write, o.value = true, fmt.Sprintf("c%d-%d", w, i)
					req, _ = http.NewRequest(http.MethodPut, url, bytes.NewReader([]byte(o.value)))
				case p < 5:
					o.write = true
					req, _ = http.NewRequest(http.MethodDelete, url, nil)
				default:
					req, _ = http.NewRequest(http.MethodGet, url, nil)
				}
				o.call = h.now()
				resp, err := client.Do(req)
				var body []byte
				code := 0
				if err == nil {
					body, _ = io.ReadAll(resp.Body)
					resp.Body.Close()
					code = resp.StatusCode
				}
				o.ret = h.now()
				switch {
				case o.write && code == http.StatusNoContent:
				case o.write:
					o.optional, o.ret = true, math.MaxInt64
				case code == http.StatusOK:
					o.value = string(body)
				case code == http.StatusNotFound:
					o.value = ""
				default:
					continue // a failed read tells nothing
				}
				h.add(key, o)
			}
		}()
	}
	halt := func() {
		close(stop)
		wg.Wait()
	}
	defer func() {
		select {
		case <-stop:
		default:
			halt()
		}
	}()
	waitOps := func(what string, n int) {
		t.Helper()
		want := h.len() + n
		waitFor(t, what, 20*time.Second, func() bool { return h.len() >= want })
	}

	waitOps("operations before the partition", 40)
	old := c.leader()
	if old < 0 {
		t.Fatal("no leader to cut off")
	}
	cut(old)
	waitFor(t, "a new leader among the others", 10*time.Second, func() bool {
		for j, n := range c.nodes {
			if j != old && n.raft.State() == raft.Leader && n.leaderHTTP() != "" {
				return true
			}
		}
		return false
	})
	waitOps("operations during the partition", 60)
	heal(old)
	waitOps("operations after the partition healed", 40)
	halt()

	for _, key := range keys {
		ops := h.ops[key]
		t.Logf("%s: %d operations", key, len(ops))
		if !linearizable(ops) {
			var b strings.Builder
			for _, o := range ops {
				fmt.Fprintln(&b, o)
			}
			t.Errorf("history of %s (%d operations) is not linearizable:\n%s", key, len(ops), b.String())
		}
	}
}
