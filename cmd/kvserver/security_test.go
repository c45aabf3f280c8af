package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// servedNode is a node with its HTTP API served as main serves it
// (NewServer on listenHTTP), on loopback.
type servedNode struct {
	*Node
	url    string
	client *http.Client // carries cfg.Token; trusts the node's CA under TLS
}

// serveNode starts cfg's node (its HTTP address picked here) and serves
// its API until the test ends. A nil cfg.Transport with an empty RaftAddr
// means raft's in-memory transport.
func serveNode(t *testing.T, cfg Config) *servedNode {
	t.Helper()
	n, _ := serveStoppableNode(t, cfg)
	return n
}

// serveStoppableNode is serveNode with a stop that also closes the HTTP
// server (serveNode's stays up until the test ends, and its /status then
// makes a stopped node look alive to memberAlive).
func serveStoppableNode(t *testing.T, cfg Config) (*servedNode, func()) {
	t.Helper()
	cfg, sec, ln := testNodeConfig(t, cfg)
	n, err := startNode(context.Background(), cfg, sec)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	srv := NewServer(n)
	go srv.Serve(ln)
	var once sync.Once
	stop := func() { once.Do(func() { srv.Close(); n.Shutdown() }) }
	t.Cleanup(stop)
	return &servedNode{Node: n, url: sec.scheme() + "://" + cfg.HTTPAddr, client: sec.httpClient(cfg.Token)}, stop
}

// testNodeConfig completes cfg as serveNode starts it, with its security
// and the listener its HTTP address names.
func testNodeConfig(t *testing.T, cfg Config) (Config, *security, net.Listener) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.RaftAddr == "" && cfg.Transport == nil {
		_, cfg.Transport = raft.NewInmemTransport(raft.ServerAddress("inmem-" + cfg.ID))
	}
	if cfg.HeartbeatTimeout == 0 {
		cfg.HeartbeatTimeout = 250 * time.Millisecond
	}
	if cfg.LogOutput == nil {
		cfg.LogOutput, cfg.LogLevel = io.Discard, "ERROR"
	}
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.normalizeAddrs()
	sec, err := loadSecurity(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenHTTP(cfg.HTTPAddr, sec)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPAddr = ln.Addr().String()
	return cfg, sec, ln
}

func (s *servedNode) waitLeader(t *testing.T) {
	t.Helper()
	waitFor(t, s.cfg.ID+" to lead", 10*time.Second, func() bool { return s.isLeader() && s.leaderHTTP() != "" })
}

// send is one request with the given Authorization header ("" for none),
// without the node's own client and its token.
func send(t *testing.T, method, url, auth string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return roundTrip(t, req)
}

// roundTrip sends req and returns the answer's status and body.
func roundTrip(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := quickClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTokenRequired: without the token, or with a wrong one, every request
// is a 401 and nothing is written; with it the same requests succeed.
func TestTokenRequired(t *testing.T) {
	s := serveNode(t, Config{ID: "solo", Token: testToken})
	s.waitLeader(t)
	// The leader's own member record is visible in the state machine a
	// moment before raft counts its entry applied; the baseline must come
	// after (a fresh-clone CI run read 3, then 4).
	waitFor(t, "the leader's entries applied", 10*time.Second, func() bool { return s.raft.AppliedIndex() == s.raft.LastIndex() })
	applied := s.raft.AppliedIndex()
	for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer wrong-token-0123456789ab", "Bearer " + testToken + "x",
		"Bearer " + testToken[:len(testToken)-1], "Basic " + testToken, "bearer " + testToken, testToken} {
		for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodGet} {
			if code, body := send(t, m, s.url+"/kv/k", auth, []byte("v")); code != http.StatusUnauthorized {
				t.Errorf("%s with Authorization %q: %d %s; want 401", m, auth, code, body)
			}
		}
		if code, _ := send(t, http.MethodGet, s.url+"/status", auth, nil); code != http.StatusUnauthorized {
			t.Errorf("status with Authorization %q: %d; want 401", auth, code)
		}
	}
	if got := s.raft.AppliedIndex(); got != applied {
		t.Fatalf("unauthorized requests moved the applied index from %d to %d", applied, got)
	}
	if _, err := s.staleRead([]byte("k")); err == nil {
		t.Fatal("an unauthorized PUT was written")
	}
	if code, body := send(t, http.MethodPut, s.url+"/kv/k", "Bearer "+testToken, []byte("v")); code != http.StatusNoContent {
		t.Fatalf("PUT with the token: %d %s", code, body)
	}
	if v, err := s.staleRead([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("k after an authorized PUT: %q, %v", v, err)
	}
}

