package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
	for _, bad := range []string{"http://10.0.0.2:8002", "10.0.0.2", ":8002", "10.0.0.2:0", "10.0.0.2:http", "10.0.0.2:99999", "a/b:8002", "user@h:8002"} {
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
