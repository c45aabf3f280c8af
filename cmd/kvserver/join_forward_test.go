package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// misledFollower is a follower that believes the leader is at *leader.
type misledFollower struct {
	*fakeBackend
	leader *string
}

func (m misledFollower) leaderHTTP() string { return *m.leader }

// TestJoinForwardingBetweenMisledFollowersIsBounded caught two followers
// that each named the other as leader (as during an election) passing one
// join back and forth, one more goroutine and connection per hop, until
// the joiner's client gave up: a forwarded join is forwarded no further.
func TestJoinForwardingBetweenMisledFollowersIsBounded(t *testing.T) {
	var addrA, addrB string
	var hops atomic.Int64
	count := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hops.Add(1)
			h.ServeHTTP(w, r)
		})
	}
	client := &http.Client{Timeout: 5 * time.Second}
	a := httptest.NewServer(count(newHandler(misledFollower{newFakeBackend(Limits{}, false), &addrB}, &security{}, Limits{}, client)))
	defer a.Close()
	b := httptest.NewServer(count(newHandler(misledFollower{newFakeBackend(Limits{}, false), &addrA}, &security{}, Limits{}, client)))
	defer b.Close()
	addrA, addrB = strings.TrimPrefix(a.URL, "http://"), strings.TrimPrefix(b.URL, "http://")

	joiner := &http.Client{Timeout: 3 * time.Second}
	body := `{"id":"n3","raft":"127.0.0.1:7003","http":"127.0.0.1:8003"}`
	resp, err := joiner.Post(a.URL+"/join", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("join through a misled follower got no answer (%d hops so far): %v", hops.Load(), err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("join = %s %q; want 503 (retry once leadership settles)", resp.Status, msg)
	}
	if !strings.Contains(string(msg), "not the leader") {
		t.Fatalf("join error %q does not say the forwarded-to node was not the leader", msg)
	}
	if n := hops.Load(); n != 2 {
		t.Fatalf("the join made %d hops; want 2 (the follower asked, then the one it forwarded to)", n)
	}
}
