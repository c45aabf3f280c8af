package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// ErrInsecure is wrapped by the refusal to serve a non-loopback address
// without authentication (K1), and by unusable security settings.
var ErrInsecure = errors.New("kvserver: insecure configuration")

// minTokenBytes is the shortest bearer token accepted: 16 random bytes,
// hex- or base64-encoded, are at least 22 characters, and anything much
// shorter is a password someone might guess.
const minTokenBytes = 16

// security is a node's loaded security settings.
type security struct {
	token []byte // the bearer token; nil when none is required
	// httpTLS serves the HTTP API (client certificates optional when a
	// token is set, required otherwise); peerTLS serves raft (client
	// certificates required: K4); dialTLS is how this node dials peers
	// and other members' HTTP APIs, presenting its own certificate.
	httpTLS, peerTLS, dialTLS *tls.Config
}

func (s *security) scheme() string {
	if s.httpTLS != nil {
		return "https"
	}
	return "http"
}

// normalizeAddrs gives RaftAddr and HTTPAddr a loopback host when they
// have none, so ":8001" never means every interface (K1).
func (c *Config) normalizeAddrs() {
	c.RaftAddr = withLoopbackHost(c.RaftAddr)
	c.HTTPAddr = withLoopbackHost(c.HTTPAddr)
	if c.HTTPAdvertise != "" {
		c.HTTPAdvertise = withLoopbackHost(c.HTTPAdvertise)
	}
}

func withLoopbackHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// loadSecurity checks cfg's security settings (after normalizeAddrs) and
// loads the TLS files. It refuses a non-loopback HTTP address that neither
// a token nor client certificates protect, and a non-loopback raft address
// without mutual TLS (K1), saying how to fix it.
func loadSecurity(cfg *Config) (*security, error) {
	sec := &security{}
	if cfg.Token != "" {
		if len(cfg.Token) < minTokenBytes {
			return nil, fmt.Errorf("%w: the token is %d bytes, shorter than %d: use a random one, e.g. `openssl rand -hex 32 > token`",
				ErrInsecure, len(cfg.Token), minTokenBytes)
		}
		sec.token = []byte(cfg.Token)
	}
	files := []string{cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSCAFile}
	switch set := len(strings.Join(files, "")) > 0; {
	case set && (cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" || cfg.TLSCAFile == ""):
		return nil, fmt.Errorf("%w: -tls-cert, -tls-key and -tls-ca go together (got %q, %q, %q)",
			ErrInsecure, cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSCAFile)
	case set:
		if err := sec.loadTLS(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.Transport == nil && sec.peerTLS == nil && !isLoopback(cfg.RaftAddr) {
		return nil, fmt.Errorf("%w: -raft %s is not a loopback address, and anyone who reaches it could send raft messages: "+
			"give -tls-cert, -tls-key and -tls-ca (mutual TLS between members), or bind raft to 127.0.0.1",
			ErrInsecure, cfg.RaftAddr)
	}
	if sec.token == nil && sec.httpTLS == nil && !isLoopback(cfg.HTTPAddr) {
		return nil, fmt.Errorf("%w: -http %s is not a loopback address, and anyone who reaches it could read, write and join: "+
			"give -token-file FILE (clients send Authorization: Bearer TOKEN) or -tls-cert, -tls-key and -tls-ca "+
			"(clients present a certificate signed by the CA), or bind to 127.0.0.1",
			ErrInsecure, cfg.HTTPAddr)
	}
	return sec, nil
}

// isLoopback reports whether every address host:port names is a loopback
// one. An unspecified host (0.0.0.0, ::) is every interface: not loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else if host == "localhost" {
		return true
	} else if ips, err = net.LookupIP(host); err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

func (sec *security) loadTLS(cfg *Config) error {
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return fmt.Errorf("kvserver: -tls-cert %s, -tls-key %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
	}
	caPEM, err := os.ReadFile(cfg.TLSCAFile)
	if err != nil {
		return fmt.Errorf("kvserver: -tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("%w: -tls-ca %s holds no PEM certificate", ErrInsecure, cfg.TLSCAFile)
	}
	base := tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	sec.peerTLS = base.Clone()
	sec.peerTLS.ClientCAs = pool
	sec.peerTLS.ClientAuth = tls.RequireAndVerifyClientCert
	sec.httpTLS = sec.peerTLS.Clone()
	if sec.token != nil {
		// Either a certificate or the token authenticates a request (K2).
		sec.httpTLS.ClientAuth = tls.VerifyClientCertIfGiven
	}
	sec.dialTLS = base.Clone()
	sec.dialTLS.RootCAs = pool
	return nil
}

// httpClient is how this node talks to other members' HTTP APIs (joins):
// with the token, and over TLS presenting its own certificate.
func (sec *security) httpClient(token string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = sec.dialTLS
	return &http.Client{Timeout: applyTimeout + 5*time.Second, Transport: bearer{token: token, next: tr}}
}
