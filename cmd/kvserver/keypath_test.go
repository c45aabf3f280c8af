package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestKeysAreNotPathCleaned caught that ServeMux cleaned /kv/KEY before
// routing: "PUT /kv/a//b" was answered 307 to /kv/a/b, and a client that
// follows redirects (as it must for a follower's 307 to the leader) wrote
// key "a/b"; "DELETE /kv/x/../y" deleted key "y". Every key is stored,
// read and deleted as sent.
func TestKeysAreNotPathCleaned(t *testing.T) {
	fake := newFakeBackend(Limits{}, true)
	srv := httptest.NewServer(newHandler(fake, &security{}, fake.limits, http.DefaultClient))
	defer srv.Close()
	do := func(method, key, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/kv/"+key, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := quickClient.Do(req) // follows redirects
		if err != nil {
			t.Fatalf("%s %s: %v", method, key, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	keys := []string{"a//b", "x/.", "x/../y", "./z", "..", "a/"}
	for _, k := range []string{"a/b", "x", "y", "z"} {
		if code, _ := do(http.MethodPut, k, "other "+k); code != http.StatusNoContent {
			t.Fatalf("PUT %s: %d", k, code)
		}
	}
	for _, k := range keys {
		if code, body := do(http.MethodPut, k, "value of "+k); code != http.StatusNoContent {
			t.Fatalf("PUT %q: %d %s", k, code, body)
		}
	}
	for _, k := range keys {
		if code, body := do(http.MethodGet, k, ""); code != http.StatusOK || body != "value of "+k {
			t.Fatalf("GET %q: %d %q; want its own value", k, code, body)
		}
		if code, _ := do(http.MethodDelete, k, ""); code != http.StatusNoContent {
			t.Fatalf("DELETE %q: %d", k, code)
		}
		if code, _ := do(http.MethodGet, k, ""); code != http.StatusNotFound {
			t.Fatalf("GET %q after its DELETE: %d; want 404", k, code)
		}
	}
	for _, k := range []string{"a/b", "x", "y", "z"} {
		if code, body := do(http.MethodGet, k, ""); code != http.StatusOK || body != "other "+k {
			t.Fatalf("key %q after writes to the look-alike keys: %d %q", k, code, body)
		}
	}
	if code, _ := do(http.MethodPost, "k", "v"); code != http.StatusMethodNotAllowed {
		t.Fatalf("POST on a key: %d; want 405", code)
	}
}

// TestFollowerDoesNotRedirectDotSegmentKeys: a follower's 307 for a key
// with a "." or ".." segment was followed by clients as a URL reference,
// whose resolution removes dot segments: PUT x/../y through a follower
// wrote y on the leader, and DELETE q/../z deleted z. The follower now
// answers such a key 421, naming the leader, and redirects every other
// key as before, its escapes intact.
func TestFollowerDoesNotRedirectDotSegmentKeys(t *testing.T) {
	fake := newFakeBackend(Limits{}, false)
	srv := httptest.NewServer(newHandler(fake, &security{}, fake.limits, http.DefaultClient))
	defer srv.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPut, "/kv/x/../y", http.StatusMisdirectedRequest},
		{http.MethodDelete, "/kv/q/../z", http.StatusMisdirectedRequest},
		{http.MethodGet, "/kv/./z", http.StatusMisdirectedRequest},
		{http.MethodPut, "/kv/x/.", http.StatusMisdirectedRequest},
		{http.MethodPut, "/kv/x/%2E%2E/y", http.StatusMisdirectedRequest},
		{http.MethodPut, "/kv/..", http.StatusMisdirectedRequest},
		{http.MethodPut, "/kv/a//b", http.StatusTemporaryRedirect},
		{http.MethodPut, "/kv/x.y/..z/z..", http.StatusTemporaryRedirect},
		{http.MethodPut, "/kv/sp%20ace", http.StatusTemporaryRedirect},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("v"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s on a follower: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
			continue
		}
		if want := "http://" + fake.leaderHTTP() + tc.path; resp.Header.Get("Location") != want {
			t.Errorf("%s %s: Location %q, want %q", tc.method, tc.path, resp.Header.Get("Location"), want)
		}
	}
	if n := fake.calls; n != 0 {
		t.Errorf("the follower applied or read %d times; it should serve none of these", n)
	}
}