// TestJoinRequiresToken: a join without the token (or with a wrong one)
// is refused and adds no member.
func TestJoinRequiresToken(t *testing.T) {
	s := serveNode(t, Config{ID: "solo", Token: testToken})
	s.waitLeader(t)
	join, _ := json.Marshal(joinRequest{ID: "intruder", Raft: "127.0.0.1:1", HTTP: "127.0.0.1:2"})
	for _, auth := range []string{"", "Bearer not-the-token-0123456789"} {
		if code, body := send(t, http.MethodPost, s.url+"/join", auth, join); code != http.StatusUnauthorized {
			t.Errorf("join with Authorization %q: %d %s; want 401", auth, code, body)
		}
	}
	if v := s.configServers(); len(v) != 1 || v[0].ID != "solo" {
		t.Fatalf("members after refused joins: %+v", v)
	}
	if h := s.fsm.memberHTTP("intruder"); h != "" {
		t.Fatalf("a refused join registered an HTTP address %q", h)
	}
}

// TestOversizeRefused: a value beyond MaxValueBytes, whether its length is
// declared or not, and a key beyond MaxKeyBytes are 413s with a message
// naming the limit, and the DB is untouched.
func TestOversizeRefused(t *testing.T) {
	s := serveNode(t, Config{ID: "solo", Limits: Limits{MaxKeyBytes: 8, MaxValueBytes: 100}})
	s.waitLeader(t)
	// raft counts an entry applied only after handing it to the state
	// machine, so the member registration waitLeader saw may not be
	// counted yet.
	waitFor(t, "the registration counted applied", 5*time.Second, func() bool { return s.raft.AppliedIndex() == s.raft.LastIndex() })
	applied := s.raft.AppliedIndex()
	put := func(key string, body io.Reader, length int64) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, s.url+"/kv/"+key, body)
		req.ContentLength = length
		return roundTrip(t, req)
	}
	big := strings.Repeat("x", 101)
	for name, tc := range map[string]struct {
		key    string
		body   io.Reader
		length int64
		limit  string
	}{
		"declared value": {"k", strings.NewReader(big), 101, "-max-value-bytes"},
		// Length -1: sent chunked, so only reading finds it too large.
		"chunked value": {"k", io.MultiReader(strings.NewReader(big)), -1, "-max-value-bytes"},
		"key":           {"123456789", strings.NewReader("v"), 1, "-max-key-bytes"},
	} {
		if code, body := put(tc.key, tc.body, tc.length); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, tc.limit) {
			t.Errorf("%s: %d %q; want 413 naming %s", name, code, body, tc.limit)
		}
	}
	if got := s.raft.AppliedIndex(); got != applied {
		t.Fatalf("refused PUTs moved the applied index from %d to %d", applied, got)
	}
	if code, _ := put("12345678", strings.NewReader(strings.Repeat("x", 100)), 100); code != http.StatusNoContent {
		t.Fatalf("a PUT at both limits: %d; want 204", code)
	}
}

