package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/sievekv/sievekv/kv"
)

// fakeBackend is a node without raft, for the HTTP API's tests: a map for
// the state, a fixed leadership, and a record of every call, which checks
// that the handlers pass on only what the limits allow.
type fakeBackend struct {
	limits Limits
	leader bool
	// gate, when set, holds every apply until it is closed.
	gate chan struct{}

	mu         sync.Mutex
	data       map[string][]byte
	joins      []joinRequest
	calls      int
	violations []string
}

func newFakeBackend(limits Limits, leader bool) *fakeBackend {
	return &fakeBackend{limits: limits.withDefaults(), leader: leader, data: map[string][]byte{}}
}

// called counts a call, and records violation unless it is "".
func (f *fakeBackend) called(violation string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if violation != "" {
		f.violations = append(f.violations, violation)
	}
}

func (f *fakeBackend) checkKey(key []byte) string {
	if len(key) == 0 || len(key) > f.limits.MaxKeyBytes {
		return fmt.Sprintf("a key of %d bytes reached the backend", len(key))
	}
	return ""
}

func (f *fakeBackend) isLeader() bool { return f.leader }

func (f *fakeBackend) leaderHTTP() string {
	if f.leader {
		return "127.0.0.1:1"
	}
	return "127.0.0.1:2"
}

func (f *fakeBackend) apply(c command) error {
	msg := f.checkKey(c.key)
	if len(c.value) > f.limits.MaxValueBytes {
		msg = fmt.Sprintf("a value of %d bytes reached the backend", len(c.value))
	}
	if !f.leader {
		msg = "a follower applied a write"
	}
	f.called(msg)
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.op == opDelete {
		delete(f.data, string(c.key))
	} else {
		f.data[string(c.key)] = c.value
	}
	return nil
}

func (f *fakeBackend) read(key []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.data[string(key)]
	if !ok {
		return nil, kv.ErrNotFound
	}
	return v, nil
}

func (f *fakeBackend) linearizableRead(key []byte) ([]byte, error) {
	msg := f.checkKey(key)
	if !f.leader {
		msg = "a follower served a linearizable read"
	}
	f.called(msg)
	return f.read(key)
}

func (f *fakeBackend) staleRead(key []byte) ([]byte, error) {
	f.called(f.checkKey(key))
	return f.read(key)
}

func (f *fakeBackend) status() statusReply {
	f.called("")
	return statusReply{ID: "fake", State: raft.Leader.String(), Members: []member{}}
}

func (f *fakeBackend) join(req joinRequest) (joinReply, error) {
	msg := ""
	if req.validate() != nil {
		msg = fmt.Sprintf("an invalid join %+v reached the backend", req)
	}
	f.called(msg)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.joins = append(f.joins, req)
	return joinReply{Fresh: req.Fresh}, nil
}

func (f *fakeBackend) members() ([]member, error) {
	f.called("")
	return []member{}, nil
}

func (f *fakeBackend) removeMember(id string, force bool) error {
	msg := ""
	if !f.leader {
		msg = "a follower removed a member"
	}
	f.called(msg)
	return nil
}

func (f *fakeBackend) removed() bool { return false }

func (f *fakeBackend) record() (calls int, violations []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, append([]string(nil), f.violations...)
}

// TestConcurrentRequestsBounded: with MaxRequests requests in flight, one
// more is answered 503 with Retry-After at once; once they finish, it is
// served.
func TestConcurrentRequestsBounded(t *testing.T) {
	const max = 3
	fake := newFakeBackend(Limits{MaxRequests: max}, true)
	fake.gate = make(chan struct{})
	h := newHandler(fake, &security{}, fake.limits, http.DefaultClient)
	srv := httptest.NewServer(h)
	defer srv.Close()
	put := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/kv/k", strings.NewReader("v"))
		return quickClient.Do(req)
	}
	var held sync.WaitGroup
	for i := 0; i < max; i++ {
		held.Add(1)
		go func() {
			defer held.Done()
			if resp, err := put(); err == nil {
				resp.Body.Close()
			}
		}()
	}
	waitFor(t, "the requests to hold every slot", 5*time.Second, func() bool {
		calls, _ := fake.record()
		return calls == max
	})
	resp, err := put()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "in flight") {
		t.Fatalf("request %d of %d allowed: %s %q, Retry-After %q; want 503 with Retry-After", max+1, max, resp.Status, body, resp.Header.Get("Retry-After"))
	}
	close(fake.gate)
	held.Wait()
	if resp, err := put(); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("a request after the others finished: %v %v", resp, err)
	}
}

