package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// testToken is the bearer token of the tests' secured nodes.
const testToken = "test-token-0123456789abcdef"

func withToken(token string) func(*Config) { return func(c *Config) { c.Token = token } }

// TestHTTPAPI runs a cluster with a token, so every request here, the
// joins and forwarded joins included, is an authenticated one.
func TestHTTPAPI(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, withToken(testToken))
	noRedirect := &http.Client{
		Timeout:       5 * time.Second,
		Transport:     bearer{token: testToken, next: http.DefaultTransport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.waitSettled()
	leader := c.waitLeader("a leader")
	follower := (leader + 1) % 3
	leaderURL := c.https[leader].URL

	// A follower redirects writes and linearizable reads to the same
	// request on the leader, and serves stale reads itself.
	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodGet} {
		req, _ := http.NewRequest(m, c.https[follower].URL+"/kv/a%2Fb?x=1", strings.NewReader("v"))
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusTemporaryRedirect || loc != leaderURL+"/kv/a%2Fb?x=1" {
			t.Fatalf("%s on a follower: %d Location %q; want 307 to %s", m, resp.StatusCode, loc, leaderURL)
		}
	}
	c.put(follower, "a%2Fb", "slash") // the key is "a/b"
	if v, code := c.get(leader, "a%2Fb", false); code != http.StatusOK || v != "slash" {
		t.Fatalf("GET a/b: %d %q", code, v)
	}
	waitFor(t, "the follower to apply", 5*time.Second, func() bool {
		v, code := c.get(follower, "a%2Fb", true)
		return code == http.StatusOK && v == "slash"
	})
	c.put(leader, "empty", "")
	if v, code := c.get(leader, "empty", false); code != http.StatusOK || v != "" {
		t.Fatalf("GET of an empty value: %d %q", code, v)
	}

	req, _ := http.NewRequest(http.MethodDelete, leaderURL+"/kv/a%2Fb", nil)
	if resp, err := c.client.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if _, code := c.get(leader, "a%2Fb", false); code != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d; want 404", code)
	}

	// Bad requests are refused with a 4xx, not applied.
	for name, tc := range map[string]struct {
		method, path string
		body         []byte
		want         int
	}{
		"empty key":      {http.MethodPut, "/kv/", []byte("v"), http.StatusBadRequest},
		"oversize value": {http.MethodPut, "/kv/big", bytes.Repeat([]byte("x"), defaultMaxValueBytes+1), http.StatusRequestEntityTooLarge},
		"oversize key":   {http.MethodPut, "/kv/" + strings.Repeat("k", defaultMaxKeyBytes+1), []byte("v"), http.StatusRequestEntityTooLarge},
		"join not json":  {http.MethodPost, "/join", []byte("{"), http.StatusBadRequest},
		"join no id":     {http.MethodPost, "/join", []byte(`{"raft":"x:1","http":"x:2"}`), http.StatusBadRequest},
		"unknown path":   {http.MethodGet, "/nope", nil, http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tc.method, leaderURL+tc.path, bytes.NewReader(tc.body))
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d; want %d", name, resp.StatusCode, tc.want)
		}
	}
	if _, code := c.get(leader, "big", false); code != http.StatusNotFound {
		t.Fatalf("an oversize PUT was applied: %d", code)
	}

	// Joining again is not an error and changes nothing.
	body, _ := json.Marshal(joinRequest{ID: c.nodes[follower].cfg.ID, Raft: string(c.addrs[follower]), HTTP: c.nodes[follower].cfg.HTTPAddr})
	if resp, err := c.client.Post(c.https[follower].URL+"/join", "application/json", bytes.NewReader(body)); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("repeated join through a follower: %v %v", resp, err)
	}

	resp, err := c.client.Get(c.https[follower].URL + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var s statusReply
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	// (An election may have moved the leadership since: check the status
	// agrees with itself rather than with the leader found above.)
	if err != nil || s.ID != c.nodes[follower].cfg.ID || s.Leader == "" || len(s.Members) != 3 || s.CommitIndex == 0 || s.AppliedIndex == 0 {
		t.Fatalf("status %+v, %v", s, err)
	}
	for _, m := range s.Members {
		if m.HTTP == "" || m.Suffrage != "Voter" {
			t.Fatalf("member without an HTTP address or vote: %+v", m)
		}
		if m.ID == s.Leader && m.HTTP != s.LeaderHTTP {
			t.Fatalf("status names leader %s at %s, its member entry %s", s.Leader, s.LeaderHTTP, m.HTTP)
		}
	}
}