// TestSlowHeadersCutOff: a client sending its headers a byte at a time is
// disconnected once ReadHeaderTimeout passes, not served or kept waiting.
func TestSlowHeadersCutOff(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := serveNode(t, Config{ID: "solo", Limits: Limits{ReadHeaderTimeout: timeout}})
	// Before Dial: the server's clock starts at its accept, which can come
	// before Dial returns here (a fresh clone's CI once saw the cutoff at
	// 198.9 ms measured from after Dial).
	start := time.Now()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The server may answer 408 before closing; it must not serve.
	type answer struct {
		got []byte
		err error
	}
	closed := make(chan answer, 1)
	go func() {
		got, err := io.ReadAll(conn)
		closed <- answer{got, err}
	}()
	request := "GET /status HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 200) + "\r\n\r\n"
	for i := 0; i < len(request); i++ {
		select {
		case a := <-closed:
			elapsed := time.Since(start)
			// Go's server closes, or answers a 4xx and closes, when the
			// headers do not arrive in time: it must not serve them.
			if a.err != nil && !isConnReset(a.err) || len(a.got) > 0 && !bytes.HasPrefix(a.got, []byte("HTTP/1.1 4")) {
				t.Fatalf("the slow client read %q, %v after %v; want the connection closed", a.got, a.err, elapsed)
			}
			if elapsed < timeout {
				t.Fatalf("cut off after %v, before the %v timeout", elapsed, timeout)
			}
			t.Logf("cut off after %v and %d of %d bytes", elapsed.Round(time.Millisecond), i, len(request))
			return
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := conn.Write([]byte{request[i]}); err != nil {
			return // closed under the writer: cut off
		}
	}
	t.Fatalf("the server waited %v for headers sent a byte at a time (timeout %v)", time.Since(start), timeout)
}

func isConnReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// TestExposedAddressRefused: a non-loopback address is refused without the
// protection it needs, with a message that says how to fix it; a missing
// host means loopback.
func TestExposedAddressRefused(t *testing.T) {
	_, inmem := raft.NewInmemTransport("inmem-x")
	for name, tc := range map[string]struct {
		cfg  Config
		want string // in the error; "" when the settings are accepted
	}{
		"http on all interfaces":       {Config{HTTPAddr: "0.0.0.0:8001", RaftAddr: "127.0.0.1:7001"}, "-token-file"},
		"raft on all interfaces":       {Config{HTTPAddr: "127.0.0.1:8001", RaftAddr: "0.0.0.0:7001"}, "-tls-ca"},
		"raft exposed with a token":    {Config{HTTPAddr: "0.0.0.0:8001", RaftAddr: "[::]:7001", Token: testToken}, "mutual TLS"},
		"http exposed with a token":    {Config{HTTPAddr: "0.0.0.0:8001", RaftAddr: "127.0.0.1:7001", Token: testToken}, ""},
		"short token":                  {Config{HTTPAddr: "127.0.0.1:8001", RaftAddr: "127.0.0.1:7001", Token: "secret"}, "openssl rand"},
		"tls files incomplete":         {Config{HTTPAddr: "127.0.0.1:8001", RaftAddr: "127.0.0.1:7001", TLSCertFile: "c.pem"}, "go together"},
		"bare ports mean loopback":     {Config{HTTPAddr: ":8001", RaftAddr: ":7001"}, ""},
		"localhost is loopback":        {Config{HTTPAddr: "localhost:8001", RaftAddr: "[::1]:7001"}, ""},
		"in-memory raft needs no TLS":  {Config{HTTPAddr: "127.0.0.1:8001", Transport: inmem}, ""},
		"no port is never loopback ok": {Config{HTTPAddr: "10.1.2.3", RaftAddr: "127.0.0.1:7001"}, "-token-file"},
	} {
		cfg := tc.cfg
		cfg.normalizeAddrs()
		_, err := loadSecurity(&cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case tc.want != "" && (!errors.Is(err, ErrInsecure) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want ErrInsecure saying %q", name, err, tc.want)
		}
	}
	cfg := Config{HTTPAddr: ":8001", RaftAddr: ":7001"}
	cfg.normalizeAddrs()
	if cfg.HTTPAddr != "127.0.0.1:8001" || cfg.RaftAddr != "127.0.0.1:7001" {
		t.Fatalf("bare ports became %s and %s; want loopback", cfg.HTTPAddr, cfg.RaftAddr)
	}
	if _, err := StartNode(Config{ID: "x", Dir: t.TempDir(), HTTPAddr: "0.0.0.0:0", RaftAddr: "127.0.0.1:0"}); !errors.Is(err, ErrInsecure) {
		t.Fatalf("StartNode on 0.0.0.0 without a token: %v; want ErrInsecure", err)
	}
}