// fuzzToken is the token of FuzzHTTPHandler's handler.
const fuzzToken = "fuzz-token-0123456789abcdef"

// FuzzHTTPHandler sends arbitrary requests (method, target, headers, body)
// through the whole API, authentication and limits included, over a fake
// backend, on a leader and a follower. No request panics; one without the
// token is a 401 that reaches nothing; every key, value and join the
// backend sees is within the limits; and answers stay small.
func FuzzHTTPHandler(f *testing.F) {
	auth := "Authorization: Bearer " + fuzzToken + "\r\n"
	for _, seed := range []struct{ method, target, headers, body string }{
		{"PUT", "/kv/key", auth, "value"},
		{"PUT", "/kv/a%2Fb", auth + "Content-Length: 5\r\n", "value"},
		{"PUT", "/kv/big", auth, strings.Repeat("x", 80)},
		{"PUT", "/kv/" + strings.Repeat("k", 20), auth, "v"},
		{"PUT", "/kv/k", auth + "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n0\r\n\r\n"},
		{"GET", "/kv/key", auth, ""},
		{"GET", "/kv/key?stale=true", auth, ""},
		{"GET", "/kv/", auth, ""},
		{"DELETE", "/kv/key", auth, ""},
		{"GET", "/status", auth, ""},
		{"POST", "/join", auth, `{"id":"n2","raft":"127.0.0.1:7002","http":"127.0.0.1:8002"}`},
		{"POST", "/join", auth, `{"id":"n2"}`},
		{"POST", "/join", auth, "{"},
		{"PUT", "/kv/key", "Authorization: Bearer wrong\r\n", "value"},
		{"PUT", "/kv/key", "", "value"},
		{"POST", "/join", "", `{"id":"n2","raft":"x:1","http":"x:2"}`},
		{"GET", "/members", auth, ""},
		{"DELETE", "/members/n2", auth, ""},
		{"DELETE", "/members/n2?force=true", auth, ""},
		{"DELETE", "/members/n2", "", ""},
		{"GET", "/members", "", ""},
		{"OPTIONS", "*", auth, ""},
		{"GET", "/kv/%zz", auth, ""},
		{"PATCH", "/kv/../status", auth, ""},
	} {
		f.Add(seed.method, seed.target, seed.headers, []byte(seed.body), true)
		f.Add(seed.method, seed.target, seed.headers, []byte(seed.body), false)
	}
	limits := Limits{MaxKeyBytes: 16, MaxValueBytes: 64, MaxRequests: 4}
	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte, leader bool) {
		raw := method + " " + target + " HTTP/1.1\r\nHost: node\r\n" + headers + "\r\n"
		req, err := http.ReadRequest(bufio.NewReader(io.MultiReader(strings.NewReader(raw), bytes.NewReader(body))))
		if err != nil {
			return // the server's parser refuses it before any handler runs
		}
		fake := newFakeBackend(limits, leader)
		sec := &security{token: []byte(fuzzToken)}
		h := newHandler(fake, sec, limits, &http.Client{Transport: refuseTransport{}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)

		calls, violations := fake.record()
		for _, v := range violations {
			t.Errorf("%s %q: %s", method, target, v)
		}
		authorized := req.Header.Get("Authorization") == "Bearer "+fuzzToken
		if !authorized && (w.Code != http.StatusUnauthorized || calls != 0) {
			t.Fatalf("%s %q without the token: %d, %d backend calls; want 401 and none", method, target, w.Code, calls)
		}
		if w.Code < 100 || w.Code > 599 {
			t.Fatalf("%s %q: status %d", method, target, w.Code)
		}
		if n := w.Body.Len(); n > limits.MaxValueBytes+8<<10 {
			t.Fatalf("%s %q: an answer of %d bytes", method, target, n)
		}
	})
}

// refuseTransport fails every request: a fuzzed join on a follower must
// not reach the network.
type refuseTransport struct{}

func (refuseTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("fuzz: no network")
}
