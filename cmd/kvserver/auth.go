package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// requireAuth answers 401, before anything is read or written, to a request
// that carries neither the bearer token nor a client certificate the CA
// signed (K2). Without a token or TLS every request passes: the node then
// listens on loopback only (K1).
func requireAuth(sec *security, next http.Handler) http.Handler {
	if sec.token == nil && sec.httpTLS == nil {
		return next
	}
	// Compare digests, so neither the token's bytes nor its length show in
	// the comparison's time.
	var want [sha256.Size]byte
	if sec.token != nil {
		want = sha256.Sum256(sec.token)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			next.ServeHTTP(w, r)
			return
		}
		if sec.token != nil {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			sum := sha256.Sum256([]byte(got))
			if subtle.ConstantTimeCompare(sum[:], want[:]) == 1 && ok {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="kvserver"`)
		http.Error(w, "kvserver: unauthorized: send Authorization: Bearer TOKEN (the -token-file's) or a client certificate the CA signed", http.StatusUnauthorized)
	})
}

// bearer adds the token to every request it sends, redirects included (Go's
// client drops Authorization on a redirect to another host, and a follower
// redirects to the leader's).
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
