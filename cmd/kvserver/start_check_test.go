package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestStartRefusesUnusableSettings: a node started with an -http address
// a leader refuses from a joiner (port 0, a named port, no port) became
// leader and sent every client a follower redirected to it; a -heartbeat
// raft refuses was reported as "LeaderLeaseTimeout is too low", a setting
// no flag names, and only after a fresh join had asked the leader to
// remove the node's old server. Both are refused up front, naming the
// flag, before anything is sent.
func TestStartRefusesUnusableSettings(t *testing.T) {
	fake := newFakeBackend(Limits{}, true)
	leader := httptest.NewServer(newHandler(fake, &security{}, fake.limits, http.DefaultClient))
	defer leader.Close()
	for _, tc := range []struct {
		http, advertise string
		heartbeat       time.Duration
		want            string
	}{
		{"127.0.0.1:0", "", 0, "-http"},
		{":0", "", 0, "-http"},
		{"127.0.0.1:http", "", 0, "-http"},
		{"127.0.0.1:1", "", 8 * time.Millisecond, "-heartbeat"},
		{"127.0.0.1:1", "", -time.Second, "-heartbeat"},
		// Every interface is somewhere to listen, not an address to give
		// the other members and clients (the join request and redirects).
		{"0.0.0.0:1", "", 0, "-http-advertise"},
		{"[::]:1", "", 0, "-http-advertise"},
		{"0.0.0.0:1", "0.0.0.0:1", 0, "-http-advertise"},
		{"127.0.0.1:1", "[::]:1", 0, "-http-advertise"},
		{"0.0.0.0:1", "127.0.0.1:0", 0, "-http-advertise"},
		{"0.0.0.0:1", "http://127.0.0.1:1", 0, "-http-advertise"},
	} {
		_, tr := raft.NewInmemTransport("")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		// The token lets a non-loopback -http past loadSecurity, so the
		// check under test is the one that answers.
		n, err := StartNodeContext(ctx, Config{ID: "j", Dir: t.TempDir(), HTTPAddr: tc.http, HTTPAdvertise: tc.advertise,
			Token: strings.Repeat("t", minTokenBytes), Transport: tr, Join: leader.URL,
			HeartbeatTimeout: tc.heartbeat, LogOutput: io.Discard, LogLevel: "ERROR"})
		cancel()
		if err == nil {
			n.Shutdown()
			t.Errorf("-http %q -http-advertise %q -heartbeat %v: started", tc.http, tc.advertise, tc.heartbeat)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-http %q -http-advertise %q -heartbeat %v: %v; want it to name %s", tc.http, tc.advertise, tc.heartbeat, err, tc.want)
		}
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.joins) > 0 {
		t.Errorf("nodes that could not start sent %d joins first: %+v", len(fake.joins), fake.joins)
	}
}

// TestJoinRefusedAsMalformedIsFinal: a joiner retried a leader's 400 for
// ever (only 412 ended its loop), so a node whose join request the leader
// refuses never returned from StartNode, logging the same refusal.
func TestJoinRefusedAsMalformedIsFinal(t *testing.T) {
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "kvserver: malformed input: join http is not HOST:PORT", http.StatusBadRequest)
	}))
	defer leader.Close()
	_, tr := raft.NewInmemTransport("")
	done := make(chan error, 1)
	go func() {
		n, err := StartNode(Config{ID: "j", Dir: t.TempDir(), HTTPAddr: "127.0.0.1:1", Transport: tr, Join: leader.URL,
			HeartbeatTimeout: 100 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"})
		if err == nil {
			n.Shutdown()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrJoinRefused) {
			t.Fatalf("StartNode = %v, want ErrJoinRefused", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("StartNode still retrying a 400 after 10 s")
	}
}

// TestJoinAdvertisesHTTPAdvertise: with -http on every interface and
// -http-advertise naming the node, the join request registers the
// advertised address, the one the other members redirect clients to.
func TestJoinAdvertisesHTTPAdvertise(t *testing.T) {
	fake := newFakeBackend(Limits{}, true)
	leader := httptest.NewServer(newHandler(fake, &security{}, fake.limits, http.DefaultClient))
	defer leader.Close()
	_, tr := raft.NewInmemTransport("")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := StartNodeContext(ctx, Config{ID: "j", Dir: t.TempDir(), HTTPAddr: "0.0.0.0:8002", HTTPAdvertise: "10.0.0.2:8002",
		Token: strings.Repeat("t", minTokenBytes), Transport: tr, Join: leader.URL,
		HeartbeatTimeout: 100 * time.Millisecond, LogOutput: io.Discard, LogLevel: "ERROR"})
	if err == nil {
		n.Shutdown()
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.joins) == 0 {
		t.Fatalf("no join sent (start: %v)", err)
	}
	for _, j := range fake.joins {
		if j.HTTP != "10.0.0.2:8002" {
			t.Errorf("join registered http %q, want the -http-advertise 10.0.0.2:8002", j.HTTP)
		}
	}
}