// TestApplySkipsReplayedEntries: an entry at or below the applied index is
// already in the DB (S2), so replaying it after a restart changes nothing.
func TestApplySkipsReplayedEntries(t *testing.T) {
	dir := t.TempDir()
	sm, err := openStateMachine(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := func(sm *stateMachine, index uint64, v string) {
		if r := sm.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: command{op: opSet, key: []byte("k"), value: []byte(v)}.encode()}); r != nil {
			t.Fatalf("Apply %d: %v", index, r)
		}
	}
	set(sm, 5, "five")
	set(sm, 7, "seven")
	if err := sm.close(); err != nil {
		t.Fatal(err)
	}
	sm, err = openStateMachine(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.close()
	if got := sm.applied.Load(); got != 7 {
		t.Fatalf("applied index after reopen = %d; want 7", got)
	}
	set(sm, 5, "five") // replayed: skipped
	if v, err := sm.get([]byte("k")); err != nil || string(v) != "seven" {
		t.Fatalf("k after a replay = %q, %v; want seven", v, err)
	}
	set(sm, 8, "eight")
	if v, _ := sm.get([]byte("k")); string(v) != "eight" {
		t.Fatalf("k after a new entry = %q", v)
	}
	if r := sm.Apply(&raft.Log{Index: 9, Type: raft.LogCommand, Data: []byte{42}}); r == nil {
		t.Fatal("a malformed command was applied without an error")
	}
}

// TestRequestsToAShutDownNodeAre503: once the node shut down under its
// HTTP server (main closes that server with a deadline, and requests may
// outlast it), a stale read reached the closed DB and answered 500
// "kv: closed", an internal error, where every other route answered 503:
// the request is for another member, and a client retries it there.
func TestRequestsToAShutDownNodeAre503(t *testing.T) {
	s := serveNode(t, Config{ID: "solo"})
	s.waitLeader(t)
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := quickClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(msg)
	}
	if code, msg := do(http.MethodPut, "/kv/k", "v"); code != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", code, msg)
	}
	s.Shutdown()
	for _, r := range [][2]string{{http.MethodGet, "/kv/k?stale=true"}, {http.MethodGet, "/kv/k"}, {http.MethodPut, "/kv/k"}, {http.MethodDelete, "/kv/k"}} {
		if code, msg := do(r[0], r[1], "v2"); code != http.StatusServiceUnavailable {
			t.Errorf("%s %s on a shut-down node: %d %q; want 503", r[0], r[1], code, msg)
		}
	}
}

// TestStaleParameterIsABoolean: ?stale=yes was read as false and served
// as a linearizable read (on a follower, a redirect to the leader), so a
// client that meant to spare the leader never learnt it did not, where
// ?force=maybe on DELETE /members is a 400.
func TestStaleParameterIsABoolean(t *testing.T) {
	fake := newFakeBackend(Limits{}, true)
	srv := httptest.NewServer(newHandler(fake, &security{}, fake.limits, http.DefaultClient))
	defer srv.Close()
	for query, want := range map[string]int{
		"stale=yes": http.StatusBadRequest, "stale=": http.StatusBadRequest, "stale": http.StatusBadRequest,
		"stale=1&stale=0": http.StatusBadRequest, "stale=true": http.StatusNotFound, "stale=0": http.StatusNotFound, "": http.StatusNotFound,
	} {
		resp, err := quickClient.Get(srv.URL + "/kv/absent?" + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /kv/absent?%s: %d, want %d", query, resp.StatusCode, want)
		}
	}
}
