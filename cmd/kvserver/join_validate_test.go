package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestJoinHTTPAddressIsHostPort caught a join whose http was a URL
// ("http://10.0.0.2:8002") or a bare host being recorded: every follower
// then redirected clients to "http://http://10.0.0.2:8002/kv/..." while
// that node led. Only HOST:PORT is taken.
func TestJoinHTTPAddressIsHostPort(t *testing.T) {
	fake := newFakeBackend(Limits{}, true)
	h := newHandler(fake, &security{}, fake.limits, http.DefaultClient)
	join := func(httpAddr string) int {
		req := httptest.NewRequest(http.MethodPost, "/join", strings.NewReader(`{"id":"n2","raft":"127.0.0.1:7002","http":"`+httpAddr+`"}`))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	for _, bad := range []string{"http://10.0.0.2:8002", "10.0.0.2", ":8002", "10.0.0.2:0", "10.0.0.2:http", "10.0.0.2:99999", "a/b:8002", "user@h:8002", "0.0.0.0:8002", "[::]:8002"} {
		if code := join(bad); code != http.StatusBadRequest {
			t.Errorf("join with http %q: %d; want 400", bad, code)
		}
	}
	for _, good := range []string{"10.0.0.2:8002", "[::1]:8002", "node-2.example:443"} {
		if code := join(good); code != http.StatusOK {
			t.Errorf("join with http %q: %d; want 200", good, code)
		}
	}
	if _, violations := fake.record(); len(violations) != 0 || len(fake.joins) != 3 {
		t.Fatalf("joins recorded %v, violations %v; want the 3 good ones", fake.joins, violations)
	}
}

// TestJoinBodyTooLarge caught a /join body over maxJoinBytes answered 400
// Bad Request, as if malformed: it is 413, as every other oversized
// request, and reaches no backend.
func TestJoinBodyTooLarge(t *testing.T) {
	fake := newFakeBackend(Limits{}, true)
	h := newHandler(fake, &security{}, fake.limits, http.DefaultClient)
	join := func(body string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/join", strings.NewReader(body)))
		return w.Code
	}
	ok := `{"id":"n2","raft":"127.0.0.1:7002","http":"127.0.0.1:8002"}`
	if code := join(ok[:len(ok)-1] + strings.Repeat(" ", maxJoinBytes-len(ok)) + "}"); code != http.StatusOK {
		t.Fatalf("join of exactly %d bytes: %d; want 200", maxJoinBytes, code)
	}
	if code := join(ok[:len(ok)-1] + strings.Repeat(" ", maxJoinBytes+1-len(ok)) + "}"); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("join of %d bytes: %d; want 413", maxJoinBytes+1, code)
	}
	if calls, _ := fake.record(); calls != 1 {
		t.Fatalf("the backend saw %d joins; want the 1 within the limit", calls)
	}
}

// TestJoinRaftAddressIsHostPort caught a join whose raft address was not
// HOST:PORT ("not an address", a bare host, a URL) being added as a voter
// by a one-node cluster over TCP: the voter never answers, so the cluster
// had no majority, its leader stepped down for good, and the removal that
// would undo the join could not commit either. The leader, whose transport
// dials the address, refuses it with 400 and the cluster goes on.
func TestJoinRaftAddressIsHostPort(t *testing.T) {
	s := serveNode(t, Config{ID: "n1", RaftAddr: "127.0.0.1:0"})
	s.waitLeader(t)
	post := func(raftAddr string) (int, string) {
		body := `{"id":"typo","raft":"` + raftAddr + `","http":"127.0.0.1:9"}`
		resp, err := s.client.Post(s.url+"/join", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, bad := range []string{"not an address", "10.0.0.2", "http://10.0.0.2:7002", ":7002", "10.0.0.2:0", "10.0.0.2:raft"} {
		if code, body := post(bad); code != http.StatusBadRequest {
			t.Fatalf("join with raft %q: %d %s; want 400", bad, code, strings.TrimSpace(body))
		}
	}
	members, err := s.members()
	if err != nil || len(members) != 1 {
		t.Fatalf("members after the refused joins: %v, %v; want n1 alone", members, err)
	}
	time.Sleep(3 * s.heartbeat) // time for a leader without a majority to step down
	if err := s.apply(command{op: opSet, key: []byte("a"), value: []byte("1")}); err != nil {
		t.Fatalf("a write after the refused joins: %v", err)
	}
}

// TestJoinUnansweredAddressNotAVoter caught a join at a well-formed raft
// address where nothing answers (a typo's port) being added as a voter:
// a one-node cluster then had no majority, its leader stepped down for
// good, and the removal that would undo the join could not commit. The
// leader now adds a joiner as a nonvoter and promotes it only once it has
// answered (S12): this one never does, so the join fails with 502, the
// nonvoter is removed again, and the cluster writes on.
func TestJoinUnansweredAddressNotAVoter(t *testing.T) {
	s := serveNode(t, Config{ID: "n1", RaftAddr: "127.0.0.1:0"})
	s.waitLeader(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := ln.Addr().String()
	ln.Close() // connections to it are refused from now on

	body := `{"id":"typo","raft":"` + nobody + `","http":"127.0.0.1:9"}`
	resp, err := s.client.Post(s.url+"/join", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(msg), "answered none") {
		t.Fatalf("join at %s, where nothing answers: %d %s; want 502 saying it answered nothing", nobody, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	if servers := s.configServers(); len(servers) != 1 || servers[0].ID != "n1" {
		t.Fatalf("configuration after the unanswered join: %+v; want n1 alone", servers)
	}
	time.Sleep(3 * s.heartbeat) // time for a leader without a majority to step down
	if err := s.apply(command{op: opSet, key: []byte("a"), value: []byte("1")}); err != nil {
		t.Fatalf("a write after the unanswered join: %v", err)
	}
}
