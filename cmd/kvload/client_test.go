package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientSendsTokenAcrossRedirect: the token reaches the leader after a
// follower's 307 to another host name, which Go's client alone would strip
// it from.
func TestClientSendsTokenAcrossRedirect(t *testing.T) {
	const token = "load-token-0123456789"
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer leader.Close()
	leaderURL := strings.Replace(leader.URL, "127.0.0.1", "localhost", 1)
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, leaderURL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer follower.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	client, err := clientSecurity{tokenFile: tokenFile}.client(1)
	if err != nil {
		t.Fatal(err)
	}
	l := &load{urls: []string{follower.URL}, client: client}
	r := l.run(5, 2, func(i int) (*http.Request, error) {
		return http.NewRequest(http.MethodPut, follower.URL+"/kv/k", strings.NewReader("v"))
	}, http.StatusNoContent)
	if r.ok != 5 {
		t.Fatalf("%d of 5 writes through a redirect succeeded; first error %v", r.ok, r.firstErr)
	}
	if _, err := (clientSecurity{tokenFile: filepath.Join(t.TempDir(), "missing")}).client(1); err == nil {
		t.Fatal("a missing -token-file was accepted")
	}
}

// TestClientVerifiesCA: with -ca the server's certificate is verified
// against it; without, an unknown CA is refused.
func TestClientVerifiesCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	for _, tc := range []struct {
		sec  clientSecurity
		want bool
	}{{clientSecurity{caFile: caFile}, true}, {clientSecurity{}, false}} {
		client, err := tc.sec.client(1)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != tc.want {
			t.Errorf("with -ca %q: %v", tc.sec.caFile, err)
		}
	}
	if _, err := (clientSecurity{certFile: caFile}).client(1); err == nil {
		t.Fatal("-cert without -key was accepted")
	}
}
