package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// clientSecurity is how kvload authenticates to a secured kvserver.
type clientSecurity struct {
	tokenFile, caFile, certFile, keyFile string
}

// client is an HTTP client for conns concurrent connections per host that
// sends the token on every request and verifies HTTPS against the CA.
func (s clientSecurity) client(conns int) (*http.Client, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns}
	if s.caFile != "" || s.certFile != "" || s.keyFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.caFile != "" {
			pem, err := os.ReadFile(s.caFile)
			if err != nil {
				return nil, fmt.Errorf("kvload: -ca: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("kvload: -ca %s holds no PEM certificate", s.caFile)
			}
		}
		if (s.certFile == "") != (s.keyFile == "") {
			return nil, errors.New("kvload: -cert and -key go together")
		}
		if s.certFile != "" {
			pair, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
			if err != nil {
				return nil, fmt.Errorf("kvload: -cert, -key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		tr.TLSClientConfig = cfg
	}
	var rt http.RoundTripper = tr
	if s.tokenFile != "" {
		b, err := os.ReadFile(s.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("kvload: -token-file: %w", err)
		}
		token := strings.TrimSpace(string(b))
		if token == "" {
			return nil, fmt.Errorf("kvload: -token-file %s is empty", s.tokenFile)
		}
		rt = bearer{token: token, next: tr}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: rt}, nil
}

// bearer sets the token on every request, the redirects to the leader
// included: Go's client drops Authorization on a redirect to another host.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
